//! What a writer derives rather than stores: a field that holds a later list's count, a later
//! field's byte length, or (`-sp-sum-of`) the sum of an integer over a list's elements is no
//! struct member; the writer computes it from the data. An analysis of the IR that the
//! checks, the Rust emitter and its dynamic view share.

use crate::diag::{Diag, Pos};
use crate::expr::Expr;
use crate::ir::*;
use std::collections::HashMap;

/// What a length-like field is derived from on write.
#[derive(Debug, Clone)]
pub(crate) enum Derived {
    /// Number of elements of a list field.
    Count(String),
    /// Encoded byte length of a sized field.
    Bytes(String),
    /// Length of the stored bytes of a sized processed field: what the writer produces from
    /// the value (the kept stored bytes while they still give it), plus the `i128` (`4` for
    /// `size: len_body - 4`, `-4` for `size: len_body + 4`, 0 for `size: len_body`).
    Stored(String, i128),
    /// Sum of an integer field over a list's elements.
    Sum(String, String),
}

/// What the writer of `t` derives: its counts and lengths, then its `-sp-sum-of` fields.
/// The sums that cannot be derived are reported in `diags`.
pub(crate) fn derived(s: &Schema, t: &TypeDef, diags: &mut Vec<Diag>) -> HashMap<String, Derived> {
    let mut out = counts_and_lengths(t);
    sums(s, t, &mut out, diags);
    out
}

/// The fields of `t` that hold a later field's count or byte length: not struct members,
/// computed on write.
pub(crate) fn counts_and_lengths(t: &TypeDef) -> HashMap<String, Derived> {
    let mut out: HashMap<String, Derived> = HashMap::new();
    let plain_int = |f: &Field| {
        matches!(
            f.kind,
            FieldKind::Int {
                enum_name: None,
                ..
            }
        ) && matches!(f.repeat, Repeat::None)
            && f.cond.is_none()
            && f.valid.is_none()
            && f.sum_of.is_none()
    };
    for (gi, g) in t.fields.iter().enumerate() {
        let consider = |name: &str, d: Derived, out: &mut HashMap<String, Derived>| {
            if let Some(fi) = t.fields[..gi].iter().position(|f| f.id == name) {
                if plain_int(&t.fields[fi]) && !out.contains_key(name) && g.cond.is_none() {
                    out.insert(name.to_owned(), d);
                }
            }
        };
        if let Repeat::Expr(SrcExpr {
            expr: Expr::Name(n),
            ..
        }) = &g.repeat
        {
            consider(n, Derived::Count(g.id.clone()), &mut out);
        }
        let size = match &g.kind {
            // A terminated or padded field's size is checked, not derived, and so is a
            // string's in a character set other than UTF-8 and ASCII.
            _ if g.term.is_some() => None,
            // So is a sized switch with a number or string case, which keeps what that case
            // leaves of its size (see `emit::switch_tail`).
            FieldKind::Switch { cases, default, .. }
                if !g.strict
                    && cases.iter().map(|(_, n)| n).chain(default.iter()).any(
                        |n| matches!(n, TypeRef::Named(n) if crate::num_type::case_builtin(n)),
                    ) =>
            {
                None
            }
            FieldKind::Str { encoding, .. } if !plain_encoding(encoding) => None,
            FieldKind::Bytes(Size::Expr(e)) => Some(e),
            FieldKind::Str {
                size: Some(Size::Expr(e)),
                ..
            } => Some(e),
            FieldKind::User {
                size: Some(Size::Expr(e)),
                ..
            }
            | FieldKind::Switch {
                size: Some(Size::Expr(e)),
                ..
            } => Some(e),
            _ => None,
        };
        if let (Some(e), Repeat::None) = (size, &g.repeat) {
            match (&g.process, &e.expr, name_plus(&e.expr)) {
                (None, Expr::Name(n), _) => consider(n, Derived::Bytes(g.id.clone()), &mut out),
                (Some(_), _, Some((n, k))) if derivable_process(g, &n) => {
                    consider(&n, Derived::Stored(g.id.clone(), -k), &mut out)
                }
                _ => {}
            }
        }
    }
    out
}

/// `n`, `n + k`, `k + n` or `n - k` (`k` a literal) as (n, the literal added).
fn name_plus(e: &Expr) -> Option<(String, i128)> {
    use crate::expr::BinOp;
    match e {
        Expr::Name(n) => Some((n.clone(), 0)),
        Expr::Binary(BinOp::Add, a, b) => match (&**a, &**b) {
            (Expr::Name(n), Expr::Int(k)) | (Expr::Int(k), Expr::Name(n)) => Some((n.clone(), *k)),
            _ => None,
        },
        Expr::Binary(BinOp::Sub, a, b) => match (&**a, &**b) {
            (Expr::Name(n), Expr::Int(k)) => Some((n.clone(), k.checked_neg()?)),
            _ => None,
        },
        _ => None,
    }
}

