//! The typing part of the check stage: every expression of a loaded schema typed once, in
//! the scope where it is evaluated, into a typed expression tree ([`TExpr`], each node with
//! its [`Ty`]), and every problem of an expression reported as a [`Diag`].
//!
//! Scopes follow the order in which a reader and a writer of a type see names: a `seq`
//! field's expressions see the params, the fields before it (on write also the field
//! itself and the counts and lengths the writer derives), `_index` in a repeated field and
//! `_` (the element) in `repeat-until` and `valid`; value instances and `to-string` see
//! every param and field. A name that is not in scope may be a value instance of the same
//! type: its expression is typed in place (a cycle is reported). `_parent`/`_root` paths
//! have been turned into params by `crate::context` already.
//!
//! What is reported, and in which order, is what the Rust backend reports for the same
//! schema: within one type the first problem of a field stops the type (later fields are
//! not typed), a problem of one value instance does not stop the next one. [`check`] runs
//! the check stage's name, reference and layout checks (`crate::check`) first, so a schema
//! that passes it can be given to every backend.
//!
//! Layout: this file holds the types and the stage's entry; `typer` types one expression;
//! `walk` walks the schema's types, fields and instances.

use crate::diag::{Diag, Pos};
use crate::expr::{BinOp, UnOp};
use crate::ir::{EnumId, ParamKind, Schema, SrcExpr, TypeId, TypeRef};
use std::collections::HashMap;

mod typer;
mod walk;

pub(crate) use typer::{field_ty, number_switch_ty};
pub(crate) use typer::{Scope as TypeScope, Typer};
pub(crate) use walk::unsized_readers;

/// The type of an expression, or of a field as expressions see it.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    /// Any integer (evaluated as `i128`).
    Int,
    /// Any float (evaluated as `f64`).
    Float,
    /// A condition.
    Bool,
    /// A string.
    Str,
    /// A byte array.
    Bytes,
    /// A value of this enum.
    Enum(EnumId),
    /// A list of values of the element type.
    List(Box<Ty>),
    /// A value of this user type: a type of the schema, or the name of an opaque type
    /// (`ks-opaque-types`, which no definition has).
    User(TypeRef),
    /// A value of one of these user types (sorted by name, at least one): an element of a
    /// list literal of user-type values (`[one, two]`), passed to a `struct[]` param.
    AnyUser(Vec<TypeRef>),
    /// The body of switch field `.1` (its index in the type's fields) of type `.0`.
    Switch(TypeId, usize),
    /// A conditional field (`if`) holding the given type: where it is used its absence is an
    /// error at run time.
    Opt(Box<Ty>),
    /// A stream (`_io`, `value._io`, an `io` param): its `pos`, `size` and `eof`
    /// (`statepack_runtime::positional::Stream`).
    Io,
    /// A user-type value of one of several user types (`c ? a : b` over values of two
    /// types, Kaitai Struct's common supertype of user types): only its `_io` can be used.
    AnyStruct,
}

/// How a type is named in diagnostics (`an integer`, `a \`kind\` value`, ...).
pub fn ty_name(s: &Schema, t: &Ty) -> String {
    match t {
        Ty::Int => "an integer".into(),
        Ty::Float => "a float".into(),
        Ty::Bool => "a condition".into(),
        Ty::Str => "a string".into(),
        Ty::Bytes => "bytes".into(),
        Ty::Enum(e) => format!("a `{}` value", s.enm(*e).name),
        Ty::List(_) => "a list".into(),
        Ty::User(u) => format!("a `{}`", s.type_name(u)),
        Ty::AnyUser(us) => format!(
            "one of `{}`",
            us.iter()
                .map(|u| s.type_name(u))
                .collect::<Vec<_>>()
                .join("`, `")
        ),
        Ty::Switch(..) => "a switch value".into(),
        Ty::Opt(_) => "a conditional field".into(),
        Ty::Io => "a stream".into(),
        Ty::AnyStruct => "a user-type value of one of several types".into(),
    }
}

/// The type in expressions of a param of kind `k` (not optional).
pub fn param_ty(k: &ParamKind) -> Ty {
    match k {
        ParamKind::Int => Ty::Int,
        ParamKind::Bool | ParamKind::Struct => Ty::Bool,
        ParamKind::Float => Ty::Float,
        ParamKind::Str => Ty::Str,
        ParamKind::Bytes => Ty::Bytes,
        // An enum param of an unknown enum has been reported by the check stage.
        ParamKind::Enum(e) => e.id().map_or(Ty::Int, Ty::Enum),
        ParamKind::User(t) => Ty::User(t.clone()),
        ParamKind::AnyUser(ts) => Ty::AnyUser(ts.iter().map(|t| TypeRef::Id(*t)).collect()),
        ParamKind::List(inner) => Ty::List(Box::new(param_ty(inner))),
        ParamKind::Io => Ty::Io,
    }
}

