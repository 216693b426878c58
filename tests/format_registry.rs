//! The shared entry points of the format registry (`FormatSpec::of`) behave alike for every
//! format: `decode` JSON only for files the format's full decode accepts, and JSON that
//! does not fit the layout refused with the path of the bad value.

use serde_json::Value;
use statepack::formats::FORMATS;

/// Up to `n` positions spread over `len` bytes.
fn positions(len: usize, n: usize) -> impl Iterator<Item = usize> {
    let step = (len / n).max(1);
    (0..len).step_by(step)
}

/// Single-byte changes of every sample: wherever the raw layer still decodes, `to_json`
/// succeeds exactly when `decode_full` does (CBTK's used to give JSON for files its full
/// decode refuses): for CBTK, whose chunk area the raw layer keeps as bytes, some changes
/// must give such a file, so the check is not empty there.
#[test]
fn to_json_only_for_files_the_full_decode_accepts() {
    for spec in FORMATS {
        let mut raw_ok_full_bad = 0;
        for (name, bytes) in (spec.samples)() {
            for at in positions(bytes.len(), 120) {
                for flip in [0x01u8, 0x80] {
                    let mut b = bytes.clone();
                    b[at] ^= flip;
                    if (spec.decode_raw)(&b).is_err() {
                        continue;
                    }
                    let full = (spec.decode_full)(&b);
                    let json = (spec.to_json)(&b);
                    assert_eq!(
                        full.is_ok(),
                        json.is_ok(),
                        "{} {name}, byte {at} ^ {flip:#04x}: full decode {full:?}, to_json {:?}",
                        spec.name,
                        json.as_ref().map(|_| "JSON")
                    );
                    let mut out = Vec::new();
                    assert_eq!(
                        full.is_ok(),
                        (spec.write_json)(&b, &mut out).is_ok(),
                        "{} {name}, byte {at}: write_json",
                        spec.name
                    );
                    if full.is_err() {
                        raw_ok_full_bad += 1;
                    }
                }
            }
        }
        assert!(
            spec.name != "cbtrack" || raw_ok_full_bad > 0,
            "{}: no change kept the raw layer and broke the full decode",
            spec.name
        );
    }
}

/// The path (`a.b[2].c`) of the first integer leaf of `v`, depth first.
fn first_integer(v: &Value, path: &mut String) -> bool {
    match v {
        Value::Number(n) => n.is_u64(),
        Value::Object(m) => {
            for (k, x) in m {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
                if first_integer(x, path) {
                    return true;
                }
                path.truncate(len);
            }
            false
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                if first_integer(x, path) {
                    return true;
                }
                path.truncate(len);
            }
            false
        }
        _ => false,
    }
}

/// Replaces the leaf at `path` (as [`first_integer`] spells it) with a string.
fn set_leaf(v: &mut Value, path: &str) {
    let mut cur = v;
    for part in path.split('.') {
        let (key, idx) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        cur = &mut cur[key];
        for ix in idx.split(['[', ']']).filter(|s| !s.is_empty()) {
            cur = &mut cur[ix.parse::<usize>().unwrap()];
        }
    }
    *cur = Value::String("not a number".into());
}

/// JSON whose first integer is a string: every format's `from_json` names that field.
#[test]
fn from_json_names_the_path_of_a_bad_value() {
    for spec in FORMATS {
        let (name, bytes) = (spec.samples)().into_iter().next().expect("a sample");
        let mut json = (spec.to_json)(&bytes).unwrap();
        assert_eq!(
            (spec.from_json)(&json).unwrap(),
            bytes,
            "{} {name}",
            spec.name
        );
        let mut path = String::new();
        assert!(first_integer(&json, &mut path), "{} {name}", spec.name);
        set_leaf(&mut json, &path);
        let e = (spec.from_json)(&json).unwrap_err();
        assert!(e.starts_with(&path), "{} {name}: {path}: {e}", spec.name);
    }
}
