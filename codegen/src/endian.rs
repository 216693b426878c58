//! `meta.endian` as a switch: a byte order decided when a type starts reading.
//!
//! Kaitai Struct lets a type's `meta.endian` be `{switch-on: expr, cases: {key: le, _: be}}`
//! (TIFF and EXIF say `II` or `MM` in their header). The numbers of that type without a `le`
//! or `be` suffix, and of the types nested in it that have no `meta.endian` of their own, are
//! read in the byte order the switch selects. Here:
//!
//! - `lower` reads the mapping into [`EndianSwitch`] (see [`parse`]) and gives such numbers
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
use crate::lower::Lower;
use crate::yaml::{Node, NodeKind};

/// The name of the decided byte order in generated code and expressions (a local in the
/// type with the switch, a hidden param in the types inheriting it).
pub(crate) const IS_LE: &str = "__is_le";

/// Reads `meta.endian` given as a mapping (`switch-on`, `cases`). Errors are reported on `lw`;
/// `None` when the mapping is unusable.
pub(crate) fn parse(lw: &mut Lower<'_>, node: &Node, kp: &str) -> Option<EndianSwitch> {
    let NodeKind::Map(entries) = &node.kind else {
        return None;
    };
    let mut on = None;
    let mut cases = Vec::new();
    let mut default = None;
    let mut ok = true;
    for (k, v) in entries {
        let p = format!("{kp}.{}", k.text);
        match k.text.as_str() {
            "switch-on" => on = lw.src_expr(v, &p),
            "cases" => {
                let NodeKind::Map(cm) = &v.kind else {
                    lw.err(
                        v.pos,
                        &p,
                        format!("`cases` must be a mapping, found {}", v.shape()),
                        "write `cases: {'[0x49, 0x49]': le, _: be}`",
                    );
                    ok = false;
                    continue;
                };
                for (ck, cv) in cm {
                    let cp = format!("{p}.{}", ck.text);
                    let order = match lw.scalar(cv, &cp) {
                        Some("le") => Endian::Le,
                        Some("be") => Endian::Be,
                        Some(o) => {
                            lw.err(
                                cv.pos,
                                &cp,
                                format!("byte order `{o}` is not `le` or `be` (each case of `meta.endian` gives one of these two strings)"),
                                "write `le` or `be`",
                            );
                            ok = false;
                            continue;
                        }
                        None => {
                            ok = false;
                            continue;
                        }
                    };
                    if ck.text == "_" {
                        default = Some(order);
                        continue;
                    }
                    match crate::expr::parse(&ck.text) {
                        Ok(
                            e @ (Expr::Int(_) | Expr::EnumRef(_, _) | Expr::Str(_) | Expr::Bool(_)),
                        ) => cases.push((
                            SrcExpr {
                                expr: e,
                                src: ck.text.clone(),
                                pos: ck.pos,
                            },
                            order,
                        )),
                        Ok(Expr::List(items))
                            if !items.is_empty()
                                && items.iter().all(
                                    |x| matches!(x, Expr::Int(v) if (0..=255).contains(v)),
                                ) =>
                        {
                            cases.push((
                                SrcExpr {
                                    expr: Expr::List(items),
                                    src: ck.text.clone(),
                                    pos: ck.pos,
                                },
                                order,
                            ))
                        }
                        Ok(Expr::Name(n)) => {
                            lw.err(
                                ck.pos,
                                &cp,
                                format!("case key `{n}` is an unknown name: the keys of `meta.endian` are literals (an integer, an enum value, a string, a byte array or a condition)"),
                                "write the value the switch-on expression is compared with, e.g. `'[0x4d, 0x4d]': be`",
                            );
                            ok = false;
                        }
                        _ => {
                            lw.err(
                                ck.pos,
                                &cp,
                                format!("case key `{}` is not an integer, an enum value, a string, a byte array or a condition literal", ck.text),
                                "case keys of `meta.endian` are literals as in a switch type (`'[0x4d, 0x4d]'`, `1`, `kind::big`), or `_`",
                            );
                            ok = false;
                        }
                    }
                }
            }
            t if t.starts_with('-') && !t.starts_with("-sp-") => {}
            _ => {
                lw.err(
                    k.pos,
                    &p,
                    format!("unknown key `{}` in `meta.endian`", k.text),
                    "a computed byte order has `switch-on` and `cases`",
                );
                ok = false;
            }
        }
    }
    let Some(on) = on else {
        if !entries.iter().any(|(k, _)| k.text == "switch-on") {
            lw.err(
                node.pos,
                kp,
                "`meta.endian` as a mapping needs `switch-on`",
                "write `endian: {switch-on: <expression>, cases: {<key>: le, _: be}}`",
            );
        }
        return None;
    };
    if cases.is_empty() && default.is_none() {
        if ok {
            lw.err(
                node.pos,
                kp,
                "`meta.endian` as a mapping needs `cases`",
                "add `cases:` mapping values to `le` or `be`",
            );
        }
        return None;
    }
    ok.then_some(EndianSwitch {
        on,
        cases,
        default,
        pos: node.pos,
        key_path: kp.to_owned(),
    })
}

/// Gives every type with [`TypeDef::endian_inherited`] its hidden `__is_le` param and every
/// field reading such a type the argument `__is_le`. Runs after `crate::context` (the param
/// comes after the context params, the argument after the context arguments). Errors: a
/// reader that has no decided byte order to give.
pub(crate) fn lower(s: &mut Schema) -> Vec<Diag> {
    let mut diags = Vec::new();
    let inheriting: Vec<String> = s
        .types
        .iter()
        .filter(|t| t.endian_inherited)
        .map(|t| t.name.clone())
        .collect();
    if inheriting.is_empty() {
        return diags;
    }
    let file = s.file.clone();
    let shown: std::collections::HashMap<String, String> = s
        .types
        .iter()
        .map(|t| (t.name.clone(), t.schema_name.clone()))
        .collect();
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
            let read: Vec<String> = match &f.kind {
                FieldKind::User { name, .. } => vec![name.clone()],
                FieldKind::Switch { cases, default, .. } => {
                    let mut v: Vec<String> = cases.iter().map(|(_, n)| n.clone()).collect();
                    v.extend(default.clone());
                    v.sort();
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
                        format!("`{}` takes its byte order from the `meta.endian` switch of the type it is nested in, but `{}` reads it and has no decided byte order to give", shown.get(&tn).unwrap_or(&tn), t.schema_name),
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
