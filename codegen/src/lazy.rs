//! Which positional instances are read on first use (`statepack_runtime::lazy::Lazy`, see
//! `emit::lazy`), what such a read captures, and the positional instances read early because
//! a path from a type read before them names them (`_root.x`, `_parent.x`), where Kaitai
//! Struct's lazy reader would read them.
//!
//! An analysis of the IR beside `instances` (the order instances are read in), using it,
//! `derive` (what the writer places or derives) and `context` (every expression of a type).

use crate::expr::Expr;
use crate::instances::{field_names, keeps_read_pos, names, uses_io, visit};
use crate::ir::{Field, TypeId};
use std::collections::HashSet;

/// Every name and every member name (`b` of `a.b`) the expressions of the schema use,
/// positions of positional instances included (`pos: descs[0].table_block * 1024` needs
/// `descs` read when it is read), except the bare names of a type's own positional
/// instances in its value instances (a value instance reads such an instance on first use,
/// see [`value_only`]).
pub(crate) fn schema_refs(s: &crate::ir::Schema) -> HashSet<String> {
    let mut out = HashSet::new();
    for t in &s.types {
        let positional: HashSet<&str> = t
            .fields
            .iter()
            .filter(|f| f.at.is_some())
            .map(|f| f.id.as_str())
            .collect();
        let mut copy = t.clone();
        for (e, kp) in crate::context::type_exprs(&mut copy) {
            let in_value = t.instances.iter().any(|i| {
                kp.strip_prefix(i.key_path.as_str())
                    .is_some_and(|rest| rest.starts_with('.'))
            });
            visit(&e.expr, &mut |x| match x {
                Expr::Name(n) if in_value && positional.contains(n.as_str()) => {}
                Expr::Name(n) | Expr::Attr(_, n) => {
                    out.insert(n.clone());
                }
                _ => {}
            });
        }
    }
    out
}

/// Whether positional instance `f` of `t`, which `refs` ([`schema_refs`]) does not name, is
/// named only by value instances that nothing names in turn (each value instance's method
/// then reads it on first use, through the `Lazy` member, and nothing reads it while the
/// type is read). A value instance naming it shows what it holds a second time, so where
/// its type leads back to `t` (a chain the data may make 64 deep, each level shown twice),
/// only the plain form is taken: `t` itself at a literal position, a chain that ends at the
/// runtime's limit of instances nested at one offset (`MAX_SAME_OFFSET`).
fn value_only(
    s: &crate::ir::Schema,
    t: &crate::ir::TypeDef,
    f: &Field,
    refs: &HashSet<String>,
) -> bool {
    let mut named = false;
    let alone = t.instances.iter().all(|i| {
        let mut used = HashSet::new();
        names(&i.value.expr, &mut used);
        if let Some(c) = &i.cond {
            names(&c.expr, &mut used);
        }
        named |= used.contains(&f.id);
        !used.contains(&f.id) || !refs.contains(&i.id)
    });
    if !alone {
        return false;
    }
    if !named {
        return true;
    }
    let literal =
        f.at.as_ref()
            .is_some_and(|at| matches!(at.pos.expr, Expr::Int(_)));
    let types = read_types(f);
    let back = types.iter().any(|n| *n != t.id && reaches(s, *n, t.id));
    !back && (literal || !types.contains(&t.id))
}

/// Whether reading type `from` reads type `to` (through fields and positional instances).
fn reaches(s: &crate::ir::Schema, from: TypeId, to: TypeId) -> bool {
    let mut seen = HashSet::from([from]);
    let mut todo = vec![from];
    while let Some(n) = todo.pop() {
        let t = s.ty(n);
        for f in &t.fields {
            for m in read_types(f) {
                if m == to {
                    return true;
                }
                if seen.insert(m) {
                    todo.push(m);
                }
            }
        }
    }
    false
}

/// The positional instances of `t` read on first use rather than by the type's reader
/// (members `statepack_runtime::lazy::Lazy<T>`, see `emit::lazy`): those that no expression
/// of the schema names but the value instances of `t` that nothing names (so no `seq`
/// field, other instance or `to-string` needs them while reading or describing a value; such
/// a value instance reads it on first use) and whose read keeps nothing beside the
/// value: not `-sp-lazy: false`, not `io: value._io`, not placed by the writer (`__pos_<name>` with the bytes
/// taken), no position kept for the writer (`pos` over `_io`), no terminator or stored bytes
/// kept (`process`, terminated types), not a count, size or sum the writer derives. The
/// others are read by the type's reader in the order [`merge`] gives.
pub(crate) fn lazy_instances(
    s: &crate::ir::Schema,
    t: &crate::ir::TypeDef,
    refs: &HashSet<String>,
) -> HashSet<String> {
    let placed = crate::derive::placed_instances(s, t);
    let derived = crate::derive::derived(s, t, &mut Vec::new());
    let targets: HashSet<&str> = derived
        .iter()
        .flat_map(|(k, d)| {
            let v = match d {
                crate::derive::Derived::Count(l)
                | crate::derive::Derived::Bytes(l)
                | crate::derive::Derived::Stored(l, _)
                | crate::derive::Derived::Sum(l, _) => l.as_str(),
            };
            [k.as_str(), v]
        })
        .collect();
    t.fields
        .iter()
        .filter(|f| {
            f.at.as_ref().is_some_and(|at| {
                // Read from a stream the root reads later: only on first use (see
                // `emit::io_later`), whatever else holds.
                at.lazy && at.io_later.is_some() && !refs.contains(&f.id)
                    || at.lazy
                        && at.io_of.is_none()
                        && !keeps_read_pos(at)
                        && !placed.contains_key(&f.id)
                        && f.term.is_none()
                        && f.process.is_none()
                        && !refs.contains(&f.id)
                        && value_only(s, t, f, refs)
                        && !targets.contains(f.id.as_str())
            })
        })
        .map(|f| f.id.clone())
        .collect()
}