/// Whether the writer can produce the stored bytes of processed field `g` before it writes
/// the length field `len`: a built-in processor (`zlib`, `xor`, `rol`, `ror`; one written in
/// Rust makes what its own code makes), on raw bytes or a user type of the `seq`, whose
/// arguments use neither `_io` (not known before the bytes are placed) nor `len` itself.
fn derivable_process(g: &Field, len: &str) -> bool {
    let args: Vec<&SrcExpr> = match &g.process {
        Some(Process::Zlib) | Some(Process::Xor(ProcArg::Bytes(_))) => Vec::new(),
        Some(Process::Xor(ProcArg::Expr(e)) | Process::Rol(e) | Process::Ror(e)) => vec![e],
        _ => return false,
    };
    g.at.is_none()
        && matches!(g.kind, FieldKind::Bytes(_) | FieldKind::User { .. })
        && args.iter().all(|e| {
            let names = crate::instances::expr_names(&e.expr);
            !names.contains("_io") && !names.contains(len)
        })
}

/// Adds the `-sp-sum-of` fields of `t` to `out`, reporting the ones that cannot be derived.
fn sums(s: &Schema, t: &TypeDef, out: &mut HashMap<String, Derived>, diags: &mut Vec<Diag>) {
    let mut err = |pos: Pos, kp: &str, msg: String, hint: &str| {
        diags.push(Diag::new(&s.file, pos, kp, msg, hint))
    };
    for (fi, f) in t.fields.iter().enumerate() {
        let Some((list, field, pos)) = &f.sum_of else {
            continue;
        };
        let kp = format!("{}.-sp-sum-of", f.key_path);
        if !matches!(
            f.kind,
            FieldKind::Int {
                enum_name: None,
                ..
            }
        ) || !matches!(f.repeat, Repeat::None)
            || f.cond.is_some()
        {
            err(
                *pos,
                &kp,
                "`-sp-sum-of` on a field that is not a plain integer".to_owned(),
                "use it on an unconditional, unrepeated integer field",
            );
            continue;
        }
        let Some(li) = t.fields.iter().position(|g| &g.id == list) else {
            err(
                *pos,
                &kp,
                format!("`{list}` is not a field of this type"),
                "name a list field of the same type, e.g. `frames.dt_ms`",
            );
            continue;
        };
        let lf = &t.fields[li];
        let elem_ok = match (&lf.kind, &lf.repeat, &lf.cond) {
            (FieldKind::User { ty: name, .. }, r, None) if !matches!(r, Repeat::None) => {
                s.type_of(name).and_then(|et| {
                    let x = et.fields.iter().find(|x| &x.id == field)?;
                    let plain = matches!(
                        x.kind,
                        FieldKind::Int {
                            enum_name: None,
                            ..
                        }
                    ) && matches!(x.repeat, Repeat::None)
                        && x.cond.is_none();
                    // A derived field of the element is not a member to sum.
                    let stored = x.sum_of.is_none() && !counts_and_lengths(et).contains_key(field);
                    Some((plain, stored))
                })
            }
            _ => None,
        };
        match elem_ok {
            Some((true, true)) if li > fi => {
                // A sum field is never a count or length (those need no `-sp-sum-of`).
                out.insert(f.id.clone(), Derived::Sum(list.clone(), field.clone()));
            }
            Some((true, true)) => err(*pos, &kp, format!("`{list}` comes before this field"), "the summed list must follow the field that holds the sum"),
            Some((true, false)) => err(*pos, &kp, format!("`{list}[].{field}` is derived on write (a count, length or sum), so the elements do not store it"), "sum a stored integer field of the list's element type"),
            Some((false, _)) => err(*pos, &kp, format!("`{list}[].{field}` is not a plain integer field"), "sum an unconditional, unrepeated integer field of the list's element type"),
            None => err(*pos, &kp, format!("`{list}` is not an unconditional list of a user type with a field `{field}`"), "name a `repeat` field of a user type and one of its integer fields"),
        }
    }
}

/// A string encoding whose byte length is known from its text alone (UTF-8 and ASCII).
pub(crate) fn plain_encoding(e: &str) -> bool {
    e == "UTF-8" || e == "ASCII"
}