/// Where an expression is evaluated: what `_io` means there.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Side {
    /// While reading the type (`_io` is the stream being read).
    Read,
    /// While writing it (`_io.pos` is the writer's position; `_io.size` and `_io.eof` are
    /// not known).
    Write,
    /// In a value instance or `to-string`, over a value read before (`_io` is the type's
    /// stream as it was at the end of its `seq`).
    Value,
}

/// A typed expression: a node and its type.
#[derive(Debug, Clone, PartialEq)]
pub struct TExpr {
    /// The expression's type.
    pub ty: Ty,
    /// The expression.
    pub node: Node,
}

/// A node of the typed expression tree. Operands keep their own types: an integer operand
/// beside a float one is promoted to a float where it is evaluated.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// An integer literal.
    Int(i128),
    /// A float literal.
    Float(f64),
    /// `true` / `false`.
    Bool(bool),
    /// A string literal.
    Str(String),
    /// A byte-array literal (`[1, 2]`: every element an integer 0..=255).
    Bytes(Vec<u8>),
    /// A name in scope: a field, a param, `_` or `_index` (a field with `if` is typed as
    /// its value; its absence is an error where it is evaluated).
    Var(String),
    /// A value instance of the same type, typed in place: its value and its `if`.
    Instance {
        /// The instance's name.
        name: String,
        /// Its value (with `enum:` applied).
        value: Box<TExpr>,
        /// Its condition, if it has one.
        cond: Option<Box<TExpr>>,
    },
    /// A size known from the schema alone, in bytes (`_sizeof`, `x._sizeof`, `sizeof<t>`).
    Size(usize),
    /// A value of an enum.
    EnumValue {
        /// The enum.
        enum_id: EnumId,
        /// The value's name.
        value: String,
    },
    /// `_io.pos`, `_io.size` or `_io.eof` of the type's own stream.
    Io(String),
    /// `value._io.pos` (`size`, `eof`): the stream of a user-type value.
    MemberIo(Box<TExpr>, String),
    /// A stream as a value: `_io` of the type (`None`) or `value._io` of a user-type value.
    Stream(Option<Box<TExpr>>),
    /// A field (or a derived count or length) of a user-type value.
    Member {
        /// The value.
        of: Box<TExpr>,
        /// Its type.
        ty: TypeId,
        /// The field.
        field: String,
    },
    /// A value instance of a user-type value (its type's method).
    MemberInstance {
        /// The value.
        of: Box<TExpr>,
        /// Its type.
        ty: TypeId,
        /// The instance.
        instance: String,
    },
    /// A property or method of a number, string, bytes, list or enum value (`to_i`, `size`,
    /// `substring(a, b)`, ...).
    Method {
        /// The value.
        of: Box<TExpr>,
        /// The method.
        name: String,
        /// Its arguments.
        args: Vec<TExpr>,
    },
    /// `list[index]`.
    Index(Box<TExpr>, Box<TExpr>),
    /// A list literal.
    List(Vec<TExpr>),
    /// `value.as<target>`.
    Cast(Box<TExpr>, String),
    /// A unary operator.
    Unary(UnOp, Box<TExpr>),
    /// A binary operator.
    Binary(BinOp, Box<TExpr>, Box<TExpr>),
    /// `c ? a : b`.
    Ternary(Box<TExpr>, Box<TExpr>, Box<TExpr>),
    /// An optional context param, or the fallback when it is absent (the top of a recursive
    /// root type).
    OrSelf(String, Box<TExpr>),
    /// An integer seen as a value of an open enum (`enum:` on a value instance).
    AsEnum(Box<TExpr>, EnumId),
}

/// One typed expression of the schema: where it is and its tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Typed {
    /// The schema type it belongs to.
    pub ty: TypeId,
    /// Its key path in the schema (`seq[2].size`, `instances.x.value`).
    pub key_path: String,
    /// Where it is evaluated.
    pub side: Side,
    /// Where the expression is in the schema.
    pub pos: Pos,
    /// Its text (several expressions may start at one place: the arguments of a processor).
    pub src: String,
    /// The typed tree.
    pub expr: TExpr,
}

