//! Expressions of the checked IR compiled to Luau or Lua 5.1 source ([`Dialect`]), with the
//! kind of value each one gives. The operators follow the table "One semantics" of `docs/schema-language.md`;
//! where Luau's own operator differs (integer division and remainder by zero, bitwise
//! operators on integers wider than 32 bits, shifts, `.to_i` of a float), the generated code
//! calls a helper of the runtime module (`lua/luau/statepack.luau`, section "Expression
//! helpers") that keeps the rule. Numbers are doubles: integers are exact up to 2^53 (a
//! literal beyond is refused when the module is generated).

use crate::expr::{BinOp, Expr, UnOp};
use crate::ir::{FieldKind, ParamKind, Repeat, Schema, TypeDef};

/// The kind of a value in the generated Luau (what the dynamic view shows it as).
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// An integer (a double holding a whole number).
    Int,
    /// A float.
    Float,
    /// A condition.
    Bool,
    /// Text (a Luau string of UTF-8).
    Str,
    /// Raw bytes (a Luau string).
    Bytes,
    /// An enum value (its integer), of this enum (unique schema name).
    Enum(String),
    /// A value of one of these user types (one for a plain field, the cases of a switch).
    User(Vec<String>),
    /// A list of values of this kind.
    List(Box<Kind>),
    /// Anything else (a switch over numbers and types).
    Any,
}

impl Kind {
    fn is_num(&self) -> bool {
        matches!(self, Kind::Int | Kind::Float | Kind::Enum(_) | Kind::Any)
    }
}

/// The kind of one element of field `f` (before `repeat`).
pub fn elem_kind(s: &Schema, f: &crate::ir::Field) -> Kind {
    if f.varint {
        return Kind::Int;
    }
    match &f.kind {
        FieldKind::Int { enum_name, .. } => match enum_name {
            Some(e) => Kind::Enum(s.enum_name(e).to_owned()),
            None => Kind::Int,
        },
        FieldKind::Bits {
            width,
            offset_binary,
            enum_name,
            ..
        } => match enum_name {
            Some(e) => Kind::Enum(s.enum_name(e).to_owned()),
            None if *width == 1 && !offset_binary => Kind::Bool,
            None => Kind::Int,
        },
        FieldKind::Float { .. } => Kind::Float,
        FieldKind::Bytes(_) | FieldKind::Contents(_) => Kind::Bytes,
        FieldKind::Str { .. } => Kind::Str,
        FieldKind::User { ty: name, .. } => {
            if matches!(f.process, Some(crate::ir::Process::Zlib)) {
                Kind::Bytes
            } else {
                Kind::User(vec![s.type_name(name).to_owned()])
            }
        }
        FieldKind::Switch { cases, default, .. } => {
            let mut names: Vec<String> = cases
                .iter()
                .map(|(_, t)| t)
                .chain(default.iter())
                .map(|t| s.type_name(t).to_owned())
                .collect();
            names.dedup();
            if names.iter().all(|n| s.type_named(n).is_some()) {
                Kind::User(names)
            } else if names
                .iter()
                .all(|n| crate::sem::number_type(n).is_some_and(|t| !t.2))
            {
                Kind::Int
            } else if names
                .iter()
                .all(|n| crate::sem::number_type(n).is_some_and(|t| t.2))
            {
                Kind::Float
            } else {
                Kind::Any
            }
        }
    }
}

/// The kind of field `f` (a list when repeated).
pub fn field_kind(s: &Schema, f: &crate::ir::Field) -> Kind {
    let k = elem_kind(s, f);
    if matches!(f.repeat, Repeat::None) || f.varint {
        k
    } else {
        Kind::List(Box::new(k))
    }
}

