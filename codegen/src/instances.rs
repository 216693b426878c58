//! Positional instances (`instances` with `pos`): lowered to fields that carry
//! [`Field::at`], read eagerly by the type's reader and laid out by its writer.
//!
//! Kaitai Struct reads a positional instance lazily, the first time it is used, and caches
//! it. statepack's generated types are plain data (`serde`, `PartialEq`, no reader kept
//! inside), so the reader reads each positional instance once, eagerly: just before the first
//! `seq` field whose expressions use it (directly or through a value instance or another
//! positional instance), else after the last `seq` field. [`merge`] decides that order.

use crate::emit::{Emitter, Scope, Ty};
use crate::expr::Expr;
use crate::ir::{Field, FieldKind, Instance, Positional, Repeat};
use crate::lower::Lower;
use crate::names::temp_for;
use crate::yaml::{Key, Node, NodeKind};
use proc_macro2::TokenStream;
use quote::quote;
use std::collections::HashSet;

/// Lowers one positional instance `key: {pos: ..., type: ..., ...}` to a field, or reports
/// why it cannot be read.
pub(crate) fn lower_positional(
    lw: &mut Lower<'_>,
    key: &Key,
    node: &Node,
    entries: &[(Key, Node)],
    ip: &str,
) -> Option<Field> {
    let get = |name: &str| entries.iter().find(|(k, _)| k.text == name).map(|(_, v)| v);
    let Some(pos_node) = get("pos") else {
        lw.err(
            node.pos,
            ip,
            "a positional instance needs `pos`",
            "add `pos: <expression>` (the byte offset in the stream, from its start)",
        );
        return None;
    };
    let pos = lw.src_expr(pos_node, &format!("{ip}.pos"))?;
    let mut io_of = None;
    let whole = match get("io") {
        None => false,
        Some(io) => {
            let e = lw.src_expr(io, &format!("{ip}.io"))?;
            match &e.expr {
                Expr::Name(n) if n == "_io" => false,
                Expr::Attr(a, io)
                    if io == "_io" && matches!(&**a, Expr::Name(r) if r == "_root") =>
                {
                    true
                }
                // `io: value._io`: the substream of another value (see `crate::io_of`).
                Expr::Attr(a, io) if io == "_io" && crate::io_of::plain_value(a) => {
                    let src = a.to_string();
                    io_of = Some(crate::ir::SrcExpr {
                        expr: (**a).clone(),
                        src,
                        pos: e.pos,
                    });
                    false
                }
                _ => {
                    lw.err(
                        io.pos,
                        &format!("{ip}.io"),
                        format!("`io: {}` is not supported yet", e.src),
                        "positional instances read from `_io` (the type's own stream), `_root._io` (the whole input) or `value._io` (the substream of a user-type value read with a `size`)",
                    );
                    return None;
                }
            }
        }
    };
    // The instance reads like a `seq` entry with its name as `id` (without `pos` and `io`).
    let mut m: Vec<(Key, Node)> = vec![(
        Key {
            text: "id".into(),
            pos: key.pos,
        },
        Node {
            pos: key.pos,
            kind: NodeKind::Scalar {
                text: key.text.clone(),
                quoted: false,
            },
        },
    )];
    m.extend(
        entries
            .iter()
            .filter(|(k, _)| k.text != "pos" && k.text != "io" && k.text != "id")
            .cloned(),
    );
    let synthetic = Node {
        pos: node.pos,
        kind: NodeKind::Map(m),
    };
    let mut f = lw.field(&synthetic, ip)?;
    f.pos = key.pos;
    // An instance may hold the type it belongs to (a chain of positions): its member is a
    // `Box` so that the struct has a size.
    if matches!(f.kind, FieldKind::User { .. }) && matches!(f.repeat, Repeat::None) {
        f.boxed = true;
    }
    f.at = Some(Box::new(Positional { pos, whole, io_of }));
    Some(f)
}

