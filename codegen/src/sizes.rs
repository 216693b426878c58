//! Static sizes: the fixed encoded size of a type or a field, as `sizeof<T>` and `_sizeof`
//! see it (Kaitai Struct derives them at compile time, never from the data).

use crate::diag::Pos;
use crate::expr::Expr;
use crate::ir::*;
use std::collections::HashMap;

/// The fewest bytes each type of `s` can take (the generated `MIN_LEN`, which every count
/// check multiplies; the interpreter checks counts with the same figures), and the types that
/// contain themselves with no list or `if` in between (with their place), which the
/// generator refuses. Fields with `if`, lists whose count is not a literal (or `eos`) and
/// positional instances count nothing; a switch counts its smallest case, preferring cases
/// that do not lead back to a type being measured (only a switch whose every case recurses
/// is a cycle). Bits are summed and the total rounded up to whole bytes.
pub(crate) fn min_lens(s: &Schema) -> (HashMap<TypeId, usize>, Vec<(String, Pos)>) {
    min_lens_skipping(s, &HashMap::new())
}

/// As [`min_lens`], but the positional instances `lazy` names (by type; those read on first
/// use) lead nowhere: a type that contains itself only through them is no cycle, as nothing
/// reads them while the type is read (each read on access nests one level, within the
/// runtime's nesting limit).
pub(crate) fn min_lens_skipping(
    s: &Schema,
    lazy: &HashMap<TypeId, std::collections::HashSet<String>>,
) -> (HashMap<TypeId, usize>, Vec<(String, Pos)>) {
    let mut memo = HashMap::new();
    let mut cycles = Vec::new();
    for t in &s.types {
        min_bits(s, t.id, &mut memo, &mut Vec::new(), &mut cycles, lazy);
    }
    let lens = memo.into_iter().map(|(k, v)| (k, v.div_ceil(8))).collect();
    cycles.sort();
    cycles.dedup();
    (lens, cycles)
}

fn min_bits(
    s: &Schema,
    id: TypeId,
    memo: &mut HashMap<TypeId, usize>,
    visiting: &mut Vec<TypeId>,
    cycles: &mut Vec<(String, Pos)>,
    lazy: &HashMap<TypeId, std::collections::HashSet<String>>,
) -> usize {
    if let Some(v) = memo.get(&id) {
        return *v;
    }
    let t = s.ty(id);
    if visiting.contains(&id) {
        cycles.push((t.name.clone(), t.pos));
        return 0;
    }
    visiting.push(id);
    let mut total = 0usize;
    let skip = lazy.get(&id);
    for f in &t.fields {
        if f.cond.is_some() || f.at.is_some() && skip.is_some_and(|l| l.contains(&f.id)) {
            continue;
        }
        let times = match &f.repeat {
            Repeat::None | Repeat::Until(_) => 1,
            Repeat::Expr(SrcExpr {
                expr: Expr::Int(n), ..
            }) => usize::try_from(*n).unwrap_or(0),
            Repeat::Expr(_) | Repeat::Eos => 0,
        };
        // A list that may be empty ends a recursion (and adds nothing).
        if times == 0 {
            continue;
        }
        // In bits: bit fields count their width; everything else whole bytes.
        let one = match &f.kind {
            FieldKind::Int { bytes, .. } | FieldKind::Float { bytes, .. } => {
                usize::from(*bytes) * 8
            }
            FieldKind::Bits { width, .. } => usize::from(*width),
            FieldKind::Contents(c) => c.len() * 8,
            FieldKind::Str { size: None, .. } => 8,
            FieldKind::Bytes(_) | FieldKind::Str { .. } => 0,
            FieldKind::User { ty: name, .. } => match name.id() {
                Some(i) => min_bits(s, i, memo, visiting, cycles, lazy),
                None => 0,
            },
            FieldKind::Switch { cases, default, .. } => {
                let all: Vec<&TypeRef> =
                    cases.iter().map(|(_, n)| n).chain(default.iter()).collect();
                let ending: Vec<&TypeRef> = all
                    .iter()
                    .copied()
                    .filter(|n| !n.id().is_some_and(|i| visiting.contains(&i)))
                    .collect();
                let pick = if ending.is_empty() { all } else { ending };
                pick.into_iter()
                    .map(|n| match crate::num_type::case_number(s.type_name(n)) {
                        Some((bytes, ..)) => usize::from(bytes) * 8,
                        // `strz`: at least its terminator; `str`: the switch's size.
                        None if s.type_name(n) == "strz" => 8,
                        None if s.type_name(n) == "str" => 0,
                        None => match n.id() {
                            Some(i) => min_bits(s, i, memo, visiting, cycles, lazy),
                            None => 0,
                        },
                    })
                    .min()
                    .unwrap_or(0)
            }
        };
        // A positional instance is read at a position of the stream, not in sequence: it
        // adds no bytes, but a type it reads is still measured (and a cycle through it, which
        // an eager read would follow for ever, is still found).
        if f.at.is_some() {
            continue;
        }
        total = total.saturating_add(one.saturating_mul(times));
    }
    visiting.pop();
    memo.insert(id, total);
    total
}

/// The fixed size in bits of user type `id` (every field unconditional, of fixed size and
/// count), if it has one; `depth` bounds the walk through nested types.
pub(crate) fn type_bits(s: &Schema, id: TypeId, depth: usize) -> Option<usize> {
    if depth > 64 {
        return None;
    }
    let t = s.ty(id);
    let mut total = 0usize;
    // Positional instances (`at`) take no room in the type's own bytes.
    for f in t.fields.iter().filter(|f| f.at.is_none()) {
        total = total.checked_add(field_bits(s, f, depth)?)?;
    }
    Some(total)
}

/// The fixed size of one field in bits, if it has one.
pub(crate) fn field_bits(s: &Schema, f: &Field, depth: usize) -> Option<usize> {
    if f.cond.is_some() || f.varint {
        return None;
    }
    let lit = |z: &Size| match z {
        Size::Expr(SrcExpr {
            expr: Expr::Int(n), ..
        }) => usize::try_from(*n).ok(),
        _ => None,
    };
    let one = match &f.kind {
        FieldKind::Int { bytes, .. } | FieldKind::Float { bytes, .. } => *bytes as usize * 8,
        FieldKind::Bits { width, .. } => *width as usize,
        FieldKind::Contents(c) => c.len() * 8,
        FieldKind::Bytes(z) | FieldKind::Str { size: Some(z), .. } => lit(z)?.checked_mul(8)?,
        FieldKind::User { size: Some(z), .. } => lit(z)?.checked_mul(8)?,
        FieldKind::User {
            ty: name,
            size: None,
        } => type_bits(s, name.id()?, depth + 1)?,
        _ => return None,
    };
    let times = match &f.repeat {
        Repeat::None => 1,
        Repeat::Expr(SrcExpr {
            expr: Expr::Int(n), ..
        }) => usize::try_from(*n).ok()?,
        _ => return None,
    };
    one.checked_mul(times)
}
