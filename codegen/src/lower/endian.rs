//! Lowering of `meta.endian` given as a switch (`switch-on`, `cases`); what the switch
//! means for the types that inherit it is in `crate::endian`.

use super::state::Lower;
use crate::expr::Expr;
use crate::ir::*;
use crate::yaml::{Node, NodeKind};

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
                        _ => {
                            lw.err(
                                ck.pos,
                                &cp,
                                super::bad_case_key(&ck.text, "`meta.endian`"),
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