/// The names of `t`'s fields and params that the read of field `f` uses (its expressions,
/// the value instances they name, its arguments): the values a lazy read captures.
pub(crate) fn read_captures(t: &crate::ir::TypeDef, f: &Field) -> Vec<String> {
    let mut used = field_names(f, &t.instances);
    for (_, args) in &f.switch_args {
        for a in args {
            names(&a.expr, &mut used);
        }
    }
    for (_, args) in &f.ctx_args {
        for a in args.iter().flatten() {
            names(&a.expr, &mut used);
        }
    }
    t.fields
        .iter()
        .filter(|g| g.id != f.id)
        .map(|g| &g.id)
        .chain(t.params.iter().map(|p| &p.id))
        .filter(|n| used.contains(*n))
        .cloned()
        .collect()
}

/// The user types of the schema field `f` reads (its type, or its switch's case types).
fn read_types(f: &Field) -> Vec<TypeId> {
    match &f.kind {
        crate::ir::FieldKind::User { ty: name, .. } => name.id().into_iter().collect(),
        crate::ir::FieldKind::Switch { cases, default, .. } => cases
            .iter()
            .map(|(_, c)| c)
            .chain(default.iter())
            .filter_map(crate::ir::TypeRef::id)
            .collect(),
        _ => Vec::new(),
    }
}

/// The members `m` that the expressions of type `t` reach as `<head>.m` (`head` is `_root`
/// or `_parent`).
fn path_members(t: &crate::ir::TypeDef, head: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut copy = t.clone();
    for (e, _) in crate::context::type_exprs(&mut copy) {
        visit(&e.expr, &mut |x| {
            if let Expr::Attr(a, m) = x {
                if matches!(&**a, Expr::Name(n) if n == head) {
                    out.insert(m.clone());
                }
            }
        });
    }
    out
}

/// Positional instances that other types name through `_root.x` or `_parent.x` are read
/// before the first field of their type that reads a type naming them (for `_root`, that
/// reads it directly or through the types it reads), where Kaitai Struct's lazy reader
/// would read them on that first use: provided the instance's own expressions use only
/// fields read before that field, and its position does not use `_io` (which would then be
/// another position). Otherwise the order stays, and the path is refused by
/// `crate::context` as a path to a field read later.
pub(crate) fn hoist_for_paths(s: &mut crate::ir::Schema) {
    let roots: Vec<HashSet<String>> = s.types.iter().map(|t| path_members(t, "_root")).collect();
    let parents: Vec<HashSet<String>> =
        s.types.iter().map(|t| path_members(t, "_parent")).collect();
    // The types each type reads, directly or not (itself included).
    let reach: Vec<HashSet<usize>> = (0..s.types.len())
        .map(|i| {
            let mut seen = HashSet::from([i]);
            let mut todo = vec![i];
            while let Some(k) = todo.pop() {
                for f in &s.types[k].fields {
                    for n in read_types(f) {
                        let j = n.0 as usize;
                        if seen.insert(j) {
                            todo.push(j);
                        }
                    }
                }
            }
            seen
        })
        .collect();
    for ti in 0..s.types.len() {
        let mut moves = Vec::new();
        let t = &s.types[ti];
        for (pi, p) in t.fields.iter().enumerate() {
            let Some(at) = &p.at else { continue };
            if uses_io(&at.pos.expr) || at.io_of.is_some() || at.io_later.is_some() {
                continue;
            }
            // The first field before `p` that reads a type naming `p` by such a path.
            let first = t.fields[..pi].iter().position(|f| {
                read_types(f).iter().map(|n| n.0 as usize).any(|j| {
                    parents[j].contains(&p.id)
                        || (ti == 0 && reach[j].iter().any(|&k| roots[k].contains(&p.id)))
                })
            });
            let Some(b) = first else { continue };
            let used = field_names(p, &t.instances);
            if t.fields[b..]
                .iter()
                .any(|g| g.id != p.id && used.contains(&g.id))
            {
                continue;
            }
            moves.push((p.id.clone(), t.fields[b].id.clone()));
        }
        // Each goes just before its reader, in document order among those before one field.
        let fields = &mut s.types[ti].fields;
        for (id, reader) in moves {
            let (Some(from), Some(_)) = (
                fields.iter().position(|f| f.id == id),
                fields.iter().position(|f| f.id == reader),
            ) else {
                continue;
            };
            let f = fields.remove(from);
            let to = fields.iter().position(|f| f.id == reader).unwrap_or(from);
            fields.insert(to, f);
        }
    }
}