/// The kind of a parameter.
pub fn param_kind(s: &Schema, k: &ParamKind) -> Kind {
    match k {
        ParamKind::Int => Kind::Int,
        ParamKind::Bool => Kind::Bool,
        ParamKind::Float => Kind::Float,
        ParamKind::Str => Kind::Str,
        ParamKind::Bytes => Kind::Bytes,
        ParamKind::Enum(e) => Kind::Enum(s.enum_name(e).to_owned()),
        ParamKind::User(t) => Kind::User(vec![s.type_name(t).to_owned()]),
        ParamKind::AnyUser(ts) => Kind::User(ts.iter().map(|t| s.ty(*t).name.clone()).collect()),
        ParamKind::Struct | ParamKind::Io => Kind::Any,
        ParamKind::List(k) => Kind::List(Box::new(param_kind(s, k))),
    }
}

/// The largest integer every double holds exactly, 2^53.
pub const EXACT: i128 = 1 << 53;

/// A Luau string literal of `bytes` (every byte outside printable ASCII escaped as `\ddd`).
pub fn lua_str(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for &b in bytes {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03}")),
        }
    }
    out.push('"');
    out
}

/// The Lua dialect an expression is written in: they differ in the conditional expression
/// (Luau's `if c then x else y`; in Lua 5.1 `((c) and {x} or {y})[1]`, which keeps a `nil`
/// or `false` result and evaluates one side only) and in Luau's `bit32` library, which Lua
/// 5.1 lacks (its runtime's `S.band` works by arithmetic).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// Roblox's Luau.
    #[default]
    Luau,
    /// Lua 5.1 (no bit operators, no `if` expression).
    Lua51,
}

impl Dialect {
    /// The conditional expression `c ? x : y`.
    pub fn ite(self, c: &str, x: &str, y: &str) -> String {
        match self {
            Dialect::Luau => format!("(if {c} then {x} else {y})"),
            Dialect::Lua51 => format!("((({c}) and {{{x}}} or {{{y}}})[1])"),
        }
    }
}

/// Where an expression is compiled: the type it belongs to and the names it may use.
pub struct Scope<'a> {
    /// The dialect written.
    pub dialect: Dialect,
    /// The schema.
    pub s: &'a Schema,
    /// The type whose fields, params and instances names mean.
    pub t: &'a TypeDef,
    /// The Luau expression of the value being read (`v`).
    pub this: &'a str,
    /// The kind of `_` (the element just read, the value being checked), if any.
    pub elem: Option<Kind>,
    /// The Luau expression of `_` (`e`).
    pub elem_var: &'a str,
    /// Luau expression for `_index`, if in a list.
    pub index: Option<&'a str>,
    /// Luau expression of the stream (`r`).
    pub io: &'a str,
    /// Luau expression of the type's first byte (for `_sizeof`), if known.
    pub start: Option<&'a str>,
    /// Instance names being inlined (against cycles).
    pub inlining: Vec<String>,
    /// Fields of `t` whose values are also in locals (name, local): used instead of
    /// `this.name`.
    pub field_locals: Vec<(String, String)>,
}

/// Lua's reserved words (a field with one of these names is indexed as `v["end"]`).
const KEYWORDS: [&str; 22] = [
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "if", "in", "local",
    "nil", "not", "or", "repeat", "return", "then", "true", "until", "while", "continue",
];

/// `base.name`, or `base["name"]` when `name` is a reserved word.
pub fn dot(base: &str, name: &str) -> String {
    if KEYWORDS.contains(&name) {
        format!("{base}[\"{name}\"]")
    } else {
        format!("{base}.{name}")
    }
}

/// Luau name of a parameter's local.
pub fn param_local(id: &str) -> String {
    format!("p_{id}")
}

type R<T> = Result<T, String>;