/// Every name an expression uses (`a.b` gives `a`).
fn names(e: &Expr, out: &mut HashSet<String>) {
    let mut todo = vec![e];
    while let Some(e) = todo.pop() {
        match e {
            Expr::Name(n) => {
                out.insert(n.clone());
            }
            Expr::Cast(a, _) | Expr::Unary(_, a) | Expr::Attr(a, _) => todo.push(a),
            Expr::Index(a, b) | Expr::Binary(_, a, b) => {
                todo.push(a);
                todo.push(b);
            }
            Expr::Call(a, _, args) => {
                todo.push(a);
                todo.extend(args.iter());
            }
            Expr::List(items) => todo.extend(items.iter()),
            Expr::Ternary(c, a, b) => {
                todo.push(c);
                todo.push(a);
                todo.push(b);
            }
            Expr::Int(_)
            | Expr::Float(_)
            | Expr::Str(_)
            | Expr::Bool(_)
            | Expr::Null
            | Expr::EnumRef(..)
            | Expr::SizeOf(_) => {}
        }
    }
}

/// The names a field's expressions use, with the names used by the value instances they
/// name (followed transitively).
fn field_names(f: &Field, values: &[Instance]) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut g = f.clone();
    crate::resolve::for_each_expr(&mut g, &mut |e| names(e, &mut out));
    for a in &f.args {
        names(&a.expr, &mut out);
    }
    let mut seen = HashSet::new();
    loop {
        let more: Vec<&Instance> = values
            .iter()
            .filter(|i| out.contains(&i.id) && seen.insert(i.id.clone()))
            .collect();
        if more.is_empty() {
            break;
        }
        for i in more {
            names(&i.value.expr, &mut out);
            if let Some(c) = &i.cond {
                names(&c.expr, &mut out);
            }
        }
    }
    out
}

/// Every name the expressions of type `t` use (fields, instances, the arguments it gives the
/// types it reads).
pub(crate) fn type_names(t: &crate::ir::TypeDef) -> HashSet<String> {
    let mut out = HashSet::new();
    for f in &t.fields {
        out.extend(field_names(f, &t.instances));
        for (_, args) in &f.switch_args {
            for a in args {
                names(&a.expr, &mut out);
            }
        }
        for (_, args) in &f.ctx_args {
            for a in args.iter().flatten() {
                names(&a.expr, &mut out);
            }
        }
    }
    for i in &t.instances {
        names(&i.value.expr, &mut out);
        if let Some(c) = &i.cond {
            names(&c.expr, &mut out);
        }
    }
    out
}

