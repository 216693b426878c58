//! The last pass over an emitted module, before it is printed: makes the Rust read as a
//! person would write it, so that it compiles without rustc or clippy warnings in any crate,
//! and applies the [`Options`] that concern the module as a whole.
//!
//! The emitter builds expressions bottom-up and wraps every sub-expression in parentheses,
//! which is always correct but trips rustc's `unused_parens` and clippy's `double_parens`;
//! it casts integer literals to the type an expression is computed in (`4 as i128`), which
//! clippy's `unnecessary_cast` flags; validity checks of a range with one open end come out
//! as `true && x`, which `nonminimal_bool` flags. This pass removes exactly those, where the
//! meaning cannot change:
//!
//! - parentheses where Rust needs none whatever they hold: call and method arguments,
//!   conditions, `match` scrutinees, `let` initialisers, returned, assigned, indexing and
//!   closure-body values, array and struct-literal elements, block tails (unless the value
//!   would then start with a block-like expression), and parentheses inside parentheses;
//!   and around literals and paths anywhere except before a method call on a literal;
//! - `LIT as T` for an integer or float literal that fits `T`, which becomes `LIT_T`;
//! - `true && x`, `x && true`, `false || x`, `x || false`, which become `x`, and `!(a == b)`,
//!   which becomes `a != b` (the same for every type, floats included);
//! - `match x { _ => v }` with a path `x`, which becomes `{ let _ = x; v }`.
//!
//! Then the options: serde derives are pointed at the runtime's re-export
//! (`::statepack_runtime::serde`, with `#[serde(crate = ...)]`) or removed with every
//! `#[serde(...)]` attribute, extra derives are added, and the module's first items become
//! the compile-time checks of `statepack_runtime` (`require_interface!`, `require_serde!`,
//! `require_zlib!`).

use crate::options::Options;
use syn::punctuated::Punctuated;
use syn::visit_mut::{self, VisitMut};
use syn::{Attribute, Expr, Item, Lit, Path, Stmt, Token};

/// The generated-code interface of `statepack_runtime` this generator emits for
/// (`statepack_runtime::GENERATED_CODE_INTERFACE`); written into every module as
/// `require_interface!(N)`.
pub const RUNTIME_INTERFACE: u32 = 4;

/// The path generated serde derives go through.
const SERDE_PATH: &str = "::statepack_runtime::serde";

