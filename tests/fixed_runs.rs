//! The generated readers take two paths through the same layout: without a tracer they read
//! each run of fixed-size fields in one step (one bounds check, the values decoded from one
//! array, varints in one loop), and with a tracer (`decode_traced`, what `inspect` uses) they
//! read field by field. Both must give the same result on every input: the same value, or the
//! same error with the same field path and byte offset. This checks it for every format on
//! its samples, on cut-off copies of them and on copies with one byte changed, which reach
//! the fallback from inside every run (input ending inside it, an unknown enum value in it,
//! damaged `contents`, a varint that is too long).

use statepack::formats::{FormatSpec, FORMATS};

/// The byte positions tried on a sample of `len` bytes: every one in the first 192 bytes
/// and about 120 more spread over the rest.
fn cuts(len: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..len.min(192)).collect();
    if len > 192 {
        let step = ((len - 192) / 120).max(1);
        v.extend((192..len).step_by(step));
    }
    v
}

/// Asserts that the plain and the traced raw decode agree on `bytes`.
fn agree(spec: &FormatSpec, what: &str, bytes: &[u8]) {
    let plain = (spec.decode_raw)(bytes);
    let (traced, _) = (spec.decode_traced)(bytes);
    assert_eq!(
        plain, traced,
        "{}: {what}: the one-step and the field-by-field reads differ",
        spec.name
    );
}

#[test]
fn one_step_and_field_by_field_reads_agree_on_cut_inputs() {
    let mut checked = 0;
    for spec in FORMATS {
        for (name, bytes) in (spec.samples)() {
            agree(spec, &name, &bytes);
            assert!((spec.decode_raw)(&bytes).is_ok(), "{}: {name}", spec.name);
            for cut in cuts(bytes.len()) {
                agree(spec, &format!("{name} cut at {cut}"), &bytes[..cut]);
                checked += 1;
            }
        }
    }
    assert!(checked > 500, "only {checked} inputs checked");
}

#[test]
fn one_step_and_field_by_field_reads_agree_on_changed_bytes() {
    let mut failed = 0;
    for spec in FORMATS {
        for (name, bytes) in (spec.samples)() {
            for at in cuts(bytes.len()) {
                for value in [0x00, 0x80, 0xff] {
                    let mut b = bytes.clone();
                    if b[at] == value {
                        continue;
                    }
                    b[at] = value;
                    agree(spec, &format!("{name} with byte {at} = {value:#04x}"), &b);
                    failed += usize::from((spec.decode_raw)(&b).is_err());
                }
            }
        }
    }
    // Many of these inputs are refused, so the error paths were compared too.
    assert!(failed > 100, "only {failed} changed inputs were refused");
}