/// How the writer places a positional instance whose `pos` is an integer member of the same
/// type (`pos: ofs_index`, `pos: block * 64`, `pos: ofs + 16`) or of a user-type field of it
/// (`pos: head.ofs_index`): `pos = member × step + offset`.
#[derive(Debug, Clone)]
pub(crate) struct Placed {
    /// The `seq` field of the type written where the number goes: the member itself, or the
    /// user-type field holding it.
    pub holder: String,
    /// The member's path for messages (`ofs_index`, `head.ofs_index`).
    pub path: String,
    /// The member's field (in the type of `holder` for a path).
    pub member: Field,
    /// The member's byte offset in the bytes of `holder` (0 for a member of the type).
    pub within: usize,
    /// The multiplier (`64` in `block * 64`; 1 without one): positions are multiples of it
    /// from `offset`, the alignment of a position the writer chooses.
    pub step: i128,
    /// The literal added (`16` in `ofs + 16`, `-4` in `ofs - 4`; 0 without one).
    pub offset: i128,
    /// `-sp-align` of the instance: placed when the enclosing stream is laid out, at a
    /// multiple of it, with zero bytes after it up to the next one; no place is kept.
    pub align: Option<u32>,
    /// The member's `valid: {min, max}` (integer literals), which the number written keeps.
    pub bounds: (Option<i128>, Option<i128>),
}

/// The positional instances of `t` that the writer places itself, by instance id: `pos` is
/// `m`, `m * k`, `k * m`, `m + k`, `k + m` or `m - k` (`k` a literal, a positive one for `*`),
/// `m` a plain integer field of the `seq` (no `enum`, `if`, `repeat`, `valid`, not derived, a
/// fixed byte order; for `-sp-align` instances a `valid` of integer `min`/`max` is allowed)
/// that no other expression of the type uses, or such a field of a user-type `seq` field (`head.ofs_index`: unconditional,
/// unrepeated, unprocessed, its type's fields before the member of fixed size and none of its
/// expressions using the member); the instance reads from the type's own stream (no `io`).
/// Several instances may share `m` when at most one of them is present: each has an `if` of
/// the form `x == k` on one name `x`, with a different literal `k` (`if: type_code == 1`,
/// `if: type_code == 2`); one instance alone may also have no `if`.
pub(crate) fn placed_instances(s: &Schema, t: &TypeDef) -> HashMap<String, Placed> {
    let uses = path_uses(t);
    let mut groups: Vec<(Vec<String>, Vec<(&Field, i128, i128)>)> = Vec::new();
    for f in &t.fields {
        let Some(at) = &f.at else {
            continue;
        };
        if at.io_of.is_some() || at.io_later.is_some() {
            continue;
        }
        let Some((path, step, offset)) = linear(&at.pos.expr) else {
            continue;
        };
        match groups.iter_mut().find(|(p, _)| *p == path) {
            Some((_, g)) => g.push((f, step, offset)),
            None => groups.push((path, vec![(f, step, offset)])),
        }
    }
    let mut out = HashMap::new();
    for (path, group) in groups {
        if uses.get(&path.join(".")) != Some(&group.len()) || !exclusive(&group) {
            continue;
        }
        // A member with `valid` (integer `min`/`max`) is placed for aligned instances only:
        // their writer checks the number against it (see `AlignedSlot`).
        let aligned = group
            .iter()
            .all(|(f, _, _)| f.at.as_ref().is_some_and(|a| a.align.is_some()));
        let found = match path.as_slice() {
            [m] => t
                .fields
                .iter()
                .find(|g| &g.id == m && g.at.is_none())
                .filter(|g| plain_member(t, g) && (aligned || g.valid.is_none()))
                .map(|g| (m.clone(), g.clone(), 0)),
            [h, m] => member_of_holder(s, t, h, m)
                .filter(|(g, _)| aligned || g.valid.is_none())
                .map(|(g, within)| (h.clone(), g, within)),
            _ => None,
        };
        let Some((holder, member, within)) = found else {
            continue;
        };
        for (f, step, offset) in group {
            out.insert(
                f.id.clone(),
                Placed {
                    holder: holder.clone(),
                    path: path.join("."),
                    member: member.clone(),
                    within,
                    step,
                    offset,
                    align: f.at.as_ref().and_then(|a| a.align),
                    bounds: member_bounds(&member),
                },
            );
        }
    }
    out
}

