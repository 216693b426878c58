//! `meta.endian` as a switch: a byte order decided when a type starts reading.
//!
//! Kaitai Struct lets a type's `meta.endian` be `{switch-on: expr, cases: {key: le, _: be}}`
//! (TIFF and EXIF say `II` or `MM` in their header). The numbers of that type without a `le`
//! or `be` suffix, and of the types nested in it that have no `meta.endian` of their own, are
//! read in the byte order the switch selects. Here:
//!
//! - `lower` reads the mapping into [`EndianSwitch`] (`lower::endian`) and gives such numbers
//!   the byte order [`Endian::Computed`];
//! - the type with the switch decides a local `__is_le: bool` at the start of `read_from`
//!   (and of `write_to`, from the same values, which are params or `_parent`/`_root` paths,
//!   so the writer writes in the order the reader will find); a value no case names is an
//!   error, Kaitai's `UndecidedEndiannessError`;
//! - a nested type without its own `meta.endian` takes the decided order from the field that
//!   reads it: [`lower`] gives it a hidden param `__is_le` (after its other params) and every
//!   field reading it the argument `__is_le`, so on write the parent checks the value's member
//!   against its own order, as for every param.
//!
//! Errors: a type taking its byte order from an enclosing switch that is read by a type
//! without one (nothing says which order to use).

use crate::diag::Diag;
use crate::expr::Expr;
use crate::ir::*;

/// The name of the decided byte order in generated code and expressions (a local in the
/// type with the switch, a hidden param in the types inheriting it).
pub(crate) const IS_LE: &str = "__is_le";

/// Gives every type with [`TypeDef::endian_inherited`] its hidden `__is_le` param and every
/// field reading such a type the argument `__is_le`. Runs after `crate::context` (the param
/// comes after the context params, the argument after the context arguments). Errors: a
/// reader that has no decided byte order to give.
pub(crate) fn lower(s: &mut Schema) -> Vec<Diag> {
    let mut diags = Vec::new();
    let inheriting: Vec<TypeId> = s
        .types
        .iter()
        .filter(|t| t.endian_inherited)
        .map(|t| t.id)
        .collect();
    if inheriting.is_empty() {
        return diags;
    }
    let file = s.file.clone();
    // Per type: its written name (for messages) and its unique name (the order of a
    // switch's case types).
    let shown: Vec<String> = s.types.iter().map(|t| t.schema_name.clone()).collect();
    let names: Vec<String> = s.types.iter().map(|t| t.name.clone()).collect();
    let has_order: Vec<bool> = s
        .types
        .iter()
        .map(|t| t.endian_switch.is_some() || t.endian_inherited)
        .collect();
    for t in &mut s.types {
        if t.endian_inherited {
            t.params.push(Param {
                id: IS_LE.to_owned(),
                doc: Some(
                    "The byte order of this type's numbers without a suffix (`true`: little-endian), as decided by the `meta.endian` switch of the enclosing type and given by the field that reads this one."
                        .to_owned(),
                ),
                pos: t.pos,
                kind: ParamKind::Bool,
                context: Some(format!("{IS_LE} (the byte order decided by the enclosing type)")),
                optional: false,
            });
        }
    }
    for (ti, t) in s.types.iter_mut().enumerate() {
        for f in &mut t.fields {
            let read: Vec<TypeId> = match &f.kind {
                FieldKind::User { ty: name, .. } => name.id().into_iter().collect(),
                FieldKind::Switch { cases, default, .. } => {
                    let mut v: Vec<TypeId> = cases
                        .iter()
                        .map(|(_, n)| n)
                        .chain(default.iter())
                        .filter_map(TypeRef::id)
                        .collect();
                    v.sort_by(|a, b| names[a.0 as usize].cmp(&names[b.0 as usize]));
                    v.dedup();
                    v
                }
                _ => Vec::new(),
            };
            for tn in read.into_iter().filter(|n| inheriting.contains(n)) {
                if !has_order[ti] {
                    diags.push(Diag::new(
                        &file,
                        f.pos_of("type"),
                        &format!("{}.type", f.key_path),
                        format!("`{}` takes its byte order from the `meta.endian` switch of the type it is nested in, but `{}` reads it and has no decided byte order to give", shown[tn.0 as usize], t.schema_name),
                        "read the type from inside the type whose `meta.endian` is a switch, or give it a `meta.endian` of its own",
                    ));
                    continue;
                }
                let arg = Some(SrcExpr {
                    expr: Expr::Name(IS_LE.to_owned()),
                    src: IS_LE.to_owned(),
                    pos: f.pos,
                });
                match f.ctx_args.iter_mut().find(|(n, _)| *n == tn) {
                    Some((_, args)) => args.push(arg),
                    None => f.ctx_args.push((tn, vec![arg])),
                }
            }
        }
    }
    diags
}
