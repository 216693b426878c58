//! The generated Rust is written clean by the emitter, with no pass repairing it afterwards:
//! every checked-in module (`generated/`, kept equal to the generator's output by
//! `generated_fresh.rs`, and `codegen/tests/run/`, by `run.rs`) is read back with syn and
//! holds none of what rustc or clippy would warn about in a user's crate, nor what a person
//! would not write:
//!
//! - parentheses where Rust needs none whatever they hold: around a literal, a path, a call
//!   or a member; inside parentheses; around an argument (also of `format!`), a condition, a
//!   `match` scrutinee, a `let` initialiser, a returned value, an array element, a member of
//!   a struct literal, an index or a `match` arm's value (`unused_parens`, `double_parens`);
//! - a literal cast to a type (`4 as i128`: `unnecessary_cast`), where the literal is typed
//!   at its source (`4_i128`);
//! - `true && x`, `x || false` and the like (`nonminimal_bool`), and `!(a == b)`;
//! - `*&x` (`deref_addrof`), `match x { _ => v }` (`match_single_binding`), and a block of
//!   one value as a `let` initialiser or an argument (`{ x }`).

use std::path::{Path, PathBuf};
use syn::visit::{self, Visit};
use syn::{Expr, Lit, Stmt};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `*.rs` file of `dir` (relative to the repository root), with its text.
fn modules(dir: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(root().join(dir))
        .unwrap_or_else(|e| panic!("cannot read {dir}/: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().and_then(|x| x.to_str()) == Some("rs"))
        .map(|p| {
            let name = format!("{dir}/{}", p.file_name().unwrap().to_string_lossy());
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

/// What is found unclean, with where.
struct Finder<'a> {
    file: &'a str,
    found: Vec<String>,
}

fn shown(e: &impl quote::ToTokens) -> String {
    let text = quote::quote!(#e).to_string();
    text.chars().take(120).collect()
}

fn is_paren(e: &Expr) -> bool {
    matches!(e, Expr::Paren(p) if p.attrs.is_empty())
}

/// A struct literal inside, which a condition needs parenthesised.
fn holds_struct_literal(e: &Expr) -> bool {
    struct Find(bool);
    impl<'a> Visit<'a> for Find {
        fn visit_expr_struct(&mut self, _: &'a syn::ExprStruct) {
            self.0 = true;
        }
    }
    let mut f = Find(false);
    f.visit_expr(e);
    f.0
}

fn is_literal(e: &Expr) -> bool {
    match e {
        Expr::Lit(l) => matches!(l.lit, Lit::Int(_) | Lit::Float(_)),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => is_literal(&u.expr),
        _ => false,
    }
}

fn is_bool(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Lit(syn::ExprLit {
            lit: Lit::Bool(_),
            ..
        })
    )
}

/// A block holding one value and nothing else.
/// `(|| { ... })` whose body has no `?` and no `return`: calling it at once adds nothing
/// (clippy's `redundant_closure_call`).
fn catches_nothing(func: &Expr) -> bool {
    struct Exits(bool);
    impl<'a> Visit<'a> for Exits {
        fn visit_expr(&mut self, e: &'a Expr) {
            if matches!(e, Expr::Try(_) | Expr::Return(_)) {
                self.0 = true;
            }
            visit::visit_expr(self, e);
        }
        // A macro's arguments are tokens to syn; a `?` among them is one all the same.
        fn visit_macro(&mut self, m: &'a syn::Macro) {
            fn has_try(ts: proc_macro2::TokenStream) -> bool {
                ts.into_iter().any(|t| match t {
                    proc_macro2::TokenTree::Punct(p) => p.as_char() == '?',
                    proc_macro2::TokenTree::Group(g) => has_try(g.stream()),
                    _ => false,
                })
            }
            if has_try(m.tokens.clone()) {
                self.0 = true;
            }
        }
    }
    let mut inner = func;
    while let Expr::Paren(p) = inner {
        inner = &p.expr;
    }
    let Expr::Closure(c) = inner else {
        return false;
    };
    let mut x = Exits(false);
    x.visit_expr(&c.body);
    !x.0
}

fn lone_value_block(e: &Expr) -> bool {
    matches!(e, Expr::Block(b) if b.attrs.is_empty() && b.label.is_none()
        && matches!(b.block.stmts.as_slice(), [Stmt::Expr(_, None)]))
}

impl Finder<'_> {
    fn bad(&mut self, what: &str, e: &impl quote::ToTokens) {
        self.found
            .push(format!("{}: {what}: `{}`", self.file, shown(e)));
    }

    /// `e` in a place where Rust needs no parentheses around any value.
    fn bare(&mut self, e: &Expr, place: &str) {
        if is_paren(e) {
            self.bad(&format!("parentheses around {place}"), e);
        }
    }
}

impl<'a> Visit<'a> for Finder<'_> {
    fn visit_expr(&mut self, e: &'a Expr) {
        match e {
            Expr::Paren(p) => {
                if is_paren(&p.expr) {
                    self.bad("parentheses inside parentheses", e);
                }
                if matches!(
                    &*p.expr,
                    Expr::Lit(_)
                        | Expr::Path(_)
                        | Expr::Call(_)
                        | Expr::MethodCall(_)
                        | Expr::Field(_)
                        | Expr::Macro(_)
                ) {
                    self.bad("parentheses around a literal, path, call or member", e);
                }
            }
            Expr::Cast(c) if is_literal(&c.expr) => self.bad("a literal cast", e),
            Expr::Binary(b)
                if matches!(b.op, syn::BinOp::And(_) | syn::BinOp::Or(_))
                    && (is_bool(&b.left) || is_bool(&b.right)) =>
            {
                self.bad("a condition with a constant side", e)
            }
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => {
                if let Expr::Paren(p) = &*u.expr {
                    if matches!(&*p.expr, Expr::Binary(b) if matches!(b.op, syn::BinOp::Eq(_))) {
                        self.bad("`!(a == b)`", e);
                    }
                }
            }
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                let mut inner = &*u.expr;
                while let Expr::Paren(p) = inner {
                    inner = &p.expr;
                }
                if matches!(inner, Expr::Reference(r) if r.mutability.is_none()) {
                    self.bad("`*&x`", e);
                }
            }
            Expr::Match(m)
                if m.arms.len() == 1
                    && m.arms[0].guard.is_none()
                    && matches!(m.arms[0].pat, syn::Pat::Wild(_)) =>
            {
                self.bad("a match of one `_` arm", e)
            }
            Expr::Call(c) => {
                if catches_nothing(&c.func) {
                    self.bad(
                        "a closure called where it is written, with no `?` inside",
                        e,
                    );
                }
                for a in &c.args {
                    self.bare(a, "an argument");
                    if lone_value_block(a) {
                        self.bad("a block of one value as an argument", a);
                    }
                }
            }
            Expr::MethodCall(m) => {
                for a in &m.args {
                    self.bare(a, "an argument");
                    if lone_value_block(a) {
                        self.bad("a block of one value as an argument", a);
                    }
                }
            }
            Expr::If(i) if !holds_struct_literal(&i.cond) => self.bare(&i.cond, "a condition"),
            Expr::While(w) if !holds_struct_literal(&w.cond) => self.bare(&w.cond, "a condition"),
            Expr::Match(m) if !holds_struct_literal(&m.expr) => {
                self.bare(&m.expr, "a match scrutinee")
            }
            Expr::Return(r) => {
                if let Some(x) = &r.expr {
                    self.bare(x, "a returned value")
                }
            }
            Expr::Assign(a) => self.bare(&a.right, "an assigned value"),
            Expr::Index(i) => self.bare(&i.index, "an index"),
            Expr::Array(a) => a.elems.iter().for_each(|x| self.bare(x, "an element")),
            Expr::Struct(s) => s
                .fields
                .iter()
                .for_each(|f| self.bare(&f.expr, "a member value")),
            _ => {}
        }
        visit::visit_expr(self, e);
    }

    fn visit_arm(&mut self, a: &'a syn::Arm) {
        self.bare(&a.body, "a match arm's value");
        visit::visit_arm(self, a);
    }

    fn visit_local(&mut self, l: &'a syn::Local) {
        if let Some(init) = &l.init {
            self.bare(&init.expr, "a `let` initialiser");
            if lone_value_block(&init.expr) {
                self.bad("a block of one value as a `let` initialiser", &init.expr);
            }
        }
        visit::visit_local(self, l);
    }

    /// The arguments of `format!`-like macros are expressions too (rustc lints them the same).
    fn visit_macro(&mut self, m: &'a syn::Macro) {
        let name = m.path.segments.last().map(|s| s.ident.to_string());
        if !matches!(
            name.as_deref(),
            Some("format" | "write" | "writeln" | "panic" | "println" | "eprintln")
        ) {
            return;
        }
        let args = m
            .parse_body_with(syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated)
            .unwrap_or_else(|e| panic!("{}: `{}`: {e}", self.file, shown(m)));
        for a in &args {
            self.bare(a, "a macro argument");
            self.visit_expr(a);
        }
    }
}

#[test]
fn generated_code_is_written_clean() {
    let mut found = Vec::new();
    let mut count = 0;
    for dir in ["generated", "codegen/tests/run"] {
        for (name, text) in modules(dir) {
            let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut f = Finder {
                file: &name,
                found: Vec::new(),
            };
            f.visit_file(&file);
            found.extend(f.found);
            count += 1;
        }
    }
    assert!(count > 20, "only {count} generated modules found");
    assert!(
        found.is_empty(),
        "{} unclean expressions, first ones:\n{}",
        found.len(),
        found[..found.len().min(20)].join("\n")
    );
}

/// The finder finds what it looks for (so that the test above can fail).
#[test]
fn the_finder_finds_each_form() {
    let text = r#"
        fn f() {
            let a = (x);
            let b = 4 as i128;
            let c = true && y;
            let d = !(p == q);
            let e = *&v[0];
            let g = match z { _ => 1 };
            let h = { w };
            g(((a + b)), (c));
            let s = format!("{}", (k + 1));
            let t = (|| -> Result<u8, ()> { Ok(1) })();
        }
    "#;
    let file = syn::parse_file(text).unwrap();
    let mut f = Finder {
        file: "sample",
        found: Vec::new(),
    };
    f.visit_file(&file);
    let all = f.found.join("\n");
    for what in [
        "parentheses around a `let` initialiser",
        "a literal cast",
        "a condition with a constant side",
        "`!(a == b)`",
        "`*&x`",
        "a match of one `_` arm",
        "a block of one value as a `let` initialiser",
        "parentheses inside parentheses",
        "parentheses around an argument",
        "parentheses around a macro argument",
        "a closure called where it is written, with no `?` inside",
    ] {
        assert!(all.contains(what), "{what} not found in:\n{all}");
    }
    // What needs its parentheses passes.
    let text = "fn f() { let a = (b + c) * d; let e = (x as i128) < y; if (m & 1) != 0 {} \
                let t = (|| -> Result<u8, ()> { Ok(g()?) })(); }";
    let mut f = Finder {
        file: "needed",
        found: Vec::new(),
    };
    f.visit_file(&syn::parse_file(text).unwrap());
    assert!(f.found.is_empty(), "{:?}", f.found);
}