/// At most one of the instances is present: one without `if`, or each with an `if` of the
/// form `x == k` (or `k == x`) on the same name `x`, the literals `k` all different.
fn exclusive(group: &[(&Field, i128, i128)]) -> bool {
    use crate::expr::BinOp;
    if let [(f, _, _)] = group {
        if f.cond.is_none() {
            return true;
        }
    }
    let mut name = None;
    let mut seen = std::collections::HashSet::new();
    for (f, _, _) in group {
        let Some(c) = &f.cond else {
            return false;
        };
        let Expr::Binary(BinOp::Eq, a, b) = &c.expr else {
            return false;
        };
        let (n, k) = match (&**a, &**b) {
            (Expr::Name(n), Expr::Int(k)) | (Expr::Int(k), Expr::Name(n)) => (n, *k),
            _ => return false,
        };
        if name.get_or_insert(n) != &n || !seen.insert(k) {
            return false;
        }
    }
    true
}

/// The `valid: {min, max}` bounds of a placed member (integer literals; none without `valid`).
fn member_bounds(m: &Field) -> (Option<i128>, Option<i128>) {
    let lit = |e: &Option<SrcExpr>| match e.as_ref().map(|e| &e.expr) {
        Some(Expr::Int(k)) => Some(*k),
        Some(Expr::Unary(crate::expr::UnOp::Neg, x)) => match &**x {
            Expr::Int(k) => Some(-*k),
            _ => None,
        },
        _ => None,
    };
    match &m.valid {
        Some(Valid::Range(a, b)) => (lit(a), lit(b)),
        _ => (None, None),
    }
}

/// Whether the `valid` of a member is one the placing writer keeps: none, or `min`/`max` of
/// integer literals.
fn plain_valid(m: &Field) -> bool {
    match &m.valid {
        None => true,
        Some(Valid::Range(a, b)) => {
            let (x, y) = member_bounds(m);
            a.is_some() == x.is_some() && b.is_some() == y.is_some()
        }
        Some(_) => false,
    }
}

/// The problems of the `-sp-align` keys in `t`: an aligned instance must be
/// one the writer places (see [`placed_instances`]) and hold numbers, bytes or strings (no
/// user type, whose bytes could depend on where it goes).
pub(crate) fn check_placement_keys(s: &Schema, t: &TypeDef, diags: &mut Vec<Diag>) {
    let placed = placed_instances(s, t);
    for f in &t.fields {
        let Some(a) = f.at.as_ref().and_then(|at| at.align.map(|n| (at, n))) else {
            continue;
        };
        let (at, _) = a;
        let kp = format!("{}.-sp-align", f.key_path);
        if !placed.contains_key(&f.id) {
            diags.push(Diag::new(
                &s.file,
                f.pos,
                &kp,
                format!("`-sp-align` on `{}`, whose position the writer does not choose (`pos: {}`)", f.id, at.pos.src),
                "give `pos` as a plain integer field of the type's `seq` that no other expression uses (`pos: ofs`, `pos: block * 4`), and at most one of the instances sharing it present (`if: code == 1`, `if: code == 2`)",
            ));
        } else if matches!(f.kind, FieldKind::User { .. } | FieldKind::Switch { .. }) {
            diags.push(Diag::new(
                &s.file,
                f.pos,
                &kp,
                format!(
                    "`-sp-align` on `{}`, a user type, is not supported yet",
                    f.id
                ),
                "align instances of numbers, bytes or strings (lists of them too)",
            ));
        }
    }
}

/// How many expressions of `t` use each name and each `a.b` path. The expression of a value
/// instance that no other expression needs (directly or through other value instances) is
/// not counted: nothing the writer writes depends on it, so an offset it reads (`pos_data -
/// rva`, a lookup through a section table) may still be derived.
fn path_uses(t: &TypeDef) -> HashMap<String, usize> {
    let mut uses: HashMap<String, usize> = HashMap::new();
    let read_only = read_only_values(t);
    let mut count = |e: &Expr| {
        let mut seen = std::collections::HashSet::new();
        crate::instances::visit(e, &mut |x| match x {
            Expr::Name(n) => {
                seen.insert(n.clone());
            }
            Expr::Attr(a, b) => {
                if let Expr::Name(n) = &**a {
                    seen.insert(format!("{n}.{b}"));
                }
            }
            _ => {}
        });
        for n in seen {
            *uses.entry(n).or_default() += 1;
        }
    };
    let mut copy = t.clone();
    for (e, kp) in crate::context::type_exprs(&mut copy) {
        if !read_only.iter().any(|v| kp.starts_with(v.as_str())) {
            count(&e.expr);
        }
    }
    uses
}

