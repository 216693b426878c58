//! Facts about the shape of the generated types that the checks and the emitters share:
//! which enums keep unknown integers, which types keep the bytes they leave unread, which
//! switches have a variant for "no case matched", which types always end on a byte boundary.
//! Each is computed from the IR alone.

use crate::ir::*;
use std::collections::{HashMap, HashSet};

/// The enums that keep unknown integers (used by a field without `-sp-strict`, or by a value
/// instance in a schema without `meta.-sp-strict`): they get the variant `Unlisted(i128)`.
pub(crate) fn open_enums(s: &Schema) -> HashSet<EnumId> {
    open_and_unread(s).0
}

/// The types read in a sized substream by a field without `-sp-strict`: they keep the bytes
/// they leave unread (member `__unread`) and write them back.
pub(crate) fn unread_types(s: &Schema) -> HashSet<TypeId> {
    open_and_unread(s).1
}

fn open_and_unread(s: &Schema) -> (HashSet<EnumId>, HashSet<TypeId>) {
    let mut open_enums = HashSet::new();
    let mut unread_types = HashSet::new();
    for t in &s.types {
        if !s.strict {
            open_enums.extend(
                t.instances
                    .iter()
                    .filter_map(|i| i.enum_name.as_ref().and_then(EnumRef::id)),
            );
        }
        for f in &t.fields {
            if f.strict {
                continue;
            }
            match &f.kind {
                FieldKind::Int {
                    enum_name: Some(e), ..
                }
                | FieldKind::Bits {
                    enum_name: Some(e), ..
                } => {
                    open_enums.extend(e.id());
                }
                FieldKind::User { ty: name, size } if size.is_some() || f.term.is_some() => {
                    unread_types.extend(name.id());
                }
                FieldKind::Switch {
                    cases,
                    default,
                    size: Some(_),
                    ..
                } => {
                    unread_types.extend(cases.iter().filter_map(|(_, n)| n.id()));
                    unread_types.extend(default.iter().filter_map(TypeRef::id));
                }
                _ => {}
            }
        }
    }
    // A type with `-sp-end-zeros` reads to the end of its stream and keeps nothing.
    for t in &s.types {
        if t.end_zeros.is_some() {
            unread_types.remove(&t.id);
        }
    }
    (open_enums, unread_types)
}

/// The switch field of `t` whose generated enum switch field `f` uses: the first switch field
/// of `t` whose enum would have the same variants (the same case types in the same order, the
/// same `NoCase` variant, the same boxed cases), else `f` itself. Such fields share one enum,
/// so that `c ? a : b` over them has one type (Kaitai Struct gives it their common type).
pub(crate) fn switch_enum_owner<'t>(t: &'t TypeDef, f: &'t Field) -> &'t Field {
    fn shape(g: &Field) -> Option<(Vec<&TypeRef>, Vec<bool>, bool, bool)> {
        let FieldKind::Switch {
            cases,
            default,
            size,
            ..
        } = &g.kind
        else {
            return None;
        };
        let mut variants: Vec<&TypeRef> = Vec::new();
        for n in cases.iter().map(|(_, n)| n).chain(default.iter()) {
            if !variants.contains(&n) {
                variants.push(n);
            }
        }
        let boxed: Vec<bool> = variants
            .iter()
            .map(|n| n.id().is_some_and(|i| g.recursive.contains(&i)))
            .collect();
        Some((variants, boxed, has_no_case(g), size.is_some()))
    }
    let Some(mine) = shape(f) else { return f };
    t.fields
        .iter()
        .find(|g| shape(g).as_ref() == Some(&mine))
        .unwrap_or(f)
}

/// A switch without `_` under Kaitai Struct's rules: a value no case names selects nothing
/// (the variant `NoCase`), where `-sp-strict` makes it a decode error.
pub(crate) fn has_no_case(f: &Field) -> bool {
    !f.strict && matches!(f.kind, FieldKind::Switch { default: None, .. })
}

/// Whether every value of type `name` starts and ends on a byte boundary when it starts on
/// one: always under statepack's strict rules (a type that may end inside a byte is refused
/// there); under Kaitai's, a type without bit fields and switches whose user-type fields are
/// themselves whole. Unknown names (other schemas, opaque types) and recursion are not.
/// The types that always end on a byte boundary: every field (positional instances aside)
/// is byte-aligned, and every user type among them is such a type. A type that reaches
/// itself is not one (its end is not known statically). Computed once per schema, each type
/// visited once, so the cost is linear in the schema.
pub(crate) fn whole_byte_types(s: &Schema) -> HashSet<TypeId> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Busy,
        Whole,
        NotWhole,
    }
    fn visit(s: &Schema, name: &TypeRef, marks: &mut HashMap<TypeId, Mark>) -> bool {
        let Some(t) = s.type_of(name) else {
            return false;
        };
        let name = t.id;
        match marks.get(&name) {
            Some(Mark::Whole) => return true,
            Some(Mark::NotWhole | Mark::Busy) => return false,
            None => {}
        }
        marks.insert(name, Mark::Busy);
        let ok = t
            .fields
            .iter()
            .filter(|f| f.at.is_none())
            .all(|f| match &f.kind {
                FieldKind::Bits { .. } | FieldKind::Switch { .. } => false,
                FieldKind::User { ty: name, .. } => visit(s, name, marks),
                _ => true,
            });
        // A type found not whole while one of its users was busy stays not whole; one on a
        // cycle is not whole from any entry, so the marks do not depend on the order.
        marks.insert(name, if ok { Mark::Whole } else { Mark::NotWhole });
        ok
    }
    let mut marks: HashMap<TypeId, Mark> = HashMap::new();
    for t in &s.types {
        visit(s, &TypeRef::Id(t.id), &mut marks);
    }
    marks
        .into_iter()
        .filter(|(_, m)| *m == Mark::Whole)
        .map(|(n, _)| n)
        .collect()
}
