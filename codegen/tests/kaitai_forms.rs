//! Forms of Kaitai Struct's language read and written through the generated Rust and the
//! schema interpreter alike: `io: _parent._io` on positional instances, `_root` / `_parent`
//! paths in a nested type's instance position (`tests/run/parent_io.ksy`); and, through the
//! generated Rust only (the interpreter reads no Rust types), arguments to an opaque type
//! (`tests/run/opaque_args.ksy`).

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/parent_io.rs"]
mod parent_io;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/opaque_args.rs"]
mod opaque_args;

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

/// The opaque type of `run/opaque_args.ksy`: `len` bytes (the first argument), then one
/// tail byte when the second argument holds.
#[derive(
    Debug,
    Clone,
    PartialEq,
    statepack_runtime::serde::Serialize,
    statepack_runtime::serde::Deserialize,
)]
#[serde(crate = "statepack_runtime::serde")]
pub struct TaggedRun {
    /// The bytes of the run.
    pub run: Vec<u8>,
    /// The tail byte, when the schema asks for one.
    pub tail: Option<u8>,
}

impl statepack_runtime::process::OpaqueType for TaggedRun {
    fn read_from<T: statepack_runtime::io::Tracer>(
        r: &mut statepack_runtime::io::ByteReader<'_, T>,
    ) -> Result<Self, statepack_runtime::io::DecodeError> {
        Self::read_with_args(
            r,
            &[
                statepack_runtime::process::OpaqueArg::Int(1),
                statepack_runtime::process::OpaqueArg::Bool(false),
            ],
        )
    }
    fn read_with_args<T: statepack_runtime::io::Tracer>(
        r: &mut statepack_runtime::io::ByteReader<'_, T>,
        args: &[statepack_runtime::process::OpaqueArg<'_>],
    ) -> Result<Self, statepack_runtime::io::DecodeError> {
        use statepack_runtime::io::{DecodeError, DecodeErrorKind};
        use statepack_runtime::process::OpaqueArg;
        let [OpaqueArg::Int(len), OpaqueArg::Bool(has_tail)] = args else {
            return Err(DecodeError::new(
                r.offset(),
                DecodeErrorKind::Semantic(format!("tagged_run takes (int, bool), given {args:?}")),
            ));
        };
        let len = usize::try_from(*len).map_err(|_| {
            DecodeError::new(
                r.offset(),
                DecodeErrorKind::Semantic(format!("length {len}")),
            )
        })?;
        let run = r.take_sized(len as i128)?.to_vec();
        let tail = if *has_tail {
            Some(r.take_sized(1)?[0])
        } else {
            None
        };
        Ok(Self { run, tail })
    }
    fn write_to(
        &self,
        w: &mut statepack_runtime::io::ByteWriter,
    ) -> Result<(), statepack_runtime::io::EncodeError> {
        w.write_bytes(&self.run);
        if let Some(t) = self.tail {
            w.write_bytes(&[t]);
        }
        Ok(())
    }
    fn encoded_len(&self) -> usize {
        self.run.len() + usize::from(self.tail.is_some())
    }
}

impl statepack_runtime::reflect::ToValue for TaggedRun {
    fn to_value(&self) -> statepack_runtime::reflect::Value<'_> {
        statepack_runtime::reflect::Value::Bytes(std::borrow::Cow::Borrowed(&self.run))
    }
}

#[test]
fn opaque_types_take_the_arguments_the_schema_gives() {
    use opaque_args::OpaqueArgs;
    // `len` = 2: two bytes and a tail (`len > 1`); the sized run: two bytes and a tail.
    let bytes = [2, 0xa, 0xb, 0xc, 1, 2, 3];
    let v = OpaqueArgs::decode(&bytes).unwrap();
    assert_eq!(
        v.run,
        TaggedRun {
            run: vec![0xa, 0xb],
            tail: Some(0xc)
        }
    );
    assert_eq!(
        v.sized_run,
        TaggedRun {
            run: vec![1, 2],
            tail: Some(3)
        }
    );
    assert_eq!(v.encode().unwrap(), bytes, "byte-identical");
    // `len` = 1: one byte, no tail; the arguments are evaluated where the field is read.
    let bytes = [1, 0xa, 1, 2, 3];
    let v = OpaqueArgs::decode(&bytes).unwrap();
    assert_eq!(
        v.run,
        TaggedRun {
            run: vec![0xa],
            tail: None
        }
    );
    assert_eq!(v.encode().unwrap(), bytes);
    // The interpreter refuses the schema by name (it reads no Rust types).
    let s = checked("opaque_args.ksy");
    let why = interp::unsupported(&s).expect("refused");
    assert!(why.contains("tagged_run"), "{why}");
}

/// Arguments of a kind an opaque type cannot take are refused by name.
#[test]
fn opaque_arguments_of_user_types_are_refused() {
    let text = "meta:\n  id: oa\n  ks-opaque-types: true\nseq:\n  - id: h\n    type: head\n  - id: x\n    type: ext(h)\ntypes:\n  head:\n    seq:\n      - id: a\n        type: u1\n";
    let d = statepack_codegen::load_checked(text, "t.ksy", Path::new("t.ksy"), &[])
        .err()
        .expect("refused");
    let shown = statepack_codegen::render(&d);
    assert!(
        shown.contains("argument `h` of opaque type `ext` is"),
        "{shown}"
    );
}

/// A `struct` param that no field passes takes the one user type its type casts it to
/// (Kaitai Struct reads it as any user type); casts to two types, or none, leave it unknown.
#[test]
fn a_struct_param_no_field_passes_takes_the_type_it_is_cast_to() {
    let one = "meta:\n  id: cast_param\nparams:\n  - id: p\n    type: struct\ninstances:\n  first:\n    value: p.as<pair>.a\n  whole:\n    value: p.as<pair>\ntypes:\n  pair:\n    seq:\n      - id: a\n        type: u1\n      - id: b\n        type: u1\n";
    let code = statepack_codegen::generate(one, "cast_param.ksy")
        .unwrap_or_else(|d| panic!("{}", statepack_codegen::render(&d)));
    assert!(code.contains("pub p: Pair"), "the param is a `Pair` member");
    let two = one.replace("value: p.as<pair>\n", "value: p.as<other>\n")
        + "  other:\n    seq:\n      - id: c\n        type: u1\n";
    let d = statepack_codegen::generate(&two, "cast_param.ksy")
        .err()
        .expect("refused");
    let shown = statepack_codegen::render(&d);
    assert!(
        shown.contains("is cast to 2 user types")
            && shown.contains("pair")
            && shown.contains("other"),
        "{shown}"
    );
}