impl Scope<'_> {
    fn member(&self, t: &TypeDef, name: &str, base: &str) -> R<Option<(String, Kind)>> {
        if let Some(f) = t.fields.iter().find(|f| f.id == name) {
            return Ok(Some((dot(base, name), field_kind(self.s, f))));
        }
        if let Some(p) = t.params.iter().find(|p| p.id == name) {
            return Ok(Some((dot(base, name), param_kind(self.s, &p.kind))));
        }
        if let Some(i) = t.instances.iter().find(|i| i.id == name) {
            let k = instance_kind(self.s, t, i)?;
            return Ok(Some((dot(base, name), k)));
        }
        Ok(None)
    }

    /// Compiles `e`. Errors: a construct this backend does not express, named.
    pub fn compile(&mut self, e: &Expr) -> R<(String, Kind)> {
        Ok(match e {
            Expr::Int(i) => {
                if i.abs() > EXACT {
                    let lua = match self.dialect {
                        Dialect::Luau => "Luau",
                        Dialect::Lua51 => "Lua 5.1",
                    };
                    return Err(format!(
                        "integer literal {i} is beyond 2^53, which a {lua} number cannot hold exactly"
                    ));
                }
                (format!("{i}"), Kind::Int)
            }
            Expr::Float(f) => {
                if f.is_finite() {
                    (format!("{f:?}"), Kind::Float)
                } else if f.is_nan() {
                    ("(0/0)".into(), Kind::Float)
                } else if *f > 0.0 {
                    ("math.huge".into(), Kind::Float)
                } else {
                    ("(-math.huge)".into(), Kind::Float)
                }
            }
            Expr::Str(s) => (lua_str(s.as_bytes()), Kind::Str),
            Expr::Bool(b) => (b.to_string(), Kind::Bool),
            Expr::Null => return Err("`null` has no value here".into()),
            Expr::Name(n) => self.name(n)?,
            Expr::EnumRef(en, val) => {
                let d = self
                    .s
                    .enum_named(en)
                    .ok_or_else(|| format!("no enum `{en}`"))?;
                let v = d
                    .values
                    .iter()
                    .find(|v| v.name == *val)
                    .ok_or_else(|| format!("enum `{en}` has no value `{val}`"))?;
                if v.value.abs() > EXACT {
                    return Err(format!("enum value {en}::{val} is beyond 2^53"));
                }
                (format!("{}", v.value), Kind::Enum(en.clone()))
            }
            Expr::Unary(op, a) => {
                let (x, k) = self.compile(a)?;
                match op {
                    UnOp::Neg => (
                        format!("(-{x})"),
                        if k == Kind::Float { k } else { Kind::Int },
                    ),
                    UnOp::Not => (format!("(not {x})"), Kind::Bool),
                    UnOp::BitNot => (format!("(-{x} - 1)"), Kind::Int),
                }
            }
            Expr::Binary(op, a, b) => self.binary(*op, a, b)?,
            Expr::Ternary(c, a, b) => {
                let (c, _) = self.compile(c)?;
                let (x, ka) = self.compile(a)?;
                let (y, kb) = self.compile(b)?;
                let k = if ka == Kind::Float || kb == Kind::Float {
                    Kind::Float
                } else {
                    ka
                };
                (self.dialect.ite(&c, &x, &y), k)
            }
            Expr::Attr(a, name) => self.attr(a, name)?,
            Expr::Call(a, name, args) => {
                let (x, k) = self.compile(a)?;
                let mut xs = Vec::new();
                for arg in args {
                    xs.push(self.compile(arg)?.0);
                }
                match (name.as_str(), &k, xs.as_slice()) {
                    ("substring", Kind::Str, [from, to]) => {
                        (format!("S.substring({x}, {from}, {to})"), Kind::Str)
                    }
                    ("to_i", Kind::Str, [radix]) => {
                        (format!("S.strToInt({x}, {radix})"), Kind::Int)
                    }
                    ("to_s", Kind::Bytes, [_]) => {
                        let enc = match args.first() {
                            Some(Expr::Str(e)) => e.clone(),
                            _ => return Err("`.to_s` needs a literal encoding".into()),
                        };
                        let enc = crate::sem::canonical_encoding(&enc);
                        if !matches!(enc.as_str(), "UTF-8" | "ASCII") {
                            return Err(format!(
                                "`.to_s(\"{enc}\")`: this backend decodes UTF-8 and ASCII only"
                            ));
                        }
                        (
                            format!("S.decodeText({x}, {})", lua_str(enc.as_bytes())),
                            Kind::Str,
                        )
                    }
                    _ => {
                        return Err(format!(
                            "method `.{name}` on a {k:?} value is not supported by this backend"
                        ))
                    }
                }
            }
            Expr::Index(a, i) => {
                let (x, k) = self.compile(a)?;
                let (i, _) = self.compile(i)?;
                match k {
                    Kind::List(el) => (format!("S.at({x}, {i})"), *el),
                    Kind::Bytes => (format!("S.byteAt({x}, {i})"), Kind::Int),
                    _ => return Err(format!("indexing a {k:?} value")),
                }
            }
            Expr::List(items) => {
                let bytes: Option<Vec<u8>> = items
                    .iter()
                    .map(|x| match x {
                        Expr::Int(i) => u8::try_from(*i).ok(),
                        _ => None,
                    })
                    .collect();
                if let Some(b) = bytes {
                    (lua_str(&b), Kind::Bytes)
                } else {
                    let mut xs = Vec::new();
                    let mut kind = Kind::Any;
                    for it in items {
                        let (x, k) = self.compile(it)?;
                        kind = k;
                        xs.push(x);
                    }
                    (format!("{{{}}}", xs.join(", ")), Kind::List(Box::new(kind)))
                }
            }
            Expr::Cast(a, ty) => {
                let (x, k) = self.compile(a)?;
                if self.s.type_named(ty).is_some() {
                    (x, Kind::User(vec![ty.clone()]))
                } else if let (Kind::Any, Some(_)) = (&k, crate::sem::number_type(ty)) {
                    // The value may hold a table (a user-type case): no check is generated.
                    return Err(format!("cast `.as<{ty}>` of a switch that mixes number and other cases is not supported by this backend"));
                } else if let Some((_, _, float, _)) = crate::sem::number_type(ty) {
                    (x, if float { Kind::Float } else { Kind::Int })
                } else if ty == "bytes" && matches!(k, Kind::List(_)) {
                    (format!("S.listToBytes({x})"), Kind::Bytes)
                } else if ty == "bytes" || ty == "str" {
                    (x, if ty == "str" { Kind::Str } else { Kind::Bytes })
                } else {
                    let _ = k;
                    return Err(format!("cast `.as<{ty}>` is not supported by this backend"));
                }
            }
            Expr::SizeOf(ty) => {
                let bits = self
                    .s
                    .type_named(ty)
                    .and_then(|d| crate::sizes::type_bits(self.s, d.id, 0))
                    .ok_or_else(|| format!("`sizeof<{ty}>`: the type has no fixed size"))?;
                (format!("{}", bits / 8), Kind::Int)
            }
        })
    }

    fn name(&mut self, n: &str) -> R<(String, Kind)> {
        match n {
            "_" => {
                let k = self
                    .elem
                    .clone()
                    .ok_or_else(|| "`_` outside repeat-until or valid".to_string())?;
                return Ok((self.elem_var.to_owned(), k));
            }
            "_index" => {
                let i = self
                    .index
                    .ok_or_else(|| "`_index` outside a repeated field".to_string())?;
                return Ok((i.to_owned(), Kind::Int));
            }
            "_sizeof" => {
                let st = self
                    .start
                    .ok_or_else(|| "`_sizeof` is not known here".to_string())?;
                return Ok((format!("({}.pos - {st})", self.io), Kind::Int));
            }
            // The byte order decided by a `meta.endian` switch (a local of the reader).
            "__is_le" => return Ok((param_local(n), Kind::Bool)),
            "_io" | "_root" | "_parent" => {
                return Err(format!("`{n}` as a value is not supported by this backend"))
            }
            _ => {}
        }
        let t = self.t;
        if let Some(f) = t.fields.iter().find(|f| f.id == n) {
            if let Some((_, l)) = self.field_locals.iter().find(|(id, _)| id == n) {
                return Ok((l.clone(), field_kind(self.s, f)));
            }
            return Ok((dot(self.this, n), field_kind(self.s, f)));
        }
        if let Some(p) = t.params.iter().find(|p| p.id == n) {
            return Ok((param_local(n), param_kind(self.s, &p.kind)));
        }
        if let Some(i) = t.instances.iter().find(|i| i.id == n) {
            if self.inlining.iter().any(|x| x == n) || self.inlining.len() > 32 {
                return Err(format!("instance `{n}` refers to itself"));
            }
            self.inlining.push(n.to_owned());
            let (x, k) = self.compile(&i.value.expr)?;
            let x = match &i.cond {
                Some(c) => {
                    let (c, _) = self.compile(&c.expr)?;
                    self.dialect.ite(&c, &x, "nil")
                }
                None => x,
            };
            self.inlining.pop();
            let k = match &i.enum_name {
                Some(e) => Kind::Enum(self.s.enum_name(e).to_owned()),
                None => k,
            };
            return Ok((x, k));
        }
        Err(format!(
            "name `{n}` is not known in type `{}`",
            t.schema_name
        ))
    }

    fn attr(&mut self, a: &Expr, name: &str) -> R<(String, Kind)> {
        if matches!(a, Expr::Name(n) if n == "_io") {
            let io = self.io;
            return Ok(match name {
                "size" => (format!("({io}.limit - {io}.base)"), Kind::Int),
                "pos" => (format!("({io}.pos - {io}.base)"), Kind::Int),
                "eof" => (format!("S.isEof({io})"), Kind::Bool),
                _ => return Err(format!("`_io.{name}` is not supported by this backend")),
            });
        }
        let (x, k) = self.compile(a)?;
        Ok(match (name, &k) {
            ("to_i", Kind::Float) => (format!("S.toInt({x})"), Kind::Int),
            ("to_i", Kind::Bool) => (self.dialect.ite(&x, "1", "0"), Kind::Int),
            ("to_i", Kind::Str) => (format!("S.strToInt({x}, 10)"), Kind::Int),
            ("to_i", _) if k.is_num() => (x, Kind::Int),
            ("to_s", Kind::Int) => (format!("S.intToStr({x})"), Kind::Str),
            ("length", Kind::Str) => (format!("S.strLen({x})"), Kind::Int),
            ("size", Kind::List(_) | Kind::Bytes) | ("length", Kind::Bytes) => {
                (format!("#{x}"), Kind::Int)
            }
            ("reverse", Kind::Str) => (format!("S.strReverse({x})"), Kind::Str),
            ("first", Kind::List(el)) => (format!("S.at({x}, 0)"), (**el).clone()),
            ("last", Kind::List(el)) => (format!("S.at({x}, #{x} - 1)"), (**el).clone()),
            ("min", Kind::List(el)) => (format!("S.listMin({x})"), (**el).clone()),
            ("max", Kind::List(el)) => (format!("S.listMax({x})"), (**el).clone()),
            ("first", Kind::Bytes) => (format!("S.byteAt({x}, 0)"), Kind::Int),
            ("last", Kind::Bytes) => (format!("S.byteAt({x}, #{x} - 1)"), Kind::Int),
            ("min", Kind::Bytes) => (format!("S.bytesMin({x})"), Kind::Int),
            ("max", Kind::Bytes) => (format!("S.bytesMax({x})"), Kind::Int),
            ("_sizeof", Kind::User(_)) => (format!("{x}.__sizeof"), Kind::Int),
            (_, Kind::User(types)) => {
                let mut found = None;
                for tn in types {
                    let t = self
                        .s
                        .type_named(tn)
                        .ok_or_else(|| format!("no type `{tn}`"))?;
                    if let Some(m) = self.member(t, name, &x)? {
                        found = Some(m);
                        break;
                    }
                }
                found.ok_or_else(|| format!("no member `{name}` in {types:?}"))?
            }
            _ => {
                return Err(format!(
                    "`.{name}` on a {k:?} value is not supported by this backend"
                ))
            }
        })
    }

    fn binary(&mut self, op: BinOp, a: &Expr, b: &Expr) -> R<(String, Kind)> {
        let (x, ka) = self.compile(a)?;
        let (y, kb) = self.compile(b)?;
        let float = ka == Kind::Float || kb == Kind::Float;
        let bools = ka == Kind::Bool && kb == Kind::Bool;
        Ok(match op {
            BinOp::Or => (format!("({x} or {y})"), Kind::Bool),
            BinOp::And => (format!("({x} and {y})"), Kind::Bool),
            BinOp::Eq => (format!("({x} == {y})"), Kind::Bool),
            BinOp::Ne => (format!("({x} ~= {y})"), Kind::Bool),
            BinOp::Lt => (format!("({x} < {y})"), Kind::Bool),
            BinOp::Le => (format!("({x} <= {y})"), Kind::Bool),
            BinOp::Gt => (format!("({x} > {y})"), Kind::Bool),
            BinOp::Ge => (format!("({x} >= {y})"), Kind::Bool),
            BinOp::Add if matches!(ka, Kind::Str | Kind::Bytes) => (format!("({x} .. {y})"), ka),
            BinOp::Add | BinOp::Sub | BinOp::Mul => {
                let o = match op {
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    _ => "*",
                };
                (
                    format!("({x} {o} {y})"),
                    if float { Kind::Float } else { Kind::Int },
                )
            }
            BinOp::Div if float => (format!("({x} / {y})"), Kind::Float),
            BinOp::Div => (format!("S.idiv({x}, {y})"), Kind::Int),
            BinOp::Mod if float => (format!("S.fmod({x}, {y})"), Kind::Float),
            BinOp::Mod => (format!("S.imod({x}, {y})"), Kind::Int),
            BinOp::Shl => (format!("S.shl({x}, {y})"), Kind::Int),
            BinOp::Shr => (format!("S.shr({x}, {y})"), Kind::Int),
            BinOp::BitAnd if bools => (format!("({x} and {y})"), Kind::Bool),
            BinOp::BitOr if bools => (format!("({x} or {y})"), Kind::Bool),
            BinOp::BitXor if bools => (format!("({x} ~= {y})"), Kind::Bool),
            // With a mask of 0..2^32 (a literal), the low 32 bits decide: Luau's fast `bit32`.
            BinOp::BitAnd if self.dialect == Dialect::Luau && (is_mask(a) || is_mask(b)) => {
                (format!("bit32.band({x}, {y})"), Kind::Int)
            }
            BinOp::BitAnd => (format!("S.band({x}, {y})"), Kind::Int),
            BinOp::BitOr => (format!("S.bor({x}, {y})"), Kind::Int),
            BinOp::BitXor => (format!("S.bxor({x}, {y})"), Kind::Int),
        })
    }
}

/// An integer literal in 0..2^32: `x & m` is `bit32.band(x, m)` for every integer `x` a
/// double holds exactly (its low 32 bits, two's complement for a negative `x`).
fn is_mask(e: &Expr) -> bool {
    matches!(e, Expr::Int(m) if (0..(1i128 << 32)).contains(m))
}

/// The kind of instance `i` of type `t`.
pub fn instance_kind(s: &Schema, t: &TypeDef, i: &crate::ir::Instance) -> R<Kind> {
    if let Some(e) = &i.enum_name {
        return Ok(Kind::Enum(s.enum_name(e).to_owned()));
    }
    let mut sc = Scope {
        dialect: Dialect::Luau,
        s,
        t,
        this: "v",
        elem: None,
        elem_var: "e",
        index: None,
        io: "r",
        start: Some("__start"),
        inlining: vec![i.id.clone()],
        field_locals: Vec::new(),
    };
    Ok(sc.compile(&i.value.expr)?.1)
}