/// Tidies `file` in place and applies `opts` (see the module docs).
pub fn tidy(file: &mut syn::File, opts: &Options) {
    Exprs.visit_file_mut(file);
    let mut derives = Derives {
        opts,
        serde_used: false,
        zlib_used: false,
    };
    derives.visit_file_mut(file);
    for item in &mut file.items {
        allow_unused(item);
    }
    let n = RUNTIME_INTERFACE as usize;
    let n = proc_macro2::Literal::usize_unsuffixed(n);
    // Generated code names the runtime's `io` (readers, writers, errors) and `reflect` (the
    // dynamic view) through `__io` and `__rf`.
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

/// Allows, on an enum, variant names with a common part (`WalkTrack`, `RunTrack`): they are
/// the schema's (`clippy::enum_variant_names`). Nothing else is allowed item by item: a
/// module included with `include_schema!(mod name)` is marked `#[allow(dead_code)]` as a
/// whole (a binary uses part of a schema's API).
fn allow_unused(item: &mut Item) {
    if let Item::Enum(i) = item {
        i.attrs
            .push(syn::parse_quote!(#[allow(clippy::enum_variant_names)]));
    }
}

/// The expression rewrites.
struct Exprs;

/// Removes every layer of parentheses around `e`. With `cond`, stops at a value holding a
/// struct literal (which a condition needs parenthesised).
fn strip(e: &mut Expr, cond: bool) {
    while let Expr::Paren(p) = e {
        if !p.attrs.is_empty() || (cond && holds_struct_literal(&p.expr)) {
            return;
        }
        let inner = std::mem::replace(&mut *p.expr, Expr::Verbatim(Default::default()));
        *e = inner;
    }
}

/// As [`strip`], for a value in statement or block-tail position: keeps the parentheses
/// when the value would then start with a block-like expression (`(if a { 1 } else { 2 }) + 1`).
fn strip_tail(e: &mut Expr) {
    while let Expr::Paren(p) = e {
        if !p.attrs.is_empty() || (!block_like(&p.expr) && starts_block_like(&p.expr)) {
            return;
        }
        let inner = std::mem::replace(&mut *p.expr, Expr::Verbatim(Default::default()));
        *e = inner;
    }
}

fn block_like(e: &Expr) -> bool {
    matches!(
        e,
        Expr::If(_)
            | Expr::Match(_)
            | Expr::Block(_)
            | Expr::Loop(_)
            | Expr::While(_)
            | Expr::ForLoop(_)
            | Expr::Unsafe(_)
            | Expr::TryBlock(_)
            | Expr::Const(_)
    )
}

fn starts_block_like(e: &Expr) -> bool {
    match e {
        e if block_like(e) => true,
        Expr::Binary(b) => starts_block_like(&b.left),
        Expr::Cast(c) => starts_block_like(&c.expr),
        Expr::MethodCall(m) => starts_block_like(&m.receiver),
        Expr::Field(f) => starts_block_like(&f.base),
        Expr::Index(i) => starts_block_like(&i.expr),
        Expr::Try(t) => starts_block_like(&t.expr),
        Expr::Call(c) => starts_block_like(&c.func),
        Expr::Range(r) => r.start.as_deref().is_some_and(starts_block_like),
        Expr::Assign(a) => starts_block_like(&a.left),
        _ => false,
    }
}

fn holds_struct_literal(e: &Expr) -> bool {
    struct Find(bool);
    impl<'a> syn::visit::Visit<'a> for Find {
        fn visit_expr_struct(&mut self, _: &'a syn::ExprStruct) {
            self.0 = true;
        }
    }
    let mut f = Find(false);
    syn::visit::Visit::visit_expr(&mut f, e);
    f.0
}

/// `{ x }` with nothing else in the block, as a value: `x`.
fn unbrace(e: &mut Expr) {
    if let Expr::Block(b) = e {
        if b.attrs.is_empty() && b.label.is_none() && b.block.stmts.len() == 1 {
            if let Stmt::Expr(inner, None) = &b.block.stmts[0] {
                if !block_like(inner) {
                    *e = inner.clone();
                }
            }
        }
    }
}

/// An expression whose type is visibly an integer: a cast to an integer type or an
/// integer literal with an integer suffix (possibly parenthesised). Comparisons of integers
/// can be negated by flipping the operator; those of floats cannot (NaN).
fn int_typed(e: &Expr) -> bool {
    const INTS: [&str; 12] = [
        "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
    ];
    match e {
        Expr::Paren(p) => int_typed(&p.expr),
        Expr::Cast(c) => {
            matches!(&*c.ty, syn::Type::Path(tp) if tp.path.get_ident().is_some_and(|i| INTS.contains(&i.to_string().as_str())))
        }
        Expr::Lit(syn::ExprLit {
            lit: Lit::Int(i), ..
        }) => INTS.contains(&i.suffix()),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => int_typed(&u.expr),
        _ => false,
    }
}

/// A literal or a path, which parentheses never change.
fn atomic(e: &Expr) -> bool {
    matches!(e, Expr::Lit(_) | Expr::Path(_))
}

/// The literal `v` as a literal of type `ty` when it fits: `Some(v_ty)`.
fn suffixed(lit: &Lit, negative: bool, ty: &str) -> Option<Lit> {
    let span = proc_macro2::Span::call_site();
    match lit {
        Lit::Int(i) if i.suffix().is_empty() => {
            let v: u128 = i.base10_parse().ok()?;
            let fits = match ty {
                "u8" => !negative && v <= u8::MAX as u128,
                "u16" => !negative && v <= u16::MAX as u128,
                "u32" => !negative && v <= u32::MAX as u128,
                "u64" | "usize" => !negative && v <= u64::MAX as u128,
                "u128" => !negative,
                "i8" => v <= i8::MAX as u128 + negative as u128,
                "i16" => v <= i16::MAX as u128 + negative as u128,
                "i32" => v <= i32::MAX as u128 + negative as u128,
                "i64" | "isize" => v <= i64::MAX as u128 + negative as u128,
                "i128" => v <= i128::MAX as u128 + negative as u128,
                // Integers up to 2^24 (f32) or 2^53 (f64) are exact.
                "f32" => v <= 1 << 24,
                "f64" => v <= 1 << 53,
                _ => false,
            };
            if !fits {
                return None;
            }
            // `usize` and `isize` may be narrower than 64 bits on the target; leave those.
            if ty == "usize" || ty == "isize" {
                return None;
            }
            Some(Lit::Int(syn::LitInt::new(&format!("{v}_{ty}"), span)))
        }
        Lit::Float(f) if f.suffix().is_empty() && (ty == "f64") => Some(Lit::Float(
            syn::LitFloat::new(&format!("{}_{ty}", f.base10_digits()), span),
        )),
        _ => None,
    }
}

impl VisitMut for Exprs {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        visit_mut::visit_expr_mut(self, e);
        match e {
            Expr::Paren(p) if p.attrs.is_empty() && matches!(*p.expr, Expr::Paren(_)) => {
                strip(&mut p.expr, false);
            }
            Expr::Paren(p) if p.attrs.is_empty() && atomic(&p.expr) => {
                let inner = std::mem::replace(&mut *p.expr, Expr::Verbatim(Default::default()));
                *e = inner;
            }
            Expr::Cast(c) => {
                let ty = match &*c.ty {
                    syn::Type::Path(tp) if tp.qself.is_none() => {
                        tp.path.get_ident().map(|i| i.to_string())
                    }
                    _ => None,
                };
                if let Some(ty) = ty {
                    let (lit, neg) = match &*c.expr {
                        Expr::Lit(l) => (Some(&l.lit), false),
                        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match &*u.expr {
                            Expr::Lit(l) => (Some(&l.lit), true),
                            _ => (None, false),
                        },
                        _ => (None, false),
                    };
                    if let Some(new) = lit.and_then(|l| suffixed(l, neg, &ty)) {
                        let lit = Expr::Lit(syn::ExprLit {
                            attrs: vec![],
                            lit: new,
                        });
                        *e = if neg { syn::parse_quote!(-#lit) } else { lit };
                    }
                }
            }
            Expr::Binary(b) => {
                let is_bool = |x: &Expr, v: bool| matches!(x, Expr::Lit(syn::ExprLit { lit: Lit::Bool(l), .. }) if l.value == v);
                let keep = match b.op {
                    syn::BinOp::And(_) if is_bool(&b.left, true) => Some(&mut b.right),
                    syn::BinOp::And(_) if is_bool(&b.right, true) => Some(&mut b.left),
                    syn::BinOp::Or(_) if is_bool(&b.left, false) => Some(&mut b.right),
                    syn::BinOp::Or(_) if is_bool(&b.right, false) => Some(&mut b.left),
                    _ => None,
                };
                if let Some(k) = keep {
                    let inner = std::mem::replace(&mut **k, Expr::Verbatim(Default::default()));
                    *e = inner;
                }
            }
            // `*(&x)`: `x`.
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                if let Expr::Paren(p) = &mut *u.expr {
                    if let Expr::Reference(r) = &mut *p.expr {
                        if r.mutability.is_none() && p.attrs.is_empty() && r.attrs.is_empty() {
                            let inner =
                                std::mem::replace(&mut *r.expr, Expr::Verbatim(Default::default()));
                            *e = inner;
                        }
                    }
                }
            }
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => {
                strip(&mut u.expr, false);
                if let Expr::Binary(b) = &mut *u.expr {
                    let int = int_typed(&b.left) || int_typed(&b.right);
                    let negated = match b.op {
                        syn::BinOp::Eq(t) => Some(syn::BinOp::Ne(Token![!=](t.spans[0]))),
                        syn::BinOp::Lt(t) if int => Some(syn::BinOp::Ge(Token![>=](t.spans[0]))),
                        syn::BinOp::Le(t) if int => Some(syn::BinOp::Gt(Token![>](t.spans[0]))),
                        syn::BinOp::Gt(t) if int => Some(syn::BinOp::Le(Token![<=](t.spans[0]))),
                        syn::BinOp::Ge(t) if int => Some(syn::BinOp::Lt(Token![<](t.spans[0]))),
                        _ => None,
                    };
                    if let Some(op) = negated {
                        b.op = op;
                        let inner =
                            std::mem::replace(&mut *u.expr, Expr::Verbatim(Default::default()));
                        *e = inner;
                    } else {
                        // `!(x)` needs its parentheses unless `x` is atomic or postfix.
                        let inner =
                            std::mem::replace(&mut *u.expr, Expr::Verbatim(Default::default()));
                        u.expr = Box::new(match inner {
                            x @ (Expr::Lit(_)
                            | Expr::Path(_)
                            | Expr::Call(_)
                            | Expr::MethodCall(_)
                            | Expr::Field(_)
                            | Expr::Index(_)
                            | Expr::Macro(_)) => x,
                            x => Expr::Paren(syn::ExprParen {
                                attrs: vec![],
                                paren_token: Default::default(),
                                expr: Box::new(x),
                            }),
                        });
                    }
                }
            }
            Expr::Match(m)
                if m.arms.len() == 1
                    && m.arms[0].guard.is_none()
                    && matches!(m.arms[0].pat, syn::Pat::Wild(_))
                    && matches!(*m.expr, Expr::Path(_)) =>
            {
                let x = &m.expr;
                let body = &m.arms[0].body;
                *e = syn::parse_quote!({ let _ = #x; #body });
            }
            _ => {}
        }
        match e {
            Expr::Call(c) => c.args.iter_mut().for_each(|a| {
                strip(a, false);
                unbrace(a);
            }),
            Expr::MethodCall(m) => m.args.iter_mut().for_each(|a| {
                strip(a, false);
                unbrace(a);
            }),
            Expr::If(i) => strip(&mut i.cond, true),
            Expr::While(w) => strip(&mut w.cond, true),
            Expr::Match(m) => strip(&mut m.expr, true),
            Expr::Let(l) => strip(&mut l.expr, true),
            Expr::Return(r) => {
                if let Some(x) = r.expr.as_deref_mut() {
                    strip(x, false)
                }
            }
            Expr::Break(b) => {
                if let Some(x) = b.expr.as_deref_mut() {
                    strip(x, false)
                }
            }
            Expr::Assign(a) => strip(&mut a.right, false),
            Expr::Binary(b)
                if matches!(
                    b.op,
                    syn::BinOp::AddAssign(_)
                        | syn::BinOp::SubAssign(_)
                        | syn::BinOp::MulAssign(_)
                        | syn::BinOp::DivAssign(_)
                        | syn::BinOp::RemAssign(_)
                        | syn::BinOp::BitAndAssign(_)
                        | syn::BinOp::BitOrAssign(_)
                        | syn::BinOp::BitXorAssign(_)
                        | syn::BinOp::ShlAssign(_)
                        | syn::BinOp::ShrAssign(_)
                ) =>
            {
                strip(&mut b.right, false)
            }
            Expr::Index(i) => strip(&mut i.index, false),
            Expr::Closure(c) => strip(&mut c.body, false),
            Expr::Array(a) => a.elems.iter_mut().for_each(|x| strip(x, false)),
            Expr::Struct(s) => s.fields.iter_mut().for_each(|f| strip(&mut f.expr, false)),
            _ => {}
        }
    }

    /// The arguments of `format!`-like macros are expressions too (rustc lints them the same).
    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        const EXPR_MACROS: [&str; 10] = [
            "format",
            "write",
            "writeln",
            "print",
            "println",
            "eprint",
            "eprintln",
            "panic",
            "assert",
            "assert_eq",
        ];
        let Some(last) = m.path.segments.last() else {
            return;
        };
        if !EXPR_MACROS.contains(&last.ident.to_string().as_str()) {
            return;
        }
        let Ok(mut args) = m.parse_body_with(Punctuated::<Expr, Token![,]>::parse_terminated)
        else {
            return;
        };
        for a in args.iter_mut() {
            self.visit_expr_mut(a);
            strip(a, false);
        }
        m.tokens = quote::quote!(#args);
    }

    /// `=> (x as i128)`: a match arm's value needs no parentheses.
    fn visit_arm_mut(&mut self, a: &mut syn::Arm) {
        visit_mut::visit_arm_mut(self, a);
        strip(&mut a.body, false);
    }

    fn visit_local_mut(&mut self, l: &mut syn::Local) {
        visit_mut::visit_local_mut(self, l);
        if let Some(init) = &mut l.init {
            strip(&mut init.expr, false);
            unbrace(&mut init.expr);
        }
    }

    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        visit_mut::visit_block_mut(self, b);
        if let Some(Stmt::Expr(e, None)) = b.stmts.last_mut() {
            strip_tail(e);
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `expr` as it reads after the expression rewrites.
    fn tidied(expr: &str) -> String {
        let mut file: syn::File =
            syn::parse_str(&format!("fn f() {{ let _x = {expr}; }}")).unwrap();
        Exprs.visit_file_mut(&mut file);
        let Item::Fn(f) = &file.items[0] else {
            panic!()
        };
        let Stmt::Local(l) = &f.block.stmts[0] else {
            panic!()
        };
        let e = &l.init.as_ref().unwrap().expr;
        quote::quote!(#e).to_string()
    }

    #[test]
    fn literal_casts_become_suffixed_only_when_they_fit() {
        assert_eq!(tidied("(4 as i128)"), "4_i128");
        assert_eq!(tidied("(-5 as i128)"), "- 5_i128");
        assert_eq!(tidied("(-128 as i8)"), "- 128_i8");
        // Out of range: the cast (a wrap) stays.
        assert_eq!(tidied("300 as u8"), "300 as u8");
        assert_eq!(tidied("(-1 as u32)"), "- 1 as u32");
        // usize's width depends on the target.
        assert_eq!(tidied("7 as usize"), "7 as usize");
        assert_eq!(tidied("(2 as f64)"), "2_f64");
    }

    #[test]
    fn negations_flip_only_where_the_meaning_is_kept() {
        assert_eq!(tidied("!((a == b))"), "a != b");
        assert_eq!(tidied("!((x as i128) < 3_i128)"), "(x as i128) >= 3_i128");
        // Float comparisons are not flipped: !(x < y) is true for NaN, x >= y is not.
        assert_eq!(tidied("!((x as f64) < y)"), "! ((x as f64) < y)");
        assert_eq!(tidied("(true && (a > b))"), "a > b");
        assert_eq!(tidied("((a || false))"), "a");
    }

    #[test]
    fn parentheses_go_where_rust_needs_none() {
        assert_eq!(tidied("f((a + b), (c))"), "f (a + b , c)");
        assert_eq!(tidied("x.m(((a as i128)))"), "x . m (a as i128)");
        assert_eq!(tidied("((a + b) * c)"), "(a + b) * c");
        assert_eq!(tidied("g(((a + b) * c))"), "g ((a + b) * c)");
        assert_eq!(tidied("*(&v[i])"), "v [i]");
        assert_eq!(
            tidied("format!(\"{} {:?}\", (a as i128), (2 as i128).m((3 as i128)))"),
            "format ! (\"{} {:?}\" , a as i128 , 2_i128 . m (3_i128))"
        );
        // A block-like value keeps the parentheses it needs in a block tail.
        let mut file: syn::File =
            syn::parse_str("fn f() -> i32 { (if a { 1 } else { 2 }) + 1 }").unwrap();
        Exprs.visit_file_mut(&mut file);
        let f = &file.items[0];
        assert_eq!(
            quote::quote!(#f).to_string(),
            "fn f () -> i32 { (if a { 1 } else { 2 }) + 1 }"
        );
        let mut file: syn::File = syn::parse_str("fn f() -> i32 { (a + 1) }").unwrap();
        Exprs.visit_file_mut(&mut file);
        let f = &file.items[0];
        assert_eq!(quote::quote!(#f).to_string(), "fn f () -> i32 { a + 1 }");
    }
}
