//! `io: _parent._io` on a positional instance: the stream of the type that holds the
//! instance's type.
//!
//! Generated types hold no back-pointers and no stream, so the parent's stream is found from
//! the schema instead: it is the instance's own stream `_io` when every field that reads the
//! type reads it in its own stream (no `size`, `size-eos`, `process` or terminator, and not a
//! positional instance with an `io` of its own): a type read that way shares its parent's
//! stream, as in Kaitai Struct. Otherwise it is the whole input when the parent's stream is
//! (the root type, or a type read only that way from types whose stream is the whole input).
//! The instance is then lowered as `io: _io` or `io: _root._io`, which every backend reads.
//! Any other parent stream (a parent read in a sized field of its own) is refused, naming the
//! instance.

use crate::diag::Diag;
use crate::expr::Expr;
use crate::ir::*;

/// The user types a field reads (its type, or each case type of a switch).
fn read_types(f: &Field) -> Vec<TypeId> {
    match &f.kind {
        FieldKind::User { ty, .. } => ty.id().into_iter().collect(),
        FieldKind::Switch { cases, default, .. } => cases
            .iter()
            .map(|(_, n)| n)
            .chain(default.iter())
            .filter_map(TypeRef::id)
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether `f` reads its type in the stream of the type holding `f` (no substream of its
/// own): no size, process or terminator, and not a positional instance with its own `io`.
fn shares_stream(f: &Field) -> bool {
    let sized = match &f.kind {
        FieldKind::User { size, .. } => size.is_some(),
        FieldKind::Switch { size, .. } => size.is_some(),
        _ => true,
    };
    let own_io =
        f.at.as_ref()
            .is_some_and(|a| a.whole || a.io_of.is_some() || a.io_later.is_some());
    !sized && f.process.is_none() && f.term.is_none() && !own_io
}

/// Per type: whether its stream is the whole input (greatest fixpoint: the root type and
/// the types read only in the stream of such a type, or by an `io: _root._io` instance).
fn whole_streams(s: &Schema, readers: &[Vec<(usize, usize)>]) -> Vec<bool> {
    let mut whole: Vec<bool> = (0..s.types.len())
        .map(|t| t == 0 || !readers[t].is_empty())
        .collect();
    loop {
        let mut changed = false;
        for t in 0..s.types.len() {
            if !whole[t] {
                continue;
            }
            let ok = readers[t].iter().all(|&(p, fi)| {
                let f = &s.types[p].fields[fi];
                f.at.as_ref().is_some_and(|a| a.whole) || (shares_stream(f) && whole[p])
            });
            if !ok {
                whole[t] = false;
                changed = true;
            }
        }
        if !changed {
            return whole;
        }
    }
}

/// Lowers every `io: _parent._io` to `io: _io` or `io: _root._io` (see the module docs).
/// Errors: the type has no reader, a reader sets `parent`, or the parent's stream is
/// neither the type's own nor the whole input.
pub fn lower(s: &mut Schema) -> Vec<Diag> {
    let mut diags = Vec::new();
    let is_parent = |f: &Field| {
        f.at.as_ref()
            .and_then(|a| a.io_of.as_ref())
            .is_some_and(|e| matches!(&e.expr, Expr::Name(n) if n == "_parent"))
    };
    if !s.types.iter().flat_map(|t| &t.fields).any(is_parent) {
        return diags;
    }
    let mut readers: Vec<Vec<(usize, usize)>> = vec![Vec::new(); s.types.len()];
    for (p, t) in s.types.iter().enumerate() {
        for (fi, f) in t.fields.iter().enumerate() {
            for c in read_types(f) {
                let c = c.0 as usize;
                if !readers[c].contains(&(p, fi)) {
                    readers[c].push((p, fi));
                }
            }
        }
    }
    let whole = whole_streams(s, &readers);
    for ti in 0..s.types.len() {
        for fi in 0..s.types[ti].fields.len() {
            if !is_parent(&s.types[ti].fields[fi]) {
                continue;
            }
            let rs = &readers[ti];
            let plain = rs
                .iter()
                .all(|&(p, g)| matches!(s.types[p].fields[g].parent, ParentSpec::Default));
            let same = rs.iter().all(|&(p, g)| {
                let f = &s.types[p].fields[g];
                shares_stream(f) || (f.at.as_ref().is_some_and(|a| a.whole) && whole[p])
            });
            let all_whole = rs.iter().all(|&(p, _)| whole[p]);
            let found = if rs.is_empty() || !plain {
                None
            } else if same {
                Some(false)
            } else if all_whole {
                Some(true)
            } else {
                None
            };
            let file = s.types[ti].file.clone();
            let f = &mut s.types[ti].fields[fi];
            match (found, f.at.as_mut()) {
                (Some(w), Some(at)) => {
                    at.io_of = None;
                    at.whole = w;
                }
                _ => {
                    let why = if rs.is_empty() {
                        "no field reads the type, so it has no `_parent`".to_owned()
                    } else if !plain {
                        "a field reading the type sets `parent`".to_owned()
                    } else {
                        "a field reads the type in a stream of its own (`size`, `process`, a terminator or an `io`) from a parent that is itself read in a substream".to_owned()
                    };
                    diags.push(Diag::new(
                        &file,
                        f.pos,
                        &format!("{}.io", f.key_path),
                        format!("`io: _parent._io` is not supported here: {why}"),
                        "statepack reads `_parent._io` where it is the type's own stream (every reader reads the type without a size) or the whole input (the parent is read in the input's stream); else name the stream of a value (`io: _parent.x._io`)",
                    ));
                }
            }
        }
    }
    diags
}