/// The `seq` fields with the positional instances inserted where the reader reads them: each
/// before the first field (or other positional instance) that uses it, else at the end, in
/// document order otherwise.
pub(crate) fn merge(seq: Vec<Field>, positional: Vec<Field>, values: &[Instance]) -> Vec<Field> {
    if positional.is_empty() {
        return seq;
    }
    let seq_names: Vec<HashSet<String>> = seq.iter().map(|f| field_names(f, values)).collect();
    let pos_names: Vec<HashSet<String>> =
        positional.iter().map(|f| field_names(f, values)).collect();
    // The index of the seq field the instance must come before.
    let mut deadline: Vec<usize> = positional
        .iter()
        .map(|p| {
            seq_names
                .iter()
                .position(|n| n.contains(&p.id))
                .unwrap_or(seq.len())
        })
        .collect();
    // An instance used by another one is read no later than that one.
    for _ in 0..positional.len() {
        let mut changed = false;
        for (b, nb) in pos_names.iter().enumerate() {
            for (a, p) in positional.iter().enumerate() {
                if a != b && nb.contains(&p.id) && deadline[a] > deadline[b] {
                    deadline[a] = deadline[b];
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    // Within one deadline, an instance used by another comes first (document order
    // otherwise; a cycle keeps document order and is reported by the emitter's checks).
    let mut order: Vec<usize> = Vec::new();
    let mut placed = vec![false; positional.len()];
    fn visit(
        i: usize,
        positional: &[Field],
        pos_names: &[HashSet<String>],
        deadline: &[usize],
        placed: &mut [bool],
        stack: &mut Vec<usize>,
        order: &mut Vec<usize>,
    ) {
        if placed[i] || stack.contains(&i) {
            return;
        }
        stack.push(i);
        for (a, p) in positional.iter().enumerate() {
            if a != i && deadline[a] == deadline[i] && pos_names[i].contains(&p.id) {
                visit(a, positional, pos_names, deadline, placed, stack, order);
            }
        }
        stack.pop();
        placed[i] = true;
        order.push(i);
    }
    let mut stack = Vec::new();
    for i in 0..positional.len() {
        visit(
            i,
            &positional,
            &pos_names,
            &deadline,
            &mut placed,
            &mut stack,
            &mut order,
        );
    }
    let mut pos: Vec<Option<Field>> = positional.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(seq.len() + pos.len());
    for (k, f) in seq.into_iter().enumerate() {
        for &i in &order {
            if deadline[i] == k {
                if let Some(p) = pos[i].take() {
                    out.push(p);
                }
            }
        }
        out.push(f);
    }
    for &i in &order {
        if let Some(p) = pos[i].take() {
            out.push(p);
        }
    }
    out
}

/// True when `e` uses `_io` (then a positional instance's writer uses the position it was
/// read at, kept in the value).
pub(crate) fn uses_io(e: &Expr) -> bool {
    let mut n = HashSet::new();
    names(e, &mut n);
    n.contains("_io")
}

/// True when `e` uses `_io.eof` or `_io.size`, which are not known while writing (the stream
/// is not complete yet): the writer does not check such a condition, size or end of list;
/// the value decides.
pub(crate) fn uses_io_end(e: &Expr) -> bool {
    let mut todo = vec![e];
    while let Some(e) = todo.pop() {
        match e {
            Expr::Attr(a, attr)
                if matches!(&**a, Expr::Name(n) if n == "_io")
                    && (attr == "eof" || attr == "size") =>
            {
                return true
            }
            Expr::Cast(a, _) | Expr::Unary(_, a) | Expr::Attr(a, _) => todo.push(a),
            Expr::Index(a, b) | Expr::Binary(_, a, b) => {
                todo.push(a);
                todo.push(b);
            }
            Expr::Call(a, _, args) => {
                todo.push(a);
                todo.extend(args.iter());
            }
            Expr::List(items) => todo.extend(items.iter()),
            Expr::Ternary(c, a, b) => {
                todo.push(c);
                todo.push(a);
                todo.push(b);
            }
            _ => {}
        }
    }
    false
}

/// `_io.pos`, `_io.size`, `_io.eof` in a reader (`read`) or a writer (`write`; only `_io.pos`
/// has a value there: the bytes written since the start of the stream).
#[allow(clippy::type_complexity)]
pub(crate) fn io_attr(
    read: bool,
    write: bool,
    attr: &str,
) -> Result<(TokenStream, Ty), (String, String)> {
    Ok(match (read, write, attr) {
        (true, _, "pos") => (quote!(__r.io_pos()), Ty::Int),
        (true, _, "size") => (quote!(__r.io_size()), Ty::Int),
        (true, _, "eof") => (quote!(__r.is_eof()), Ty::Bool),
        (_, true, "pos") => (quote!(__w.io_pos()), Ty::Int),
        (_, true, "size" | "eof") => {
            return Err((
                format!("`_io.{attr}` is not known while writing"),
                "use `_io.{attr}` in `if`, `size`, `repeat-until` or a positional instance's `pos`, where the writer lets the value decide".replace("{attr}", attr),
            ))
        }
        // A value instance: the type's stream as it was when its `seq` had been read.
        (false, false, "pos") => (quote!(self.__io_end.0), Ty::Int),
        (false, false, "size") => (quote!(self.__io_end.1), Ty::Int),
        (false, false, "eof") => (quote!((self.__io_end.0 >= self.__io_end.1)), Ty::Bool),
        _ => {
            return Err((
                format!("`_io` has no member `{attr}`"),
                "`_io` has `pos`, `size` and `eof`".into(),
            ))
        }
    })
}

/// Wraps a positional instance's read: evaluate `pos`, move there, read, come back. Returns
/// the read expression and, when `pos` uses `_io`, the declaration, struct member and
/// constructor entry of the kept position (the writer puts the instance back there).
#[allow(clippy::type_complexity)]
pub(crate) fn emit_read(
    em: &mut Emitter<'_>,
    f: &Field,
    at: &Positional,
    scope: &Scope,
    read_value: TokenStream,
) -> Option<(TokenStream, Option<(TokenStream, TokenStream, TokenStream)>)> {
    let fid = f.id.as_str();
    if let Some(io) = &at.io_of {
        // Kaitai evaluates an instance's `pos`, `size`, `if` ... on the type's own `_io`
        // while reading from the other stream; the reader here has only the other stream at
        // hand, so `_io` there is refused rather than given another stream's values.
        let mut g = f.clone();
        let mut uses = false;
        crate::resolve::for_each_expr(&mut g, &mut |e| uses |= uses_io(e));
        if uses {
            em.err(
                f.pos,
                &f.key_path,
                format!(
                    "`_io` in an expression of an instance with `io: {}._io` is not supported yet",
                    io.src
                ),
                "give positions, sizes and conditions of such an instance as numbers or expressions of fields",
            );
            return None;
        }
        return crate::io_of::emit_read(em, f, at, io, scope, read_value).map(|r| (r, None));
    }
    let pos = em.expect_ty(&at.pos, scope, &format!("{}.pos", f.key_path), Ty::Int)?;
    let whole = at.whole;
    if uses_io(&at.pos.expr) {
        let kept = temp_for("pos", &f.id);
        let doc = format!(
            " Where `{}` was read (`pos: {}`, from the start of its stream): its writer puts it back there.",
            f.id, at.pos.src
        );
        let rv = quote! {{
            let __p: i128 = #pos;
            #kept = __p;
            let __saved = __r.enter_instance(__p, #whole).map_err(|e| e.in_field(#fid))?;
            __r.enter(::statepack_runtime::io::PathSeg::Field(#fid));
            let __pv = #read_value;
            __r.leave_instance(__saved);
            __pv
        }};
        Some((
            rv,
            Some((
                quote!(let mut #kept: i128 = 0;),
                quote! {
                    #[doc = #doc]
                    #[serde(default)]
                    pub #kept: i128
                },
                quote!(#kept),
            )),
        ))
    } else {
        Some((
            quote! {{
                let __p: i128 = #pos;
                let __saved = __r.enter_instance(__p, #whole).map_err(|e| e.in_field(#fid))?;
            __r.enter(::statepack_runtime::io::PathSeg::Field(#fid));
                let __pv = #read_value;
                __r.leave_instance(__saved);
                __pv
            }},
            None,
        ))
    }
}

/// Wraps a positional instance's write (`stmt`, as for a `seq` field): encode it on its own
/// and queue it for its position (`ByteWriter::instance_writer`, `ByteWriter::place`).
pub(crate) fn emit_write(
    em: &mut Emitter<'_>,
    f: &Field,
    at: &Positional,
    scope: &Scope,
    stmt: TokenStream,
) -> Option<TokenStream> {
    let fid = f.id.as_str();
    if let Some(io) = &at.io_of {
        return crate::io_of::emit_write(em, f, at, io, scope, stmt);
    }
    let whole = at.whole;
    let pos = if uses_io(&at.pos.expr) {
        let kept = temp_for("pos", &f.id);
        quote!(self.#kept)
    } else {
        em.expect_ty(&at.pos, scope, &format!("{}.pos", f.key_path), Ty::Int)?
    };
    let what = f.key_path.as_str();
    Some(quote! {
        {
            let __pos: i128 = #pos;
            let mut __tw = __w.instance_writer(__pos, #whole).map_err(|e| e.in_field(#fid))?;
            {
                let __w = &mut __tw;
                #stmt
            }
            __w.place(__tw, #what);
        }
    })
}

/// For a type whose value instances use `_io`: the reader's statement that keeps the stream's
/// position and size at the end of the type's `seq`, the struct member holding them and its
/// constructor entry.
pub(crate) fn io_end_member(
    t: &crate::ir::TypeDef,
    member_io: bool,
) -> Option<(TokenStream, TokenStream, TokenStream)> {
    let uses = member_io
        || t.instances
            .iter()
            .any(|i| uses_io(&i.value.expr) || i.cond.as_ref().is_some_and(|c| uses_io(&c.expr)));
    if !uses {
        return None;
    }
    Some((
        quote!(let __io_end: (i128, i128) = (__r.io_pos(), __r.io_size());),
        quote! {
            #[doc = " `_io.pos` and `_io.size` of this value's stream when its `seq` had been read, for"]
            #[doc = " the value instances that use `_io` (`_io.eof` is `pos >= size`)."]
            #[serde(default)]
            pub __io_end: (i128, i128)
        },
        quote!(__io_end),
    ))
}

/// True when an expression anywhere in the schema uses `value._io` (the stream of a user-type
/// value): every type then keeps `__io_end` (the type of `value` is known only while
/// emitting). The emitter computes it once per schema (`member_io`), for [`io_end_member`].
pub(crate) fn uses_member_io(s: &crate::ir::Schema) -> bool {
    fn has(e: &Expr) -> bool {
        let mut todo = vec![e];
        while let Some(e) = todo.pop() {
            match e {
                Expr::Attr(a, attr)
                    if attr == "_io" && !matches!(&**a, Expr::Name(n) if n == "_root") =>
                {
                    return true
                }
                Expr::Cast(a, _) | Expr::Unary(_, a) | Expr::Attr(a, _) => todo.push(a),
                Expr::Index(a, b) | Expr::Binary(_, a, b) => {
                    todo.push(a);
                    todo.push(b);
                }
                Expr::Call(a, _, args) => {
                    todo.push(a);
                    todo.extend(args.iter());
                }
                Expr::List(items) => todo.extend(items.iter()),
                Expr::Ternary(c, a, b) => {
                    todo.push(c);
                    todo.push(a);
                    todo.push(b);
                }
                _ => {}
            }
        }
        false
    }
    s.types.iter().any(|t| {
        let mut found = false;
        for f in &t.fields {
            let mut g = f.clone();
            crate::resolve::for_each_expr(&mut g, &mut |e| found |= has(e));
        }
        found
            || t.instances
                .iter()
                .any(|i| has(&i.value.expr) || i.cond.as_ref().is_some_and(|c| has(&c.expr)))
    })
}

/// `value._io.pos`, `.size`, `.eof` of a user-type value (`value` is its code): from the
/// value's `__io_end`.
pub(crate) fn member_io(value: TokenStream, attr: &str) -> (TokenStream, Ty) {
    match attr {
        "pos" => (quote!(#value.__io_end.0), Ty::Int),
        "size" => (quote!(#value.__io_end.1), Ty::Int),
        _ => (quote!((#value.__io_end.0 >= #value.__io_end.1)), Ty::Bool),
    }
}

/// True when a type has positional instances or uses `_io` in a field's expressions (its
/// writer then needs the start of its own stream).
pub(crate) fn type_uses_io(t: &crate::ir::TypeDef) -> bool {
    t.fields.iter().any(|f| {
        let mut found = f.at.is_some();
        let mut g = f.clone();
        crate::resolve::for_each_expr(&mut g, &mut |e| found |= uses_io(e));
        found
    })
}

/// The first positional instance of the whole input (`io: _root._io`) in type `name` or a
/// type it reads, as `(its key path, its position)`. Such an instance cannot be read inside
/// a field whose bytes are transformed first (`process`, or a terminated user type): the
/// reader of those bytes is a stream of its own, which does not reach the whole input.
pub(crate) fn whole_io_under<'s>(
    s: &'s crate::ir::Schema,
    name: &str,
    seen: &mut HashSet<String>,
) -> Option<(&'s str, crate::diag::Pos)> {
    if !seen.insert(name.to_owned()) {
        return None;
    }
    let t = s.type_def(name)?;
    for f in &t.fields {
        if f.at.as_ref().is_some_and(|a| a.whole) {
            return Some((&f.key_path, f.pos));
        }
    }
    for f in &t.fields {
        let found = match &f.kind {
            crate::ir::FieldKind::User { name, .. } => whole_io_under(s, name, seen),
            crate::ir::FieldKind::Switch { cases, default, .. } => cases
                .iter()
                .map(|(_, c)| c)
                .chain(default.iter())
                .find_map(|c| whole_io_under(s, c, seen)),
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}
