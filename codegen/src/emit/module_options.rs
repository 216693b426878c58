//! The module-wide [`Options`] of an emitted module, applied once it is emitted: the
//! derives of every type (serde's through the runtime's re-export, with
//! `#[serde(crate = ...)]`, or none and no `#[serde(...)]` attribute; the extra derives
//! asked for), and the module's first items: the compile-time checks of
//! `statepack_runtime` (`require_interface!`, `require_serde!` where serde is derived,
//! `require_zlib!` where `process: zlib` is used) and the aliases `__io` and `__rf` the
//! generated code names the runtime's `io` and `reflect` by.

use crate::options::Options;
use syn::punctuated::Punctuated;
use syn::visit_mut::{self, VisitMut};
use syn::{Attribute, Item, Path, Token};

/// The generated-code interface of `statepack_runtime` this generator emits for
/// (`statepack_runtime::GENERATED_CODE_INTERFACE`); written into every module as
/// `require_interface!(N)`.
pub const RUNTIME_INTERFACE: u32 = 5;

/// The path generated serde derives go through.
const SERDE_PATH: &str = "::statepack_runtime::serde";

/// Applies `opts` to the emitted module `file` (see the module docs).
pub(crate) fn apply(file: &mut syn::File, opts: &Options) {
    let mut derives = Derives {
        opts,
        serde_used: false,
        zlib_used: false,
    };
    derives.visit_file_mut(file);
    let n = RUNTIME_INTERFACE as usize;
    let n = proc_macro2::Literal::usize_unsuffixed(n);
    let mut prelude: Vec<Item> = vec![
        syn::parse_quote!(::statepack_runtime::require_interface!(#n);),
        syn::parse_quote!(
            use ::statepack_runtime::io as __io;
        ),
        syn::parse_quote!(
            use ::statepack_runtime::reflect as __rf;
        ),
    ];
    if derives.serde_used {
        // Also names the runtime's serde `__serde`, which the derives name (one line each).
        prelude.push(syn::parse_quote!(::statepack_runtime::require_serde!();));
    }
    if derives.zlib_used {
        prelude.push(syn::parse_quote!(::statepack_runtime::require_zlib!();));
    }
    file.items.splice(0..0, prelude);
}

/// The derive and serde-attribute rewrites, and which runtime features the module needs.
struct Derives<'o> {
    opts: &'o Options,
    serde_used: bool,
    zlib_used: bool,
}

fn is_serde_attr(a: &Attribute) -> bool {
    a.path().is_ident("serde")
}

fn is_serde_path(p: &Path) -> bool {
    let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
    segs.len() >= 2
        && segs[segs.len() - 2] == "serde"
        && matches!(segs[segs.len() - 1].as_str(), "Serialize" | "Deserialize")
}

impl Derives<'_> {
    /// Rewrites one type's attributes; returns whether it derives serde's traits (after).
    fn type_attrs(&mut self, attrs: &mut Vec<Attribute>) -> bool {
        let mut serde = false;
        let mut out = Vec::with_capacity(attrs.len() + 1);
        for a in attrs.drain(..) {
            if a.path().is_ident("derive") {
                let Ok(list) = a.parse_args_with(Punctuated::<Path, Token![,]>::parse_terminated)
                else {
                    out.push(a);
                    continue;
                };
                let mut paths: Vec<Path> = Vec::new();
                for p in list {
                    if is_serde_path(&p) {
                        if self.opts.serde {
                            let last = &p.segments.last().expect("two segments").ident;
                            paths.push(syn::parse_quote!(__serde::#last));
                            serde = true;
                        }
                    } else {
                        paths.push(p);
                    }
                }
                for d in &self.opts.derives {
                    // Every generated type has `Default` already (derived, or implemented
                    // where a derive cannot say which value).
                    if d == "Default" || d.ends_with("::Default") {
                        continue;
                    }
                    if let Ok(p) = syn::parse_str::<Path>(d) {
                        if !paths.iter().any(|q| q == &p) {
                            paths.push(p);
                        }
                    }
                }
                if !paths.is_empty() {
                    out.push(syn::parse_quote!(#[derive(#(#paths),*)]));
                }
                if serde {
                    out.push(syn::parse_quote!(#[serde(crate = #SERDE_PATH)]));
                }
            } else if is_serde_attr(&a) && !self.opts.serde {
                continue;
            } else {
                out.push(a);
            }
        }
        *attrs = out;
        self.serde_used |= serde;
        serde
    }

    fn member_attrs(&self, attrs: &mut Vec<Attribute>) {
        if !self.opts.serde {
            attrs.retain(|a| !is_serde_attr(a));
        }
    }
}

impl VisitMut for Derives<'_> {
    fn visit_item_struct_mut(&mut self, s: &mut syn::ItemStruct) {
        self.type_attrs(&mut s.attrs);
        for f in s.fields.iter_mut() {
            self.member_attrs(&mut f.attrs);
        }
        visit_mut::visit_item_struct_mut(self, s);
    }

    fn visit_item_enum_mut(&mut self, en: &mut syn::ItemEnum) {
        self.type_attrs(&mut en.attrs);
        for v in en.variants.iter_mut() {
            self.member_attrs(&mut v.attrs);
            for f in v.fields.iter_mut() {
                self.member_attrs(&mut f.attrs);
            }
        }
        visit_mut::visit_item_enum_mut(self, en);
    }

    fn visit_path_mut(&mut self, p: &mut Path) {
        let n = p.segments.len();
        if n >= 2 && p.segments[n - 2].ident == "Processor" && p.segments[n - 1].ident == "Zlib" {
            self.zlib_used = true;
        }
        visit_mut::visit_path_mut(self, p);
    }
}
