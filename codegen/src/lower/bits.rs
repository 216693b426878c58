//! Lowering of the bit-level keys of a field (`b1`..`b64` types, `-sp-offset-binary`,
//! `-sp-varint: leb128`); what they mean for the layout is in `crate::bits`.

use super::state::Lower;
use crate::expr::{BinOp, Expr};
use crate::ir::{FieldKind, Repeat};
use crate::yaml::{Key, Node};

/// True for the LEB128 stop condition `_ < 128` (also written `_ <= 127`).
fn is_leb128_stop(e: &Expr) -> bool {
    match e {
        Expr::Binary(BinOp::Lt, a, b) => {
            matches!(&**a, Expr::Name(n) if n == "_") && matches!(&**b, Expr::Int(128))
        }
        Expr::Binary(BinOp::Le, a, b) => {
            matches!(&**a, Expr::Name(n) if n == "_") && matches!(&**b, Expr::Int(127))
        }
        _ => false,
    }
}

impl Lower<'_> {
    /// Applies `-sp-offset-binary` and `-sp-varint` to a lowered field kind; reports misuse.
    pub(crate) fn bit_keys(
        &mut self,
        m: &[(Key, Node)],
        fp: &str,
        kind: FieldKind,
        repeat: &Repeat,
    ) -> Option<(FieldKind, bool)> {
        let get = |name: &str| m.iter().find(|(k, _)| k.text == name).map(|(_, v)| v);
        let mut kind = kind;
        if let Some(v) = get("-sp-offset-binary") {
            let kp = format!("{fp}.-sp-offset-binary");
            let on = self.boolean(v, &kp)?;
            match &mut kind {
                FieldKind::Bits {
                    width,
                    offset_binary,
                    ..
                } if *width >= 2 => *offset_binary = on,
                FieldKind::Bits { .. } => {
                    self.err(
                        v.pos,
                        &kp,
                        "`-sp-offset-binary` on a one-bit field",
                        "offset binary needs at least 2 bits (b1 holds -1 or 0); keep `b1` as a flag",
                    );
                    return None;
                }
                _ => {
                    self.err(
                        v.pos,
                        &kp,
                        "`-sp-offset-binary` on a field that is not a bit field",
                        "use it on `b2` .. `b64`; byte-sized signed numbers are `s1` .. `s8`",
                    );
                    return None;
                }
            }
        }
        let mut varint = false;
        if let Some(v) = get("-sp-varint") {
            let kp = format!("{fp}.-sp-varint");
            let s = self.scalar(v, &kp)?;
            if s != "leb128" {
                self.err(
                    v.pos,
                    &kp,
                    format!("varint encoding `{s}` is not supported"),
                    "write `-sp-varint: leb128`",
                );
                return None;
            }
            let group_ok = matches!(
                kind,
                FieldKind::Int {
                    bytes: 1,
                    signed: false,
                    enum_name: None,
                    ..
                } | FieldKind::Bits {
                    width: 8,
                    offset_binary: false,
                    enum_name: None,
                    ..
                }
            );
            let stop_ok = matches!(repeat, Repeat::Until(u) if is_leb128_stop(&u.expr));
            if !group_ok || !stop_ok {
                self.err(
                    v.pos,
                    &kp,
                    "`-sp-varint: leb128` needs the LEB128 group list: `type: u1` (byte-aligned) or `type: b8` (bit-aligned), `repeat: until`, `repeat-until: _ < 128`",
                    "write the field as Kaitai Struct reads LEB128: groups of 8 bits until one below 128",
                );
                return None;
            }
            varint = true;
        }
        Some((kind, varint))
    }
}
