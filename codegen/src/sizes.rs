//! Static sizes: the fixed encoded size of a type or a field, as `sizeof<T>` and `_sizeof`
//! see it (Kaitai Struct derives them at compile time, never from the data).

use crate::expr::Expr;
use crate::ir::*;

/// The fixed size in bits of user type `name` (every field unconditional, of fixed size and
/// count), if it has one; `depth` bounds the walk through nested types.
pub(crate) fn type_bits(s: &Schema, name: &str, depth: usize) -> Option<usize> {
    if depth > 64 {
        return None;
    }
    let t = s.type_def(name)?;
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
        FieldKind::User { name, size: None } => type_bits(s, name, depth + 1)?,
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
