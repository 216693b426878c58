//! Forms of Kaitai Struct's language read and written through the generated Rust and the
//! schema interpreter alike: `io: _parent._io` on positional instances, `_root` / `_parent`
//! paths in a nested type's instance position (`tests/run/parent_io.ksy`).

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/parent_io.rs"]
mod parent_io;

use statepack_codegen::interp::{self, DynValue, Given};
use statepack_runtime::reflect::Reflect;
use std::path::Path;

/// `tests/run/<name>` loaded and checked for the interpreter.
fn checked(name: &str) -> statepack_codegen::typed::Checked {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/run")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    statepack_codegen::load_checked(&text, name, &path, &[])
        .unwrap_or_else(|d| panic!("{}", statepack_codegen::render(&d)))
}

/// A value as `decode --schema` prints it, as the interpreter's writer takes it back.
fn given_of(v: &DynValue) -> Given {
    match v {
        DynValue::Null => Given::Null,
        DynValue::Bool(b) => Given::Bool(*b),
        DynValue::Int(i) => Given::Int(*i),
        DynValue::Float(x) => Given::Float(*x),
        DynValue::Str(s) => Given::Str(s.clone()),
        DynValue::Bytes(b) => Given::Str(b.iter().map(|x| format!("{x:02x}")).collect()),
        DynValue::Enum(e) => match e.name {
            Some(n) => Given::Str(n.to_owned()),
            None => Given::Int(e.value),
        },
        DynValue::List(items) => Given::List(items.iter().map(given_of).collect()),
        DynValue::Struct(s) => Given::Map(
            s.members
                .iter()
                .filter(|(k, _)| s.error_of(k).is_none())
                .map(|(k, v)| ((*k).to_owned(), given_of(v)))
                .collect(),
        ),
        DynValue::Io { pos, size } => Given::Map(vec![
            ("pos".to_owned(), Given::Int(*pos)),
            ("size".to_owned(), Given::Int(*size)),
        ]),
    }
}

/// The interpreter reads `bytes` as the generated reader did (`generated`), and writes its
/// value back: the bytes up to the furthest byte a field or instance reads (`bytes` whole
/// when that is its end; the interpreter keeps no bytes past them, see docs/schema-language.md).
fn interpreter_agrees(name: &str, bytes: &[u8], generated: &dyn Reflect, reach: usize) {
    let s = checked(name);
    let v = interp::decode(&s, bytes).unwrap_or_else(|e| panic!("interpreter: {e}"));
    interp::compare(&v, generated).unwrap();
    let g = given_of(&DynValue::Struct(std::sync::Arc::new(v)));
    let (out, _) = interp::encode(&s, &g).unwrap_or_else(|e| panic!("interpreter encode: {e}"));
    assert_eq!(
        out,
        bytes[..reach],
        "the interpreter writes back what it read"
    );
}

/// `base`, the table's length, the table (`num` = 2, two subs pointing at bytes 3 and 4 of
/// the table, then those two bytes), `tail`, and bytes past the `seq` that `_root._io`
/// instances at `base + ofs` read.
const PARENT_IO: [u8; 13] = [8, 5, 2, 3, 4, 0xa1, 0xb2, 0x77, 0, 0, 0, 0xc1, 0xc2];

#[test]
fn parent_streams_and_context_paths_in_positions() {
    let v = parent_io::ParentIo::decode(&PARENT_IO).unwrap();
    // The sized table's parent is the root: its `_parent._io` is the whole input.
    assert_eq!(*v.table.first_of_input.get().unwrap(), 8);
    let subs = &v.table.subs;
    assert_eq!(subs.len(), 2);
    // A sub shares the table's stream: `_parent._io` is the table's substream.
    assert_eq!(*subs[0].body.get().unwrap(), 0xa1);
    assert_eq!(*subs[1].body.get().unwrap(), 0xb2);
    // `pos: _root.base + ofs` in the whole input; `pos: _parent.num + 1` in the table.
    assert_eq!(*subs[0].at_base.get().unwrap(), 0xc1);
    assert_eq!(*subs[1].at_base.get().unwrap(), 0xc2);
    assert_eq!(*subs[0].after_subs.get().unwrap(), 0xa1);
    assert_eq!(v.encode().unwrap(), PARENT_IO, "byte-identical");
    interpreter_agrees("parent_io.ksy", &PARENT_IO, &v, PARENT_IO.len());

    // Moved by `base`: the `_root.base + ofs` instances are written at their new place and
    // read back from there. `first_of_input` holds byte 0, so it changes with `base`; left
    // as read, the writer refuses the two values of that byte by name.
    let mut w = v.clone();
    w.base = 7;
    let e = w.encode().unwrap_err().to_string();
    assert!(
        e.contains("`types.table.instances.first_of_input` overlaps the fields written in sequence at byte offset 0"),
        "{e}"
    );
    w.table.first_of_input.set(7);
    let out = w.encode().unwrap();
    // The generated root keeps the bytes it read past its `seq` (`__beyond`) under the
    // instances, so the output keeps its length and its last byte.
    assert_eq!(
        out,
        [7, 5, 2, 3, 4, 0xa1, 0xb2, 0x77, 0, 0, 0xc1, 0xc2, 0xc2]
    );
    let back = parent_io::ParentIo::decode(&out).unwrap();
    assert_eq!(*back.table.subs[0].at_base.get().unwrap(), 0xc1);
    assert_eq!(*back.table.subs[1].at_base.get().unwrap(), 0xc2);
    interpreter_agrees("parent_io.ksy", &out, &back, 12);
}

/// `io: _parent._io` is refused by name where the parent's stream is neither the type's own
/// nor the whole input.
#[test]
fn parent_streams_of_sized_parents_are_refused_by_name() {
    let text = "meta:\n  id: deep\nseq:\n  - id: outer\n    size: 4\n    type: outer\ntypes:\n  outer:\n    seq:\n      - id: inner\n        size: 2\n        type: inner\n  inner:\n    seq:\n      - id: a\n        type: u1\n    instances:\n      b:\n        io: _parent._io\n        pos: 3\n        type: u1\n";
    let d = statepack_codegen::load_checked(text, "t.ksy", Path::new("t.ksy"), &[])
        .err()
        .expect("refused");
    let shown = statepack_codegen::render(&d);
    assert!(
        shown.contains("`io: _parent._io` is not supported here")
            && shown.contains("types.inner.instances.b.io"),
        "{shown}"
    );
}