/// The index key of a typed expression: type, key path, side, line and column, text.
type Key = (TypeId, String, Side, (usize, usize), String);

/// Every expression of a schema, typed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TypedSchema {
    /// The typed expressions, type by type in schema order, in the order the reader and the
    /// writer of each type evaluate them.
    pub exprs: Vec<Typed>,
    /// `exprs` by type, key path, side, position and text (the first of each).
    index: HashMap<Key, usize>,
}

impl TypedSchema {
    /// The typed tree of the expression at `key_path` (`seq[2].size`, `instances.x.value`,
    /// as in diagnostics) of type `ty`, as evaluated on `side`; `None` when there is none (a
    /// key without an expression, or one the side does not evaluate).
    pub fn get(&self, ty: TypeId, key_path: &str, side: Side) -> Option<&TExpr> {
        self.exprs
            .iter()
            .find(|x| x.ty == ty && x.key_path == key_path && x.side == side)
            .map(|x| &x.expr)
    }

    /// The typed tree of expression `e` under `key_path` of type `ty`, as evaluated on
    /// `side` (one key path may hold several expressions: `valid` bounds, the arguments of a
    /// type or a processor, the keys of a switch).
    pub fn at(&self, ty: TypeId, key_path: &str, side: Side, e: &SrcExpr) -> Option<&TExpr> {
        let k = (
            ty,
            key_path.to_owned(),
            side,
            (e.pos.line, e.pos.col),
            e.src.clone(),
        );
        self.index.get(&k).map(|&i| &self.exprs[i].expr)
    }

    fn indexed(mut self) -> Self {
        for (i, x) in self.exprs.iter().enumerate() {
            let k = (
                x.ty,
                x.key_path.clone(),
                x.side,
                (x.pos.line, x.pos.col),
                x.src.clone(),
            );
            self.index.entry(k).or_insert(i);
        }
        self
    }
}

/// A schema that passed the check stage: the loaded schema and every expression of it
/// typed, what a backend that evaluates expressions (the interpreter) consumes. It reads as
/// the schema (`Deref`).
#[derive(Debug, Clone)]
pub struct Checked {
    /// The loaded schema.
    pub schema: Schema,
    /// Its expressions, typed.
    pub typed: TypedSchema,
}

impl std::ops::Deref for Checked {
    type Target = Schema;

    fn deref(&self) -> &Schema {
        &self.schema
    }
}

/// The whole check stage over a loaded schema: names and references, layout (with the build's
/// `opts`: custom processor and opaque type paths), then every expression typed. Returns the
/// typed expressions, or every problem found, sorted by position.
pub fn check(s: &Schema, opts: &crate::Options) -> Result<TypedSchema, Vec<Diag>> {
    check_with_lens(s, opts).map(|(typed, _)| typed)
}