/// The key paths (`types.x.instances.v.`, with the dot) of the value instances of `t` that no
/// field expression, position or `to-string` of `t` needs, directly or through other value
/// instances.
fn read_only_values(t: &TypeDef) -> Vec<String> {
    use std::collections::HashSet;
    let prefix = |i: &Instance| format!("{}.", i.key_path);
    let mut copy = t.clone();
    let exprs: Vec<(Expr, String)> = crate::context::type_exprs(&mut copy)
        .into_iter()
        .map(|(e, kp)| (e.expr.clone(), kp))
        .collect();
    let names_of = |e: &Expr| {
        let mut seen = HashSet::new();
        crate::instances::visit(e, &mut |x| {
            if let Expr::Name(n) = x {
                seen.insert(n.clone());
            }
        });
        seen
    };
    let value_kp = |kp: &str| t.instances.iter().find(|i| kp.starts_with(&prefix(i)));
    // The value instances needed: named by a non-value expression, then by a needed one.
    let mut needed: HashSet<String> = HashSet::new();
    for (e, kp) in &exprs {
        if value_kp(kp).is_none() {
            needed.extend(names_of(e));
        }
    }
    if let Some(ts) = &t.to_string {
        needed.extend(names_of(&ts.expr));
    }
    loop {
        let before = needed.len();
        for (e, kp) in &exprs {
            if value_kp(kp).is_some_and(|i| needed.contains(&i.id)) {
                needed.extend(names_of(e));
            }
        }
        if needed.len() == before {
            break;
        }
    }
    t.instances
        .iter()
        .filter(|i| !needed.contains(&i.id))
        .map(prefix)
        .collect()
}

/// A plain integer field of `t`'s `seq` that the writer may write as it chooses.
fn plain_member(t: &TypeDef, m: &Field) -> bool {
    matches!(
        m.kind,
        FieldKind::Int {
            enum_name: None,
            endian: Endian::Le | Endian::Be,
            ..
        }
    ) && matches!(m.repeat, Repeat::None)
        && m.at.is_none()
        && m.cond.is_none()
        && plain_valid(m)
        && m.sum_of.is_none()
        && !m.varint
        && !counts_and_lengths(t).contains_key(&m.id)
}

/// Member `m` of the user-type `seq` field `h` of `t`, with its byte offset in `h`'s bytes.
fn member_of_holder(s: &Schema, t: &TypeDef, h: &str, m: &str) -> Option<(Field, usize)> {
    let hf = t.fields.iter().find(|g| g.id == h && g.at.is_none())?;
    let FieldKind::User { ty: name, .. } = &hf.kind else {
        return None;
    };
    if hf.cond.is_some() || hf.process.is_some() || hf.term.is_some() {
        return None;
    }
    if !matches!(hf.repeat, Repeat::None) {
        return None;
    }
    let ht = s.type_of(name)?;
    let i = ht.fields.iter().position(|g| g.id == m)?;
    let mf = &ht.fields[i];
    if !plain_member(ht, mf) || path_uses(ht).contains_key(m) {
        return None;
    }
    let mut bits = 0usize;
    for g in ht.fields[..i].iter().filter(|g| g.at.is_none()) {
        bits = bits.checked_add(crate::sizes::field_bits(s, g, 0)?)?;
    }
    bits.is_multiple_of(8).then(|| (mf.clone(), bits / 8))
}

/// `m`, `m * k`, `k * m`, `m + k`, `k + m`, `m - k` as (m's path, step, offset); `m` a name
/// or `a.b`.
fn linear(e: &Expr) -> Option<(Vec<String>, i128, i128)> {
    use crate::expr::BinOp;
    let name = |e: &Expr| match e {
        Expr::Name(n) if !n.starts_with('_') => Some(vec![n.clone()]),
        Expr::Attr(a, b) => match &**a {
            Expr::Name(n) if !n.starts_with('_') => Some(vec![n.clone(), b.clone()]),
            _ => None,
        },
        _ => None,
    };
    let int = |e: &Expr| match e {
        Expr::Int(k) => Some(*k),
        _ => None,
    };
    if let Some(n) = name(e) {
        return Some((n, 1, 0));
    }
    let Expr::Binary(op, a, b) = e else {
        return None;
    };
    match op {
        BinOp::Mul => {
            let (n, k) = match (name(a), int(b), name(b), int(a)) {
                (Some(n), Some(k), _, _) | (_, _, Some(n), Some(k)) => (n, k),
                _ => return None,
            };
            (k > 0).then_some((n, k, 0))
        }
        BinOp::Add => match (name(a), int(b), name(b), int(a)) {
            (Some(n), Some(k), _, _) | (_, _, Some(n), Some(k)) => Some((n, 1, k)),
            _ => None,
        },
        BinOp::Sub => Some((name(a)?, 1, -int(b)?)),
        _ => None,
    }
}
