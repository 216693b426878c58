//! Facts about the shape of the generated types that the checks and the emitters share:
//! which enums keep unknown integers, which types keep the bytes they leave unread, which
//! switches have a variant for "no case matched", which types always end on a byte boundary.
//! Each is computed from the IR alone.

use crate::ir::*;
use std::collections::{HashMap, HashSet};

/// The enums that keep unknown integers (used by a field without `-sp-strict`, or by a value
/// instance in a schema without `meta.-sp-strict`): they get the variant `Unlisted(i128)`.
pub(crate) fn open_enums(s: &Schema) -> HashSet<String> {
    open_and_unread(s).0
}

/// The types read in a sized substream by a field without `-sp-strict`: they keep the bytes
/// they leave unread (member `__unread`) and write them back.
pub(crate) fn unread_types(s: &Schema) -> HashSet<String> {
    open_and_unread(s).1
}

fn open_and_unread(s: &Schema) -> (HashSet<String>, HashSet<String>) {
    let mut open_enums = HashSet::new();
    let mut unread_types = HashSet::new();
    for t in &s.types {
        if !s.strict {
            open_enums.extend(t.instances.iter().filter_map(|i| i.enum_name.clone()));
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
                    open_enums.insert(e.clone());
                }
                FieldKind::User { name, size } if size.is_some() || f.term.is_some() => {
                    unread_types.insert(name.clone());
                }
                FieldKind::Switch {
                    cases,
                    default,
                    size: Some(_),
                    ..
                } => {
                    unread_types.extend(cases.iter().map(|(_, n)| n.clone()));
                    unread_types.extend(default.iter().cloned());
                }
                _ => {}
            }
        }
    }
    // A type with `-sp-end-zeros` reads to the end of its stream and keeps nothing.
    for t in &s.types {
        if t.end_zeros.is_some() {
            unread_types.remove(&t.name);
        }
    }
    (open_enums, unread_types)
}

/// The switch field of `t` whose generated enum switch field `f` uses: the first switch field
/// of `t` whose enum would have the same variants (the same case types in the same order, the
/// same `NoCase` variant, the same boxed cases), else `f` itself. Such fields share one enum,
/// so that `c ? a : b` over them has one type (Kaitai Struct gives it their common type).
pub(crate) fn switch_enum_owner<'t>(t: &'t TypeDef, f: &'t Field) -> &'t Field {
    fn shape(g: &Field) -> Option<(Vec<&String>, Vec<bool>, bool, bool)> {
        let FieldKind::Switch {
            cases,
            default,
            size,
            ..
        } = &g.kind
        else {
            return None;
        };
        let mut variants: Vec<&String> = Vec::new();
        for n in cases.iter().map(|(_, n)| n).chain(default.iter()) {
            if !variants.contains(&n) {
                variants.push(n);
            }
        }
        let boxed: Vec<bool> = variants.iter().map(|n| g.recursive.contains(*n)).collect();
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
pub(crate) fn whole_byte_types(s: &Schema) -> HashSet<String> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Busy,
        Whole,
        NotWhole,
    }
    fn visit<'s>(
        types: &HashMap<&'s str, &'s TypeDef>,
        name: &'s str,
        marks: &mut HashMap<&'s str, Mark>,
    ) -> bool {
        match marks.get(name) {
            Some(Mark::Whole) => return true,
            Some(Mark::NotWhole | Mark::Busy) => return false,
            None => {}
        }
        let Some(t) = types.get(name) else {
            return false;
        };
        marks.insert(name, Mark::Busy);
        let ok = t
            .fields
            .iter()
            .filter(|f| f.at.is_none())
            .all(|f| match &f.kind {
                FieldKind::Bits { .. } | FieldKind::Switch { .. } => false,
                FieldKind::User { name, .. } => visit(types, name, marks),
                _ => true,
            });
        // A type found not whole while one of its users was busy stays not whole; one on a
        // cycle is not whole from any entry, so the marks do not depend on the order.
        marks.insert(name, if ok { Mark::Whole } else { Mark::NotWhole });
        ok
    }
    let types: HashMap<&str, &TypeDef> = s.types.iter().map(|t| (t.name.as_str(), t)).collect();
    let mut marks: HashMap<&str, Mark> = HashMap::new();
    for t in &s.types {
        visit(&types, &t.name, &mut marks);
    }
    marks
        .into_iter()
        .filter(|(_, m)| *m == Mark::Whole)
        .map(|(n, _)| n.to_owned())
        .collect()
}
