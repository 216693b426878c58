//! The `--schema` interpreter's writer beside the generated one: a file read by the
//! interpreter (`interp::decode`), its value taken as `decode --schema` prints it (a
//! [`Given`] tree), edited as a user edits that JSON, and written by `interp::encode`; the
//! tests require the bytes the generated writer wrote for the same edit.

use statepack_codegen::interp::{self, DynValue, Given};
use statepack_codegen::typed::Checked;
use std::path::Path;

/// `tests/run/<name>.ksy`, loaded and checked.
pub fn checked(name: &str) -> Checked {
    let file = format!("{name}.ksy");
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/run")
        .join(&file);
    let text = std::fs::read_to_string(&path).unwrap();
    statepack_codegen::load_checked(&text, &file, &path, &[])
        .unwrap_or_else(|d| panic!("{}", statepack_codegen::render(&d)))
}

/// `bytes` read by the interpreter with `tests/run/<name>.ksy`, as the writer takes it:
/// each type's fields and instances (its params, which `decode --schema` does not print,
/// left out).
pub fn read(name: &str, bytes: &[u8]) -> Given {
    let s = checked(name);
    let v = interp::decode(&s, bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    let shown = |t: &str, k: &str| {
        s.types
            .iter()
            .filter(|d| d.schema_name == t)
            .any(|d| d.fields.iter().any(|f| f.id == k) || d.instances.iter().any(|i| i.id == k))
    };
    given_of(&DynValue::Struct(std::sync::Arc::new(v)), &shown)
}

/// `given` written by the interpreter with `tests/run/<name>.ksy`.
pub fn written(name: &str, given: &Given) -> Vec<u8> {
    interp::encode(&checked(name), given)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .0
}

/// A value as `decode --schema` prints it: bytes as hex, an enum by name, each member of a
/// type that `shown` keeps (type name, member name; an instance that failed to read left
/// out).
pub fn given_of(v: &DynValue, shown: &dyn Fn(&str, &str) -> bool) -> Given {
    match v {
        DynValue::Null => Given::Null,
        DynValue::Bool(b) => Given::Bool(*b),
        DynValue::Int(i) => Given::Int(*i),
        DynValue::Float(x) => Given::Float(*x),
        DynValue::Str(s) => Given::Str(s.clone()),
        DynValue::Bytes(b) => Given::Str(hex(b)),
        DynValue::Enum(e) => match e.name {
            Some(n) => Given::Str(n.to_owned()),
            None => Given::Int(e.value),
        },
        DynValue::List(items) => Given::List(items.iter().map(|x| given_of(x, shown)).collect()),
        DynValue::Struct(s) => Given::Map(
            s.members
                .iter()
                .filter(|(k, _)| s.error_of(k).is_none() && shown(s.type_name, k))
                .map(|(k, v)| ((*k).to_owned(), given_of(v, shown)))
                .collect(),
        ),
        DynValue::Io { pos, size } => Given::Map(vec![
            ("pos".to_owned(), Given::Int(*pos)),
            ("size".to_owned(), Given::Int(*size)),
        ]),
    }
}

/// Bytes as the JSON gives them: hex, two digits a byte.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The member at `path` (names and list indexes joined by dots: `chunks.3.data`).
pub fn at<'g>(g: &'g mut Given, path: &str) -> &'g mut Given {
    path.split('.')
        .filter(|k| !k.is_empty())
        .fold(g, |g, k| match g {
            Given::Map(m) => m
                .iter_mut()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v)
                .unwrap_or_else(|| panic!("no member `{k}` of `{path}`")),
            Given::List(items) => &mut items[k.parse::<usize>().unwrap()],
            other => panic!("`{k}` of `{path}` in {other:?}"),
        })
}

/// Sets the member at `path` (added to its object when absent).
pub fn set(g: &mut Given, path: &str, v: Given) {
    let (outer, key) = path.rsplit_once('.').unwrap_or(("", path));
    let Given::Map(m) = at(g, outer) else {
        panic!("`{outer}` is not an object")
    };
    match m.iter_mut().find(|(n, _)| n == key) {
        Some(slot) => slot.1 = v,
        None => m.push((key.to_owned(), v)),
    }
}

/// Leaves the member at `path` out (for a value the writer derives).
pub fn remove(g: &mut Given, path: &str) {
    let (outer, key) = path.rsplit_once('.').unwrap_or(("", path));
    let Given::Map(m) = at(g, outer) else {
        panic!("`{outer}` is not an object")
    };
    m.retain(|(n, _)| n != key);
}

/// The list at `path`.
pub fn list<'g>(g: &'g mut Given, path: &str) -> &'g mut Vec<Given> {
    match at(g, path) {
        Given::List(items) => items,
        other => panic!("`{path}` is not a list: {other:?}"),
    }
}