/// As [`check`], also giving the minimum encoded length of every type in bytes (what the
/// layout check computes).
pub(crate) fn check_with_lens(
    s: &Schema,
    opts: &crate::Options,
) -> Result<(TypedSchema, HashMap<crate::ir::TypeId, usize>), Vec<Diag>> {
    let d = crate::check::names_and_refs(s);
    if !d.is_empty() {
        return Err(d);
    }
    let (lens, mut diags) = crate::check::layout(s, opts);
    let (typed, more) = walk::walk(s, opts);
    diags.extend(more);
    if diags.is_empty() {
        Ok((typed.indexed(), lens))
    } else {
        diags.sort_by_key(|x| x.pos);
        Err(diags)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stage's result for `yaml`; a refusal is also the Rust backend's, word for word.
    fn typed(yaml: &str) -> Result<TypedSchema, Vec<Diag>> {
        let s = crate::load_schema(yaml, "t.ksy").expect("the schema loads");
        let r = check(&s, &crate::Options::default());
        if let Err(d) = &r {
            let backend = crate::generate(yaml, "t.ksy").expect_err("the backend refuses it too");
            assert_eq!(crate::render(d), crate::render(&backend));
        }
        r
    }

    fn find<'a>(t: &'a TypedSchema, kp: &str, side: Side) -> &'a TExpr {
        t.get(TypeId(0), kp, side)
            .unwrap_or_else(|| panic!("no typed `{kp}` on {side:?} in {:#?}", t.exprs))
    }

    const SCHEMA: &str = "meta: {id: rec, endian: le}\nseq:\n  - id: n\n    type: u1\n  - id: body\n    size: n * 2\n  - id: flag\n    type: u1\n    if: n > 3\ninstances:\n  half:\n    value: n / 2.0\n  kind:\n    value: 'body.size > 0 ? \"some\" : \"none\"'\n";

    #[test]
    fn every_expression_is_typed_once_per_side_with_its_nodes() {
        let t = typed(SCHEMA).expect("no problem");
        let size = find(&t, "seq[1].size", Side::Read);
        assert_eq!(size.ty, Ty::Int);
        let Node::Binary(BinOp::Mul, a, b) = &size.node else {
            panic!("not a product: {size:?}")
        };
        assert_eq!((&a.ty, &a.node), (&Ty::Int, &Node::Var("n".into())));
        assert_eq!((&b.ty, &b.node), (&Ty::Int, &Node::Int(2)));
        // The writer checks the size of what it writes: the same expression, typed on write.
        assert_eq!(find(&t, "seq[1].size", Side::Write), size);
        assert_eq!(find(&t, "seq[2].if", Side::Read).ty, Ty::Bool);
        assert_eq!(find(&t, "instances.half.value", Side::Value).ty, Ty::Float);
        let kind = find(&t, "instances.kind.value", Side::Value);
        assert_eq!(kind.ty, Ty::Str);
        let Node::Ternary(c, ..) = &kind.node else {
            panic!("not a ternary: {kind:?}")
        };
        let Node::Binary(BinOp::Gt, len, _) = &c.node else {
            panic!("not a comparison: {c:?}")
        };
        assert!(matches!(&len.node, Node::Method { name, .. } if name == "size"));
        let per_key: Vec<_> = t
            .exprs
            .iter()
            .map(|x| (x.key_path.as_str(), x.side))
            .collect();
        let mut unique = per_key.clone();
        unique.dedup();
        assert_eq!(per_key, unique, "an expression typed twice on one side");
    }

    #[test]
    fn a_problem_is_reported_at_its_place_and_stops_the_type() {
        let bad = SCHEMA
            .replace("size: n * 2", "size: n == 2")
            .replace("if: n > 3", "if: n + 3");
        let d = typed(&bad).expect_err("refused");
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(
            d[0].message,
            "`n == 2` is a condition but an integer is needed here"
        );
        assert_eq!(d[0].key_path, "seq[1].size");
        assert_eq!((d[0].pos.line, d[0].pos.col), (6, 11));
    }

    #[test]
    fn write_side_names_and_value_instances_have_their_own_rules() {
        // `_io.size` is known while reading, not while writing: a `valid` rule using it is
        // refused on write.
        let io =
            "meta: {id: rec}\nseq:\n  - id: a\n    type: u1\n    valid:\n      max: _io.size\n";
        let d = typed(io).expect_err("refused");
        assert!(
            d[0].message
                .contains("`_io.size` is not known while writing"),
            "{d:?}"
        );
        // A value instance sees every field; a cycle of instances is named.
        let cyc = "meta: {id: rec}\nseq:\n  - id: a\n    type: u1\ninstances:\n  x:\n    value: y + a\n  y:\n    value: x\n";
        let d = typed(cyc).expect_err("refused");
        // Each instance is typed on its own: both report the cycle, from where they start.
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(
            d[0].message.ends_with("depends on itself (y -> x -> y)"),
            "{d:?}"
        );
        assert!(
            d[1].message.ends_with("depends on itself (x -> y -> x)"),
            "{d:?}"
        );
    }
}

/// Types `e`, an expression over a decoded value of `s`'s root type written outside the
/// schema (an assert of Kaitai Struct's test specs), into the typed tree that
/// [`crate::sem::eval_tree`] evaluates: the check stage's typer in the root type's value
/// scope (its params, fields and value instances; `_root` is the value itself), with what
/// such specs write besides schema expressions (see `Typer::assert_mode`): types and enums
/// named by their path from the schema id, `.as<t>` choosing a switch case, a switch value's
/// members, params and conditional instances as members, `[].as<bytes>`.
///
/// Errors: the typer's message for an expression it cannot type (an unknown name, a member
/// no type has, operands of the wrong types).
pub fn type_assert(s: &Schema, e: &crate::expr::Expr) -> Result<TExpr, String> {
    let open = crate::shape::open_enums(s);
    let root = s.types.first().ok_or("the schema has no types")?;
    let mut typer = Typer::new(s, &open, root);
    typer.assert_mode = true;
    let scope = typer
        .value_scope(root)
        .with("_root", Ty::User(TypeRef::Id(root.id)));
    typer.ty(e, &scope).map_err(|(m, _)| m)
}
