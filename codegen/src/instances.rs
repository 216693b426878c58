//! Positional instances (`instances` with `pos`): lowered to fields that carry
//! [`Field::at`], read by the type's reader (or on first use, see `crate::lazy`) and laid
//! out by its writer.
//!
//! Kaitai Struct reads a positional instance the first time it is used, and keeps it. An
//! instance that an expression uses is read by the type's reader, once: just before the first
//! `seq` field whose expressions use it (directly or through a value instance or another
//! positional instance), else after the last `seq` field. [`merge`] decides that order; the
//! instances no expression names are read on first use instead (`crate::lazy`).

use crate::expr::Expr;
use crate::ir::{Field, Instance};
use std::collections::HashSet;

/// True when `e` can name a value for `io: e._io`: a name followed by members, indexes and
/// casts (`_parent.blocks[0]`, `header.as<block>`), without `_io` in it.
pub(crate) fn plain_value(e: &Expr) -> bool {
    match e {
        Expr::Name(n) => n != "_io",
        Expr::Attr(a, m) => m != "_io" && plain_value(a),
        Expr::Index(a, i) => plain_value(a) && !matches!(&**i, Expr::Attr(..)),
        Expr::Cast(a, _) => plain_value(a),
        _ => false,
    }
}

/// Every name an expression uses (`a.b` gives `a`).
pub(crate) fn names(e: &Expr, out: &mut HashSet<String>) {
    visit(e, &mut |e| {
        if let Expr::Name(n) = e {
            out.insert(n.clone());
        }
    });
}

/// Calls `f` on `e` and on every expression inside it.
pub(crate) fn visit(e: &Expr, f: &mut impl FnMut(&Expr)) {
    let mut todo = vec![e];
    while let Some(e) = todo.pop() {
        f(e);
        match e {
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
            Expr::Name(_)
            | Expr::Int(_)
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
pub(crate) fn field_names(f: &Field, values: &[Instance]) -> HashSet<String> {
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

/// Whether `e` is exactly `_io.pos` (also what an instance without `pos` lowers to): a
/// position a writer knows, since it writes the instance where the reader read it.
pub(crate) fn is_stream_position(e: &Expr) -> bool {
    matches!(e, Expr::Attr(a, p) if p == "pos" && matches!(&**a, Expr::Name(n) if n == "_io"))
}

/// `k` when `e` is `_io.size - k` (a literal `k` ≥ 0): the last `k` bytes of the stream.
pub(crate) fn from_end(e: &Expr) -> Option<i128> {
    use crate::expr::BinOp;
    let Expr::Binary(BinOp::Sub, a, b) = e else {
        return None;
    };
    match (&**a, &**b) {
        (Expr::Attr(io, size), Expr::Int(k)) if size == "size" && *k >= 0 => {
            matches!(&**io, Expr::Name(n) if n == "_io").then_some(*k)
        }
        _ => None,
    }
}

/// The root type's trailer, `(name, k)`: its only positional instance at `pos: _io.size - k`
/// (without `io: value._io` or `if`), such as a ZIP archive's end-of-central-directory
/// record. The Rust writer puts it after everything else, where it ends the file.
pub(crate) fn trailer(s: &crate::ir::Schema) -> Option<(String, i128)> {
    let root = s.types.first()?;
    let mut found = root.fields.iter().filter_map(|f| {
        let at = f.at.as_ref()?;
        let k = from_end(&at.pos.expr)?;
        Some((f, at, k))
    });
    let (f, at, k) = found.next()?;
    if found.next().is_some() || at.io_of.is_some() || at.io_later.is_some() || f.cond.is_some() {
        return None;
    }
    Some((f.id.clone(), k))
}

/// Whether the reader keeps where it read positional instance `at` (member `__pos_<name>`),
/// for its writer to put it back there: its `pos` is computed from its own stream
/// (`_io.size - 8`), which is not complete while writing. Every backend follows this rule.
pub(crate) fn keeps_read_pos(at: &crate::ir::Positional) -> bool {
    at.io_of.is_none()
        && at.io_later.is_none()
        && uses_io(&at.pos.expr)
        && !is_stream_position(&at.pos.expr)
}

/// The names `e` uses (fields, params, instances, `_io`, `_parent`, `_root`, ...).
pub(crate) fn expr_names(e: &Expr) -> HashSet<String> {
    let mut n = HashSet::new();
    names(e, &mut n);
    n
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

/// True when a type keeps `_io.pos` and `_io.size` at the end of its `seq` (member
/// `__io_end`): its value instances use `_io`, or `member_io` (an expression anywhere in the
/// schema uses `value._io`, see [`uses_member_io`]).
pub(crate) fn keeps_io_end(t: &crate::ir::TypeDef, member_io: bool) -> bool {
    member_io
        || t.instances
            .iter()
            .any(|i| uses_io(&i.value.expr) || i.cond.as_ref().is_some_and(|c| uses_io(&c.expr)))
}

/// True when an expression anywhere in the schema uses `value._io` (the stream of a user-type
/// value): every type then keeps `__io_end` (the type of `value` is known only while
/// emitting). The emitter computes it once per schema (`member_io`), for [`keeps_io_end`].
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
            // Arguments (`type: t(first._io)`).
            let args = f
                .args
                .iter()
                .chain(f.switch_args.iter().flat_map(|(_, a)| a));
            found |= args.into_iter().any(|a| has(&a.expr));
        }
        found
            || t.instances
                .iter()
                .any(|i| has(&i.value.expr) || i.cond.as_ref().is_some_and(|c| has(&c.expr)))
    })
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

/// The first positional instance of the whole input (`io: _root._io`) in type `r` or a
/// type it reads, as `(its key path, its position)`. Such an instance cannot be read inside
/// a field whose bytes are transformed first (`process`, or a terminated user type): the
/// reader of those bytes is a stream of its own, which does not reach the whole input.
pub(crate) fn whole_io_under<'s>(
    s: &'s crate::ir::Schema,
    r: &crate::ir::TypeRef,
    seen: &mut HashSet<crate::ir::TypeId>,
) -> Option<(&'s str, crate::diag::Pos)> {
    let t = s.type_of(r)?;
    if !seen.insert(t.id) {
        return None;
    }
    for f in &t.fields {
        if f.at.as_ref().is_some_and(|a| a.whole) {
            return Some((&f.key_path, f.pos));
        }
    }
    for f in &t.fields {
        let found = match &f.kind {
            crate::ir::FieldKind::User { ty: name, .. } => whole_io_under(s, name, seen),
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
