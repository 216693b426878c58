//! Code for numbers whose byte order a `meta.endian` switch decides (see `crate::endian`):
//! the decision at the start of `read_from` and `write_to`, and number reads and writes that
//! follow it.

use super::{group, read_method, write_method, Emitter, Scope, Ty};
use crate::endian::IS_LE;
use crate::expr::{BinOp, Expr};
use crate::ir::*;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// Reads one number at `__r` (`Result<_, DecodeError>`): with a fixed byte order one reader
/// call, with [`Endian::Computed`] the call of the order in `__is_le`.
pub(super) fn num_read(bytes: u8, signed: bool, float: bool, endian: Endian) -> TokenStream {
    if endian == Endian::Computed && bytes > 1 {
        let le = read_method(bytes, signed, float, Endian::Le);
        let be = read_method(bytes, signed, float, Endian::Be);
        let flag = format_ident!("{IS_LE}");
        group(quote!(if #flag { __r.#le() } else { __r.#be() }))
    } else {
        let m = read_method(bytes, signed, float, endian);
        quote!(__r.#m())
    }
}

/// Writes number `v` at `__w`, in the byte order as for [`num_read`].
pub(super) fn num_write(
    bytes: u8,
    signed: bool,
    float: bool,
    endian: Endian,
    v: TokenStream,
) -> TokenStream {
    if endian == Endian::Computed && bytes > 1 {
        let le = write_method(bytes, signed, float, Endian::Le);
        let be = write_method(bytes, signed, float, Endian::Be);
        let flag = format_ident!("{IS_LE}");
        group(quote!(if #flag { __w.#le(#v) } else { __w.#be(#v) }))
    } else {
        let m = write_method(bytes, signed, float, endian);
        quote!(__w.#m(#v))
    }
}

impl Emitter<'_> {
    /// For a type whose `meta.endian` is a switch: the statements deciding `__is_le` at the
    /// start of `read_from` and of `write_to`, each with its scope's values (params and
    /// context params only: nothing of the type is read yet). `None` when an expression is
    /// wrong (reported).
    pub(super) fn endian_decide(
        &mut self,
        sw: &EndianSwitch,
        rscope: &Scope,
        wscope: &Scope,
    ) -> Option<(TokenStream, TokenStream)> {
        let flag = format_ident!("{IS_LE}");
        let kp = format!("{}.switch-on", sw.key_path);
        let saved = self.cur_field.replace(None);
        let mut out = Vec::new();
        for scope in [rscope, wscope] {
            let (on_ts, _) = self.expr(&sw.on, scope, &kp)?;
            let mut arms = Vec::new();
            for (key, order) in &sw.cases {
                let test = SrcExpr {
                    expr: Expr::Binary(
                        BinOp::Eq,
                        Box::new(sw.on.expr.clone()),
                        Box::new(key.expr.clone()),
                    ),
                    src: format!("{} == {}", sw.on.src, key.src),
                    pos: key.pos,
                };
                let (ts, ty) = self.expr(&test, scope, &format!("{}.cases", sw.key_path))?;
                if ty != Ty::Bool {
                    self.err(
                        key.pos,
                        &format!("{}.cases.{}", sw.key_path, key.src),
                        format!(
                            "case key `{}` cannot be compared with the switch value",
                            key.src
                        ),
                        "give keys of the switch value's type",
                    );
                    return None;
                }
                let le = *order == Endian::Le;
                arms.push(quote!(if #ts { ::std::option::Option::Some(#le) }));
            }
            let what = format!(
                "undecided byte order: `meta.endian` switch-on `{}` is {{:?}}, which no case names",
                sw.on.src
            );
            let chosen = quote! {
                let __order: ::std::option::Option<bool> = #(#arms else)* { ::std::option::Option::None };
            };
            out.push(match (sw.default, scope.ctx) {
                (Some(order), _) => {
                    let le = order == Endian::Le;
                    quote!(#chosen let #flag: bool = __order.unwrap_or(#le);)
                }
                (None, super::Ctx::Read) => quote! {
                    #chosen
                    let #flag: bool = match __order {
                        ::std::option::Option::Some(__o) => __o,
                        ::std::option::Option::None => return Err(__io::DecodeError::new(__r.offset(), __io::DecodeErrorKind::Semantic(format!(#what, #on_ts)))),
                    };
                },
                (None, _) => quote! {
                    #chosen
                    let #flag: bool = match __order {
                        ::std::option::Option::Some(__o) => __o,
                        ::std::option::Option::None => return Err(__io::EncodeError::new(__io::EncodeErrorKind::Semantic(format!(#what, #on_ts)))),
                    };
                },
            });
        }
        self.cur_field.replace(saved);
        let w = out.pop()?;
        let r = out.pop()?;
        Some((r, w))
    }
}
