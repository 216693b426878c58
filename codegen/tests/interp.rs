//! The interpreter (`statepack_codegen::interp`) on hostile input: errors with the field path
//! and the byte offset, never a panic, a hang or an allocation the input does not justify;
//! and the writer's refusals.

use statepack_codegen::interp::{self, DynValue, Given};
use statepack_runtime::io::DecodeErrorKind;

fn schema(text: &str) -> statepack_codegen::typed::Checked {
    statepack_codegen::load_checked(text, "t.ksy", std::path::Path::new("t.ksy"), &[])
        .unwrap_or_else(|d| panic!("{}", statepack_codegen::render(&d)))
}

#[test]
fn a_count_bomb_is_refused_before_anything_is_allocated() {
    let s = schema(
        "meta:\n  id: bomb\n  endian: le\nseq:\n  - id: n\n    type: u4\n  - id: items\n    type: u8\n    repeat: expr\n    repeat-expr: n\n",
    );
    let e = interp::decode(&s, &[0xff, 0xff, 0xff, 0xff, 1, 2, 3]).unwrap_err();
    assert_eq!(e.to_string(), "items (byte offset 4): count 4294967295 needs at least 34359738360 byte(s) but only 3 left");
}

#[test]
fn deep_recursion_is_an_error_not_a_stack_overflow() {
    let s = schema(
        "meta:\n  id: nest\nseq:\n  - id: more\n    type: u1\n  - id: next\n    type: nest\n    if: more != 0\n",
    );
    let mut bytes = vec![1u8; 100_000];
    bytes.push(0);
    let e = interp::decode(&s, &bytes).unwrap_err();
    assert!(
        matches!(&e.kind, DecodeErrorKind::Semantic(m) if m.contains("nested deeper than 256")),
        "{e}"
    );
    // Within the bound it reads.
    let v = interp::decode(&s, &[1, 1, 0]).unwrap();
    let Some(DynValue::Struct(inner)) = v.get("next") else {
        panic!("{v:?}")
    };
    assert_eq!(inner.get("more"), Some(&DynValue::Int(1)));
}

#[test]
fn a_list_of_empty_elements_ends_with_an_error() {
    let s = schema(
        "meta:\n  id: empty\nseq:\n  - id: items\n    type: e\n    repeat: eos\ntypes:\n  e:\n    seq:\n      - id: nothing\n        size: 0\n",
    );
    let e = interp::decode(&s, &[1, 2]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "items[0] (byte offset 0): a repeated element took no bytes, so the list would never end"
    );
}

#[test]
fn errors_name_the_path_and_offset_inside_lists_and_types() {
    let s = schema(
        "meta:\n  id: recs\n  endian: be\nseq:\n  - id: recs\n    type: rec\n    repeat: expr\n    repeat-expr: 2\ntypes:\n  rec:\n    seq:\n      - id: tag\n        contents: [0xca]\n      - id: v\n        type: u2\n",
    );
    let v = interp::decode(&s, &[0xca, 0, 7, 0xca, 1, 0]).unwrap();
    let Some(DynValue::List(recs)) = v.get("recs") else {
        panic!()
    };
    let DynValue::Struct(r1) = &recs[1] else {
        panic!()
    };
    assert_eq!(r1.get("v"), Some(&DynValue::Int(256)));
    assert_eq!(v.elem_spans[0], vec![(0, 3), (3, 6)]);
    let e = interp::decode(&s, &[0xca, 0, 7, 0xcb, 1, 0]).unwrap_err();
    assert!(matches!(e.kind, DecodeErrorKind::BadContents { .. }), "{e}");
    assert!(
        e.to_string()
            .starts_with("recs[1].tag (byte offset 3): expected "),
        "{e}"
    );
    // The count is checked against the bytes left before the list is read, as generated
    // readers check it (each `rec` takes at least 3 bytes).
    let e = interp::decode(&s, &[0xca, 0, 7, 0xca, 1]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "recs (byte offset 0): count 2 needs at least 6 byte(s) but only 5 left"
    );
}

#[test]
fn unsupported_constructs_are_named() {
    let s = schema("meta:\n  id: fx\nseq:\n  - id: a\n    size: 2\n    process: my_fx\n");
    let why = interp::unsupported(&s).expect("refused");
    assert!(why.contains("process: my_fx"), "{why}");
    let e = interp::decode(&s, &[1, 2]).unwrap_err();
    assert!(
        e.to_string().contains("not supported by the interpreter"),
        "{e}"
    );
}

#[test]
fn the_writer_refuses_values_that_do_not_fit() {
    let s = schema(
        "meta:\n  id: w\n  endian: le\nseq:\n  - id: magic\n    contents: AB\n  - id: n\n    type: u1\n  - id: name\n    type: str\n    size: n\n    encoding: ASCII\n",
    );
    let given = |n: i128, name: &str| {
        Given::Map(vec![
            ("n".into(), Given::Int(n)),
            ("name".into(), Given::Str(name.into())),
        ])
    };
    let (bytes, _) = interp::encode(&s, &given(3, "abc")).unwrap();
    assert_eq!(bytes, b"AB\x03abc");
    assert_eq!(
        interp::encode(&s, &given(300, "abc")).unwrap_err(),
        "n: 300 does not fit in 0..=255"
    );
    assert_eq!(
        interp::encode(&s, &given(2, "abc")).unwrap_err(),
        "name: 3 byte(s) do not fit in the size 2"
    );
    let extra = Given::Map(vec![("team".into(), Given::Int(1))]);
    assert_eq!(
        interp::encode(&s, &extra).unwrap_err(),
        "team: type w has no field `team`"
    );
}

/// A `meta.endian` switch decides the order of the type's numbers and of a nested type
/// without its own `meta.endian`; a value no case names is an error; the value is read
/// and written back in the order it selects.
#[test]
fn a_byte_order_switch_is_read() {
    let s = schema(
        "meta:\n  id: sw\nseq:\n  - id: mark\n    type: u1\n  - id: body\n    type: body\ntypes:\n  body:\n    meta:\n      endian:\n        switch-on: _parent.mark\n        cases:\n          1: le\n          2: be\n    seq:\n      - id: a\n        type: u2\n      - id: inner\n        type: inner\n    types:\n      inner:\n        seq:\n          - id: b\n            type: u2\n",
    );
    assert_eq!(interp::unsupported(&s), None);
    let get = |bytes: &[u8]| {
        let v = interp::decode(&s, bytes).unwrap();
        let body = match &v.members[1].1 {
            interp::DynValue::Struct(b) => b.clone(),
            o => panic!("{o:?}"),
        };
        let inner = match &body.members[1].1 {
            interp::DynValue::Struct(i) => i.clone(),
            o => panic!("{o:?}"),
        };
        (body.members[0].1.clone(), inner.members[0].1.clone())
    };
    assert_eq!(
        get(&[1, 0x01, 0x02, 0x03, 0x04]),
        (interp::DynValue::Int(0x0201), interp::DynValue::Int(0x0403))
    );
    assert_eq!(
        get(&[2, 0x01, 0x02, 0x03, 0x04]),
        (interp::DynValue::Int(0x0102), interp::DynValue::Int(0x0304))
    );
    let e = interp::decode(&s, &[3, 0, 0, 0, 0])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("undecided byte order") && e.starts_with("body"),
        "{e}"
    );
    // Written in the order the switch selects, and read back the same.
    for (mark, a, b) in [(1u8, 0x0201, 0x0403), (2, 0x0102, 0x0304)] {
        let bytes = [mark, 0x01, 0x02, 0x03, 0x04];
        let g = interp::Given::Map(vec![
            ("mark".into(), interp::Given::Int(mark.into())),
            (
                "body".into(),
                interp::Given::Map(vec![
                    ("a".into(), interp::Given::Int(a)),
                    (
                        "inner".into(),
                        interp::Given::Map(vec![("b".into(), interp::Given::Int(b))]),
                    ),
                ]),
            ),
        ]);
        assert_eq!(interp::encode(&s, &g).unwrap().0, bytes);
    }
}

/// A switch whose case is a number type is written as that number (in the switch's size
/// when it has one) and reads back the same.
#[test]
fn number_switch_cases_are_written() {
    let s = schema(
        "meta:\n  id: ns\n  endian: be\nseq:\n  - id: kind\n    type: u1\n  - id: v\n    type:\n      switch-on: kind\n      cases:\n        1: u2\n        2: s4le\n        3: f4\n",
    );
    for (kind, v, bytes) in [
        (1, interp::Given::Int(0x1234), vec![1u8, 0x12, 0x34]),
        (2, interp::Given::Int(-2), vec![2, 0xfe, 0xff, 0xff, 0xff]),
        (3, interp::Given::Float(1.5), vec![3, 0x3f, 0xc0, 0, 0]),
    ] {
        let g = interp::Given::Map(vec![
            ("kind".into(), interp::Given::Int(kind)),
            ("v".into(), v),
        ]);
        let (written, _) = interp::encode(&s, &g).unwrap();
        assert_eq!(written, bytes);
        interp::decode(&s, &written).unwrap();
    }
    // A value that does not fit the case's type is refused naming the field.
    let g = interp::Given::Map(vec![
        ("kind".into(), interp::Given::Int(1)),
        ("v".into(), interp::Given::Int(70000)),
    ]);
    let e = interp::encode(&s, &g).unwrap_err();
    assert!(e.starts_with("v: 70000 does not fit"), "{e}");
}

/// One enum may serve a `u1` and a `u2` field although one of its values does not fit the
/// `u1` (Kaitai Struct allows it): the value reads in the `u2` field, and writing it into
/// the `u1` field is refused by name. Under `-sp-strict` the schema is refused.
#[test]
fn one_enum_serves_fields_of_two_widths() {
    let text = "meta:\n  id: e2\n  endian: le\nseq:\n  - id: a\n    type: u1\n    enum: kind\n  - id: b\n    type: u2\n    enum: kind\nenums:\n  kind:\n    1: one\n    300: big\n";
    let s = schema(text);
    let v = interp::decode(&s, &[1, 0x2c, 0x01]).unwrap();
    let shown = format!("{:?}", v.members);
    assert!(shown.contains("one") && shown.contains("big"), "{shown}");
    assert!(statepack_codegen::generate(text, "e2.ksy").is_ok());
    let g = |a: &str| {
        interp::Given::Map(vec![
            ("a".into(), interp::Given::Str(a.into())),
            ("b".into(), interp::Given::Str("big".into())),
        ])
    };
    assert_eq!(
        interp::encode(&s, &g("one")).unwrap().0,
        vec![1, 0x2c, 0x01]
    );
    let e = interp::encode(&s, &g("big")).unwrap_err();
    assert!(e.starts_with("a: 300 does not fit"), "{e}");
    let strict = text.replace("  endian: le\n", "  endian: le\n  -sp-strict: true\n");
    let d = statepack_codegen::generate(&strict, "e2.ksy").unwrap_err();
    assert!(
        statepack_codegen::render(&d).contains("does not fit the field's type"),
        "{}",
        statepack_codegen::render(&d)
    );
}

#[test]
fn valid_on_bit_fields_is_checked_at_the_fields_first_byte() {
    // A DOS time: seconds / 2, minutes, hours, least significant bit first in a u16 LE.
    let s = schema(
        "meta:\n  id: dos_time\n  bit-endian: le\nseq:\n  - id: second_halves\n    type: b5\n    valid:\n      max: 29\n  - id: minutes\n    type: b6\n    valid:\n      max: 59\n  - id: hours\n    type: b5\n    valid:\n      max: 23\n",
    );
    let v = interp::decode(&s, &[0x6b, 0x74]).unwrap();
    assert_eq!(v.get("hours"), Some(&DynValue::Int(14)));
    assert_eq!(v.get("minutes"), Some(&DynValue::Int(35)));
    let e = interp::decode(&s, &[0x00, 0xf8]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "hours (byte offset 1): value 31 is not valid: must be at most 23"
    );
    let e = interp::decode(&s, &[0xe0, 0x07]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "minutes (byte offset 0): value 63 is not valid: must be at most 59"
    );
}

/// `_parent` and `_root` paths at every depth (`run/context_write.ksy`): the writer computes
/// each path from the value being written, which names the schema's fields only.
#[test]
fn parent_and_root_paths_are_computed_on_write() {
    let s = statepack_codegen::load_checked(
        include_str!("run/context_write.ksy"),
        "context_write.ksy",
        std::path::Path::new("context_write.ksy"),
        &[],
    )
    .unwrap_or_else(|d| panic!("{}", statepack_codegen::render(&d)));
    let map =
        |v: Vec<(&str, Given)>| Given::Map(v.into_iter().map(|(k, g)| (k.to_owned(), g)).collect());
    let entry = |name: &str, extra: &str, mark: i128| {
        map(vec![
            ("name", Given::Str(name.into())),
            ("extra", Given::Str(extra.into())),
            ("deep", map(vec![("mark", Given::Int(mark))])),
        ])
    };
    let given = map(vec![
        (
            "header",
            map(vec![
                ("count", Given::Int(2)),
                ("name_len", Given::Int(3)),
                ("flags", Given::Int(1)),
            ]),
        ),
        ("sizes", Given::List(vec![Given::Int(2), Given::Int(1)])),
        (
            "index",
            map(vec![(
                "entries",
                Given::List(vec![entry("abc", "10", 0x20), entry("def", "11", 0x21)]),
            )]),
        ),
        ("kind", Given::Int(1)),
        ("body", map(vec![("tag", Given::Str("070809".into()))])),
        ("packed", map(vec![("tag", Given::Str("010203".into()))])),
    ]);
    let (bytes, _) = interp::encode(&s, &given).unwrap();
    let mut want = vec![2, 3, 1, 2, 1];
    want.extend(b"abc\x10\x20def\x11\x21");
    want.extend([1, 7, 8, 9, 1 ^ 0x55, 2 ^ 0x55, 3 ^ 0x55]);
    assert_eq!(bytes, want);
    interp::decode(&s, &bytes).unwrap();
}

/// The size of a processed field left out of the JSON is the length of the stored bytes the
/// writer produced (`zlib` on bytes and on a user type, `xor`); given, it is checked; a
/// length its field cannot hold is refused by name.
#[test]
fn processed_sizes_left_out_are_derived_on_write() {
    let s = schema(
        "meta:\n  id: z\n  endian: be\nseq:\n  - id: len_body\n    type: u2\n  - id: tag\n    type: u1\n  - id: body\n    size: len_body\n    process: zlib\n  - id: len_head\n    type: u1\n  - id: head\n    size: len_head\n    type: point\n    process: zlib\n  - id: len_mask\n    type: u1\n  - id: mask\n    size: len_mask\n    process: xor(tag)\ntypes:\n  point:\n    seq:\n      - id: x\n        type: u4\n      - id: y\n        type: u4\n",
    );
    let text = "a body compressed by the writer, ".repeat(4);
    let point = Given::Map(vec![
        ("x".into(), Given::Int(7)),
        ("y".into(), Given::Int(9)),
    ]);
    let given = |len_body: Option<i128>, body: &str| {
        let mut m = Vec::new();
        if let Some(n) = len_body {
            m.push(("len_body".into(), Given::Int(n)));
        }
        m.extend([
            ("tag".into(), Given::Int(0x5a)),
            ("body".into(), Given::Str(body.into())),
            ("head".into(), point.clone()),
            ("mask".into(), Given::Str("0102030405".into())),
        ]);
        Given::Map(m)
    };
    let hex: String = text.bytes().map(|b| format!("{b:02x}")).collect();
    let (bytes, _) = interp::encode(&s, &given(None, &hex)).unwrap();
    let z = statepack_runtime::cbtk_columns::deflate(text.as_bytes(), 6);
    assert_eq!(&bytes[..2], &(z.len() as u16).to_be_bytes());
    assert_eq!(&bytes[3..3 + z.len()], &z[..]);
    let v = interp::decode(&s, &bytes).unwrap();
    assert_eq!(v.get("len_body"), Some(&DynValue::Int(z.len() as i128)));
    assert_eq!(
        v.get("body"),
        Some(&DynValue::Bytes(text.as_bytes().to_vec()))
    );
    assert_eq!(v.get("len_mask"), Some(&DynValue::Int(5)));
    let DynValue::Struct(head) = v.get("head").unwrap() else {
        panic!("head is a struct")
    };
    assert_eq!(head.get("y"), Some(&DynValue::Int(9)));
    // Given, the length is checked against the stored bytes.
    let e = interp::encode(&s, &given(Some(3), &hex)).unwrap_err();
    assert!(e.starts_with("body: the processed value takes"), "{e}");
    // Too long a stream for `len_body` (a u2) is refused, naming it.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let noise: String = (0..70_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            format!("{:02x}", x >> 56)
        })
        .collect();
    let Err(e) = interp::encode(&s, &given(None, &noise)) else {
        panic!("70,000 random bytes fit a u2 length once compressed")
    };
    assert!(
        e.starts_with("len_body: ") && e.contains("does not fit in 0..=65535"),
        "{e}"
    );
}

/// `size: len_chunk - 4` over `zlib`: left out, `len_chunk` is the stored length plus 4.
#[test]
fn processed_sizes_with_an_offset_are_derived_on_write() {
    let s = schema(
        "meta:\n  id: o\n  endian: be\nseq:\n  - id: len_chunk\n    type: u2\n  - id: body\n    size: len_chunk - 4\n    process: zlib\n  - id: check\n    type: u4\n",
    );
    let g = Given::Map(vec![
        ("body".into(), Given::Str("00010203040506070809".into())),
        ("check".into(), Given::Int(7)),
    ]);
    let (bytes, _) = interp::encode(&s, &g).unwrap();
    let z = statepack_runtime::cbtk_columns::deflate(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 6);
    assert_eq!(&bytes[..2], &((z.len() + 4) as u16).to_be_bytes());
    let v = interp::decode(&s, &bytes).unwrap();
    assert_eq!(
        v.get("len_chunk"),
        Some(&DynValue::Int(z.len() as i128 + 4))
    );
    assert_eq!(v.get("check"), Some(&DynValue::Int(7)));
}

/// The interpreter evaluates the check stage's typed trees: `_sizeof` and `x._sizeof` are
/// the fixed sizes the schema gives, a value instance is computed when an expression first
/// asks for it (a `size` before the instance is listed), an integer beside a float is
/// promoted.
#[test]
fn expressions_are_evaluated_as_the_check_stage_typed_them() {
    let s = schema(
        "meta:\n  id: typed\n  endian: le\nseq:\n  - id: flag\n    type: u1\n  - id: body\n    size: twice\ninstances:\n  mixed:\n    value: 'flag == 1 ? 3 + 0.5 : 2.5'\n  twice:\n    value: flag * 2\n",
    );
    let v = interp::decode(&s, &[1, 0xaa, 0xbb]).unwrap();
    assert_eq!(v.get("mixed"), Some(&DynValue::Float(3.5)));
    assert_eq!(v.get("twice"), Some(&DynValue::Int(2)));
    assert_eq!(v.get("body"), Some(&DynValue::Bytes(vec![0xaa, 0xbb])));
    let v = interp::decode(&s, &[0]).unwrap();
    assert_eq!(v.get("mixed"), Some(&DynValue::Float(2.5)));
    assert_eq!(v.get("body"), Some(&DynValue::Bytes(Vec::new())));
    let fixed = schema(
        "meta:\n  id: fixed\n  endian: le\nseq:\n  - id: a\n    type: u2\n  - id: b\n    size: 3\ninstances:\n  whole:\n    value: _sizeof\n  part:\n    value: b._sizeof\n",
    );
    let v = interp::decode(&fixed, &[1, 2, 3, 4, 5]).unwrap();
    assert_eq!(v.get("whole"), Some(&DynValue::Int(5)));
    assert_eq!(v.get("part"), Some(&DynValue::Int(3)));
}

/// Events of a streaming read, as text.
#[derive(Default)]
struct Events {
    errors: interp::InstanceErrors,
    log: Vec<String>,
}

impl interp::Sink for Events {
    fn instance_errors(&self) -> interp::InstanceErrors {
        self.errors
    }
    fn error(&mut self, message: &str) -> std::io::Result<()> {
        self.log.push(format!("error {message}"));
        Ok(())
    }
    fn key(&mut self, label: interp::Label) -> std::io::Result<()> {
        self.log.push(format!("{label:?}"));
        Ok(())
    }
    fn open_struct(&mut self, t: &'static str) -> std::io::Result<()> {
        self.log.push(format!("open {t}"));
        Ok(())
    }
    fn close_struct(&mut self, _: Option<(u64, u64)>) -> std::io::Result<()> {
        self.log.push("close".into());
        Ok(())
    }
    fn open_list(&mut self) -> std::io::Result<()> {
        self.log.push("list".into());
        Ok(())
    }
    fn close_list(&mut self, _: (u64, u64), _: usize) -> std::io::Result<()> {
        self.log.push("end list".into());
        Ok(())
    }
    fn leaf(
        &mut self,
        v: &DynValue,
        _: Option<(u64, u64)>,
        _: Option<(u64, u64)>,
    ) -> std::io::Result<()> {
        self.log.push(format!("{v}"));
        Ok(())
    }
    fn value(&mut self, v: &DynValue) -> std::io::Result<()> {
        self.log.push(format!("value {v}"));
        Ok(())
    }
}

/// An instance that fails: shown by its error in place (nothing of what was read of it
/// before it failed is handed over) with `Show`, null or a failed read as the generated
/// dynamic view has it by default, a failed read with `Strict`.
#[test]
fn failing_instances_are_shown_null_or_fatal_as_the_sink_asks() {
    let s = schema(
        "meta:\n  id: inst\n  endian: le\nseq:\n  - id: n\n    type: u1\n  - id: ofs\n    type: u1\ninstances:\n  far:\n    pos: ofs\n    type: rec\n  ratio:\n    value: 10 / n\ntypes:\n  rec:\n    seq:\n      - id: a\n        type: u1\n      - id: b\n        type: u2\n",
    );
    let bad = [0u8, 3, 7, 8];
    let mut shown = Events {
        errors: interp::InstanceErrors::Show,
        ..Events::default()
    };
    interp::stream(&s, &bad, &mut shown).expect("shown, not failed");
    let log = shown.log.join(" | ");
    assert!(
        log.ends_with("Member(\"far\", Field) | error b (byte offset 4): input ends early: 2 byte(s) needed, 0 left | Member(\"ratio\", Instance) | error in `10 / n`: division by zero (10 / 0) | close"),
        "{log}"
    );
    for errors in [
        interp::InstanceErrors::AsGenerated,
        interp::InstanceErrors::Strict,
    ] {
        let mut sink = Events {
            errors,
            ..Events::default()
        };
        let e = interp::stream(&s, &bad, &mut sink).expect_err("fails");
        assert!(e.to_string().contains("far.b (byte offset 4)"), "{e}");
    }
    // A positional instance that reads, and a value instance that fails: null as
    // generated, the error with `Show`, a failed read with `Strict`.
    let good = [0u8, 1, 7, 8];
    let mut as_generated = Events::default();
    interp::stream(&s, &good, &mut as_generated).expect("reads");
    let log = as_generated.log.join(" | ");
    assert!(
        log.ends_with("Member(\"ratio\", Instance) | value null | close"),
        "{log}"
    );
    let mut strict = Events {
        errors: interp::InstanceErrors::Strict,
        ..Events::default()
    };
    let e = interp::stream(&s, &good, &mut strict).expect_err("fails");
    assert!(
        e.to_string()
            .starts_with("ratio (byte offset 2): in `10 / n`"),
        "{e}"
    );
    assert_eq!(
        interp::decode(&s, &good).unwrap().get("ratio"),
        Some(&DynValue::Null)
    );
}

/// A value as `decode --schema` prints it, as the writer takes it back: bytes as hex, an
/// enum by name, each member of a type (an instance that failed left out).
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

/// `given` with member `key` of the object at `path` (member names) replaced by `value`
/// (`None`: left out).
fn edit(given: &mut Given, path: &[&str], key: &str, value: Option<Given>) {
    let Given::Map(m) = given else {
        panic!("not an object: {given:?}")
    };
    if let Some((first, rest)) = path.split_first() {
        let (_, inner) = m.iter_mut().find(|(k, _)| k == first).expect("member");
        return edit(inner, rest, key, value);
    }
    match value {
        Some(v) => match m.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = v,
            None => m.push((key.to_owned(), v)),
        },
        None => m.retain(|(k, _)| k != key),
    }
}

/// Decodes `bytes`, writes the value back, and requires the same bytes.
fn round_trip(s: &statepack_codegen::typed::Checked, bytes: &[u8]) -> Given {
    let v = interp::decode(s, bytes).unwrap_or_else(|e| panic!("decode: {e}"));
    let g = given_of(&DynValue::Struct(std::sync::Arc::new(v)));
    let (out, _) = interp::encode(s, &g).unwrap_or_else(|e| panic!("encode: {e}"));
    assert_eq!(out, bytes, "written back");
    g
}

#[test]
fn positional_instances_are_written_at_their_position_or_one_the_writer_derives() {
    let s = schema(
        "meta:\n  id: idx\n  endian: le\nseq:\n  - id: ofs_index\n    type: u4\n  - id: count\n    type: u1\n  - id: body\n    size: count\ninstances:\n  index:\n    pos: ofs_index\n    type: strz\n    encoding: ASCII\n",
    );
    let bytes = [6, 0, 0, 0, 1, 0xaa, b'h', b'i', 0];
    let mut g = round_trip(&s, &bytes);
    // The body grows over where the index was, and the offset is left out: the writer
    // places the index after the body and writes its offset.
    edit(&mut g, &[], "count", Some(Given::Int(3)));
    edit(&mut g, &[], "body", Some(Given::Str("aabbcc".into())));
    edit(&mut g, &[], "index", Some(Given::Str("hello".into())));
    edit(&mut g, &[], "ofs_index", None);
    let (out, _) = interp::encode(&s, &g).unwrap();
    assert_eq!(out, b"\x08\x00\x00\x00\x03\xaa\xbb\xcchello\x00");
    let back = interp::decode(&s, &out).unwrap();
    assert_eq!(back.get("ofs_index"), Some(&DynValue::Int(8)));
    assert_eq!(back.get("index"), Some(&DynValue::Str("hello".into())));
    // Given, the offset is kept: an index that now overlaps the body is refused, by name.
    edit(&mut g, &[], "ofs_index", Some(Given::Int(5)));
    let e = interp::encode(&s, &g).unwrap_err();
    assert!(
        e.contains("`instances.index`") && e.contains("overlaps"),
        "{e}"
    );
}

#[test]
fn positional_instances_of_nested_types_are_written_in_their_stream() {
    // An entry list whose data lies after it (at offsets from the start of the file), and a
    // sized type whose instance lies in its own substream.
    let s = schema(
        "meta:\n  id: dir\n  endian: le\nseq:\n  - id: n\n    type: u1\n  - id: entries\n    type: entry\n    repeat: expr\n    repeat-expr: n\n  - id: blob\n    type: blob\n    size: 4\ntypes:\n  entry:\n    seq:\n      - id: ofs\n        type: u1\n      - id: len\n        type: u1\n    instances:\n      data:\n        pos: ofs\n        size: len\n  blob:\n    seq:\n      - id: tag\n        type: u1\n    instances:\n      last:\n        pos: 3\n        type: u1\n",
    );
    let bytes = [2, 9, 2, 11, 1, 7, 0, 0, 5, 0x11, 0x22, 0x33];
    let mut g = round_trip(&s, &bytes);
    // An edited value in place.
    edit(&mut g, &["blob"], "last", Some(Given::Int(6)));
    let Given::Map(m) = &mut g else { panic!() };
    let (_, Given::List(entries)) = m.iter_mut().find(|(k, _)| k == "entries").unwrap() else {
        panic!()
    };
    edit(&mut entries[1], &[], "data", Some(Given::Str("44".into())));
    let (out, _) = interp::encode(&s, &g).unwrap();
    assert_eq!(out, [2, 9, 2, 11, 1, 7, 0, 0, 6, 0x11, 0x22, 0x44]);
}

#[test]
fn nested_value_instances_sizes_over_io_and_sizeof_are_written() {
    // A value instance of a nested type decides a later field; a size over `_io` is the
    // value's own length; `_sizeof` of a field is its static size.
    let s = schema(
        "meta:\n  id: vi\n  endian: le\nseq:\n  - id: hdr\n    type: hdr\n  - id: table\n    size: 2\n    if: hdr.has_table\n  - id: rest\n    size: hdr.total - hdr._sizeof\n  - id: body\n    size: _io.size - _io.pos - 2\n  - id: crc\n    type: u2\ntypes:\n  hdr:\n    seq:\n      - id: flags\n        type: u1\n      - id: total\n        type: u1\n    instances:\n      has_table:\n        value: flags & 1 == 1\n",
    );
    let bytes = [1, 3, 0xaa, 0xbb, 0x77, 9, 9, 9, 1, 2];
    let mut g = round_trip(&s, &bytes);
    round_trip(&s, &[0, 2, 9, 1, 2]);
    edit(&mut g, &[], "body", Some(Given::Str("0102030405".into())));
    let (out, _) = interp::encode(&s, &g).unwrap();
    assert_eq!(out, [1, 3, 0xaa, 0xbb, 0x77, 1, 2, 3, 4, 5, 1, 2]);
    // A number-type switch case and a user-type case, by the switch value.
    let s = schema(
        "meta:\n  id: sw\n  endian: le\nseq:\n  - id: tag\n    type: u1\n  - id: v\n    type:\n      switch-on: tag\n      cases:\n        1: u1\n        2: u2\n        3: pair\ntypes:\n  pair:\n    seq:\n      - id: a\n        type: u1\n      - id: b\n        type: u1\n",
    );
    round_trip(&s, &[1, 7]);
    round_trip(&s, &[2, 7, 1]);
    round_trip(&s, &[3, 7, 1]);
}

/// A positional instance too large to hold back whole is read again once it is known to
/// read (every element handed over once, nothing of a failed one): one that fails after
/// many elements shows its error only.
#[test]
fn large_positional_instances_are_shown_whole_or_by_their_error() {
    let s = schema(
        "meta:\n  id: big\n  endian: le\nseq:\n  - id: n\n    type: u2\ninstances:\n  all:\n    pos: 0\n    type: u1\n    repeat: eos\n  pairs:\n    pos: 0\n    type: u2\n    repeat: expr\n    repeat-expr: n * 2\n",
    );
    let mut bytes = vec![0u8; 40_000];
    bytes[0] = 0x98;
    bytes[1] = 0x3a; // n = 15,000: 30,000 pairs, 60,000 bytes, more than the file has
    let mut shown = Events {
        errors: interp::InstanceErrors::Show,
        ..Events::default()
    };
    interp::stream(&s, &bytes, &mut shown).expect("shown, not failed");
    let elements = shown
        .log
        .iter()
        .filter(|l| l.starts_with("Element("))
        .count();
    assert_eq!(elements, 40_000);
    let at = shown
        .log
        .iter()
        .position(|l| l == "Member(\"pairs\", Field)")
        .expect("pairs shown");
    assert!(
        shown.log[at + 1].starts_with("error ") && shown.log[at + 2] != "list",
        "{:?}",
        &shown.log[at..]
    );
    // Through the tree, the failure is that member's error.
    let root = interp::decode(&s, &bytes).expect("reads");
    assert!(root.error_of("pairs").is_some());
    let Some(DynValue::List(all)) = root.get("all") else {
        panic!("all")
    };
    assert_eq!(all.len(), 40_000);
}

/// A trailer at `_io.size - k` goes after everything else written, so that the stream ends
/// `k` bytes after it; in a sized substream it is `k` bytes before the substream's end.
#[test]
fn trailers_from_the_end_of_the_stream_are_placed_there() {
    let s = schema(
        "meta:\n  id: tr\n  endian: le\nseq:\n  - id: n\n    type: u1\n  - id: body\n    size: n\n  - id: box\n    type: boxed\n    size: 4\ninstances:\n  footer:\n    pos: _io.size - 4\n    type: foot\ntypes:\n  foot:\n    seq:\n      - id: magic\n        contents: FT\n      - id: v\n        type: u2\n  boxed:\n    seq:\n      - id: a\n        type: u1\n    instances:\n      last:\n        pos: _io.size - 1\n        type: u1\n",
    );
    let bytes = [2, 0xaa, 0xbb, 1, 0, 0, 9, b'F', b'T', 7, 0];
    let mut g = round_trip(&s, &bytes);
    edit(&mut g, &[], "n", Some(Given::Int(3)));
    edit(&mut g, &[], "body", Some(Given::Str("010203".into())));
    let (out, _) = interp::encode(&s, &g).unwrap();
    assert_eq!(out, [3, 1, 2, 3, 1, 0, 0, 9, b'F', b'T', 7, 0]);
}

/// `_io.pos` while writing is the position in the stream being written; bytes no field or
/// instance reads, between what is written and an instance, are written as zeros.
#[test]
fn instance_positions_over_io_pos_are_written_and_gaps_are_zero() {
    let s = schema(
        "meta:\n  id: gap\n  endian: le\nseq:\n  - id: ofs\n    type: u1\n  - id: recs\n    type: rec\n    repeat: expr\n    repeat-expr: 2\ntypes:\n  rec:\n    seq:\n      - id: a\n        type: u1\n    instances:\n      next:\n        pos: _io.pos + 1\n        type: u1\ninstances:\n  far:\n    pos: ofs\n    type: u1\n",
    );
    let bytes = [6, 10, 20, 30, 0, 0x55, 99];
    let v = interp::decode(&s, &bytes).unwrap();
    let g = given_of(&DynValue::Struct(std::sync::Arc::new(v.clone())));
    let (out, _) = interp::encode(&s, &g).unwrap();
    assert_eq!(out, [6, 10, 20, 30, 0, 0, 99]);
    let back = interp::decode(&s, &out).unwrap();
    assert!(interp::compare(&v, &back).is_ok());
}

#[test]
fn a_processed_switch_reads_and_writes_its_case_in_the_processed_bytes() {
    let s = schema(
        "meta:\n  id: psw\nseq:\n  - id: kind\n    type: u1\n  - id: body\n    size: 3\n    process: xor(0x0f)\n    type:\n      switch-on: kind\n      cases:\n        1: one\n        2: two\ntypes:\n  one:\n    seq:\n      - id: a\n        type: u1\n      - id: rest\n        size: 2\n  two:\n    seq:\n      - id: b\n        type: u1\n",
    );
    let bytes = [1, 0x0e, 0x0d, 0x0c];
    let v = interp::decode(&s, &bytes).unwrap();
    let Some(DynValue::Struct(body)) = v.get("body") else {
        panic!("{v:?}")
    };
    assert_eq!(body.get("a"), Some(&DynValue::Int(1)));
    assert_eq!(body.get("rest"), Some(&DynValue::Bytes(vec![2, 3])));
    round_trip(&s, &bytes);
    // A case that leaves bytes of the processed substream unread is read all the same.
    let v = interp::decode(&s, &[2, 0x0e, 0x0d, 0x0c]).unwrap();
    let Some(DynValue::Struct(body)) = v.get("body") else {
        panic!("{v:?}")
    };
    assert_eq!(body.get("b"), Some(&DynValue::Int(1)));
}

#[test]
fn zlib_with_a_terminator_is_read_and_written() {
    let s = schema(
        "meta:\n  id: zt\nseq:\n  - id: packed\n    terminator: 0xff\n    process: zlib\n    type: inner\n  - id: after\n    type: u1\ntypes:\n  inner:\n    seq:\n      - id: text\n        size-eos: true\n        type: str\n        encoding: ASCII\n",
    );
    let packed = statepack_runtime::zlib::deflate(b"hello hello hello", 6);
    assert!(
        !packed.contains(&0xff),
        "pick a text whose stream has no 0xff"
    );
    let mut bytes = packed.clone();
    bytes.extend([0xff, 7]);
    let v = interp::decode(&s, &bytes).unwrap();
    let Some(DynValue::Struct(inner)) = v.get("packed") else {
        panic!("{v:?}")
    };
    assert_eq!(
        inner.get("text"),
        Some(&DynValue::Str("hello hello hello".into()))
    );
    assert_eq!(v.get("after"), Some(&DynValue::Int(7)));
    // Written at level 6, as this stream was: the same bytes.
    round_trip(&s, &bytes);
}

#[test]
fn the_root_type_again_at_a_position_is_read_level_by_level() {
    // The root type held again at a fixed position, named only by a value instance: each
    // level reads the next, and the chain ends as that level's error once instances nest
    // three deep at one offset.
    let s = schema(
        "meta:\n  id: top\nseq:\n  - id: code\n    type: u1\ninstances:\n  again:\n    pos: 1\n    type: top\n  again_cast:\n    value: again.as<top>\n",
    );
    let v = interp::decode(&s, &[0x50, 0x41]).unwrap();
    let Some(DynValue::Struct(again)) = v.get("again") else {
        panic!("{v:?}")
    };
    assert_eq!(again.get("code"), Some(&DynValue::Int(0x41)));
    let Some(DynValue::Struct(cast)) = v.get("again_cast") else {
        panic!("{v:?}")
    };
    assert_eq!(cast.get("code"), Some(&DynValue::Int(0x41)));
    let mut level = again.clone();
    let mut depth = 1;
    while let Some(DynValue::Struct(next)) = level.get("again") {
        level = next.clone();
        depth += 1;
    }
    assert_eq!(depth, 3);
    let e = level.error_of("again").expect("the deepest level's error");
    assert!(
        e.to_string()
            .contains("nest more than 3 deep at byte offset 1"),
        "{e}"
    );
    round_trip(&s, &[0x50, 0x41]);
}

#[test]
fn io_params_take_streams_and_their_sizes_are_the_values_on_write() {
    let s = schema(
        "meta:\n  id: io_param\nseq:\n  - id: first\n    size: 1\n    type: block\n  - id: one\n    type: 'holder(first.foo == 0xff ? first._io : _io)'\ntypes:\n  block:\n    seq:\n      - id: foo\n        type: u1\n  holder:\n    params:\n      - id: s\n        type: io\n    seq:\n      - id: buf\n        size: s.size - s.pos\n",
    );
    // `first._io`: its substream, read to its end (pos 1 of size 1): nothing left.
    let v = interp::decode(&s, &[0xff]).unwrap();
    let Some(DynValue::Struct(one)) = v.get("one") else {
        panic!("one: {:?}", v.get("one"));
    };
    assert_eq!(one.get("s"), Some(&DynValue::Io { pos: 1, size: 1 }));
    assert_eq!(one.get("buf"), Some(&DynValue::Bytes(vec![])));
    // `_io`: the root's stream where `one` starts (pos 1 of size 3): two bytes.
    let v = interp::decode(&s, &[0, 7, 8]).unwrap();
    let Some(DynValue::Struct(one)) = v.get("one") else {
        panic!("one: {:?}", v.get("one"));
    };
    assert_eq!(one.get("s"), Some(&DynValue::Io { pos: 1, size: 3 }));
    assert_eq!(one.get("buf"), Some(&DynValue::Bytes(vec![7, 8])));
    // A param is not given on write (`decode --schema` does not print it); the stream's size
    // is not known while writing: the bytes given decide, and read back so.
    let mut g = given_of(&DynValue::Struct(std::sync::Arc::new(v)));
    edit(&mut g, &["one"], "s", None);
    let (out, _) = interp::encode(&s, &g).unwrap();
    assert_eq!(out, [0, 7, 8]);
    edit(&mut g, &["one"], "buf", Some(Given::Str("070809".into())));
    let (out, _) = interp::encode(&s, &g).unwrap();
    assert_eq!(out, [0, 7, 8, 9]);
    let back = interp::decode(&s, &out).unwrap();
    let Some(DynValue::Struct(one)) = back.get("one") else {
        panic!("one: {:?}", back.get("one"));
    };
    assert_eq!(one.get("buf"), Some(&DynValue::Bytes(vec![7, 8, 9])));
    // Any other use of a stream param is not known on write, and is refused by name.
    let s = schema(
        "meta:\n  id: io_param_if\nseq:\n  - id: one\n    type: 'holder(_io)'\ntypes:\n  holder:\n    params:\n      - id: s\n        type: io\n    seq:\n      - id: buf\n        type: u1\n        if: s.size > 0\n",
    );
    let v = interp::decode(&s, &[5]).unwrap();
    let mut g = given_of(&DynValue::Struct(std::sync::Arc::new(v)));
    edit(&mut g, &["one"], "s", None);
    let e = interp::encode(&s, &g).unwrap_err();
    assert!(e.contains("one.buf"), "{e}");
}

#[test]
fn an_instance_reads_from_a_chosen_stream_with_io_of_its_own_type() {
    let s = schema(
        "meta:\n  id: io_pick\n  endian: le\nseq:\n  - id: a\n    size: 4\n    type: slot\n  - id: b\n    size: 4\n    type: slot\n  - id: sel\n    type: u1\ninstances:\n  peek:\n    io: 'sel == 1 ? b._io : a._io'\n    pos: 1\n    size: '_io.pos == 9 ? 2 : 1'\n  which:\n    value: 'sel == 1 ? b._io : a._io'\ntypes:\n  slot:\n    seq:\n      - id: x\n        type: u1\n      - id: y\n        type: u1\n      - id: z\n        type: u2\n",
    );
    // `_io.pos` in the instance's `size` is the root's stream (9, after `sel`), not the
    // chosen one's: two bytes from position 1 of `b`.
    let bytes = [1, 2, 3, 4, 5, 6, 7, 8, 1];
    let v = interp::decode(&s, &bytes).unwrap();
    assert_eq!(v.get("peek"), Some(&DynValue::Bytes(vec![6, 7])));
    assert_eq!(v.get("which"), Some(&DynValue::Io { pos: 4, size: 4 }));
    let mut g = round_trip(&s, &bytes);
    let v = interp::decode(&s, &[1, 2, 3, 4, 5, 6, 7, 8, 0]).unwrap();
    assert_eq!(v.get("peek"), Some(&DynValue::Bytes(vec![2, 3])));
    // The instance's bytes are `b`'s and are written as `b` has them: a differing
    // instance given reads back as `b`'s bytes (which `encode --schema` then refuses).
    edit(&mut g, &[], "peek", Some(Given::Str("0909".into())));
    let (out, _) = interp::encode(&s, &g).unwrap();
    assert_eq!(out, bytes);
    // One its type cannot write at all is refused by name.
    edit(&mut g, &[], "peek", Some(Given::Int(3)));
    let e = interp::encode(&s, &g).unwrap_err();
    assert!(e.contains("peek"), "{e}");
}

/// `_root` given whole to a user-type param, and a list's `.size` seen from inside its own
/// elements (the elements read before the current one), read and written back.
#[test]
fn root_given_whole_and_the_list_read_so_far() {
    let s = statepack_codegen::load_checked(
        include_str!("run/context_whole.ksy"),
        "context_whole.ksy",
        std::path::Path::new("context_whole.ksy"),
        &[],
    )
    .unwrap_or_else(|d| panic!("{}", statepack_codegen::render(&d)));
    let bytes = [2, 2, 0xa1, 0xa2, 0xb1, 0xc1, 0xc2];
    let v = interp::decode(&s, &bytes).unwrap();
    let Some(DynValue::List(parts)) = v.get("parts") else {
        panic!("parts: {:?}", v.get("parts"))
    };
    let lens: Vec<Option<&DynValue>> = parts
        .iter()
        .map(|p| match p {
            DynValue::Struct(p) => p.get("data"),
            _ => None,
        })
        .collect();
    assert_eq!(
        lens,
        [
            Some(&DynValue::Bytes(vec![0xa1, 0xa2])),
            Some(&DynValue::Bytes(vec![0xb1]))
        ]
    );
    let Some(DynValue::Struct(check)) = v.get("check") else {
        panic!("check: {:?}", v.get("check"))
    };
    assert_eq!(check.get("is_large"), Some(&DynValue::Bool(true)));
    assert_eq!(check.get("last_len"), Some(&DynValue::Int(1)));
    let mut g = round_trip(&s, &bytes);
    // A part of the wrong length for its place is refused, by name.
    edit(
        &mut g,
        &[],
        "parts",
        Some(Given::List(vec![
            Given::Map(vec![("data".into(), Given::Str("a1a2a3".into()))]),
            Given::Map(vec![("data".into(), Given::Str("b1".into()))]),
        ])),
    );
    let e = interp::encode(&s, &g).unwrap_err();
    assert!(e.contains("parts[0].data"), "{e}");
}

/// A `struct[]` param given list literals of values of two user types: read, and written
/// back with the lists given again from the values written.
#[test]
fn struct_list_params_hold_values_of_several_types() {
    let s = statepack_codegen::load_checked(
        include_str!("run/params_any_struct.ksy"),
        "params_any_struct.ksy",
        std::path::Path::new("params_any_struct.ksy"),
        &[],
    )
    .unwrap_or_else(|d| panic!("{}", statepack_codegen::render(&d)));
    let bytes = [1, 2, 0xd1, 0xd2, 0xd3, 0xe1, 0xe2];
    let v = interp::decode(&s, &bytes).unwrap();
    let Some(DynValue::List(pair)) = v.get("pair") else {
        panic!("pair: {:?}", v.get("pair"))
    };
    let types: Vec<&str> = pair
        .iter()
        .map(|x| match x {
            DynValue::Struct(x) => x.type_name,
            _ => "?",
        })
        .collect();
    assert_eq!(types, ["bar", "foo"]);
    let Some(DynValue::Struct(through)) = v.get("through") else {
        panic!("through: {:?}", v.get("through"))
    };
    assert_eq!(
        through.get("data"),
        Some(&DynValue::Bytes(vec![0xe1, 0xe2]))
    );
    // Written from the fields alone (as `decode --schema` prints them): the writer gives
    // each holder its list again, and each reads as many bytes as the list holds values.
    let map =
        |v: Vec<(&str, Given)>| Given::Map(v.into_iter().map(|(k, g)| (k.to_owned(), g)).collect());
    let given = map(vec![
        ("one", map(vec![("f", Given::Int(1))])),
        ("two", map(vec![("b", Given::Int(2))])),
        ("direct", map(vec![("data", Given::Str("d1d2d3".into()))])),
        ("through", map(vec![("data", Given::Str("e1e2".into()))])),
    ]);
    let (out, _) = interp::encode(&s, &given).unwrap();
    assert_eq!(out, bytes);
}

/// `io: _root.strings._io` in a type the root reads before `strings`: each entry's name is
/// read from the strings' substream, as the generated reader reads it on first use.
#[test]
fn an_instance_reads_from_a_stream_the_root_reads_later() {
    let s = schema(
        "meta:\n  id: t\n  endian: le\nseq:\n  - id: n\n    type: u1\n  - id: entries\n    type: entry\n    repeat: expr\n    repeat-expr: n\n  - id: strings\n    type: blob\n    size-eos: true\ntypes:\n  entry:\n    seq:\n      - id: ofs\n        type: u1\n    instances:\n      name:\n        io: _root.strings._io\n        pos: ofs\n        type: strz\n        encoding: ASCII\n  blob:\n    seq:\n      - id: rest\n        size-eos: true\n",
    );
    let v = interp::decode(&s, b"\x02\x03\x00ab\0cd\0").unwrap();
    let Some(DynValue::List(es)) = v.get("entries") else {
        panic!("{v:?}")
    };
    let names: Vec<_> = es
        .iter()
        .map(|e| match e {
            DynValue::Struct(e) => e.get("name").cloned(),
            _ => None,
        })
        .collect();
    assert_eq!(
        names,
        vec![
            Some(DynValue::Str("cd".into())),
            Some(DynValue::Str("ab".into()))
        ]
    );
    // A position past the strings' end fails there (3 bytes), not in the root's stream, as
    // the instance's own error.
    let v = interp::decode(&s, b"\x01\x09ab\0").unwrap();
    assert!(
        format!("{v:?}").contains("9 byte(s) needed, 3 left"),
        "{v:?}"
    );
}

#[test]
fn zlib_streams_of_every_level_and_nan_bits_are_written_back_as_read() {
    // A zlib field whose size is given: the stream of the level that made it, byte for
    // byte, though level 6 may make another stream of the same size.
    let s = schema(
        "meta:\n  id: z\n  endian: le\nseq:\n  - id: len_body\n    type: u2\n  - id: body\n    size: len_body\n    process: zlib\n",
    );
    let data: Vec<u8> = (0..2000u32).map(|i| (i * i % 251) as u8).collect();
    let order = [9, 6, 1, 0, 2, 3, 4, 5, 7, 8];
    let framed = |z: &[u8]| {
        let mut bytes = (z.len() as u16).to_le_bytes().to_vec();
        bytes.extend(z);
        bytes
    };
    for (i, level) in order.into_iter().enumerate() {
        let z = statepack_runtime::zlib::deflate(&data, level);
        // The first level in the order whose stream has this size is the one written: this
        // stream, unless an earlier level makes another of the same size.
        let first = order[..i]
            .iter()
            .map(|l| statepack_runtime::zlib::deflate(&data, *l))
            .find(|y| y.len() == z.len());
        match first {
            None => {
                round_trip(&s, &framed(&z));
            }
            Some(y) => {
                let v = interp::decode(&s, &framed(&z)).unwrap();
                let g = given_of(&DynValue::Struct(std::sync::Arc::new(v)));
                assert_eq!(
                    interp::encode(&s, &g).unwrap().0,
                    framed(&y),
                    "level {level}"
                );
            }
        }
    }
    // Every NaN of an `f4` and an `f8` keeps its sign and payload.
    let s = schema(
        "meta:\n  id: n\n  endian: le\nseq:\n  - id: a\n    type: f4\n  - id: b\n    type: f8\n",
    );
    for (a, b) in [
        (0xffc0_0000u32, 0xfff8_0000_0000_0000u64),
        (0x7f80_0001, 0x7ff0_0000_0000_0001),
        (0x7fc0_0000, 0x7ff8_0000_0000_0000),
    ] {
        let mut bytes = a.to_le_bytes().to_vec();
        bytes.extend(b.to_le_bytes());
        round_trip(&s, &bytes);
    }
}

/// `add_fx(key, up, pad)`: every byte plus `key` (minus when `up` is false), then `pad`
/// appended; encoding takes `pad` off and undoes the addition.
struct AddFx {
    add: u8,
    pad: Vec<u8>,
}

impl statepack_runtime::process::CustomProcessor for AddFx {
    fn decode(&self, stored: &[u8]) -> Result<Vec<u8>, String> {
        let mut v: Vec<u8> = stored.iter().map(|b| b.wrapping_add(self.add)).collect();
        v.extend_from_slice(&self.pad);
        Ok(v)
    }
    fn encode(&self, value: &[u8]) -> Result<Vec<u8>, String> {
        let body = value
            .strip_suffix(self.pad.as_slice())
            .ok_or("the value does not end with the pad")?;
        Ok(body.iter().map(|b| b.wrapping_sub(self.add)).collect())
    }
}

fn add_fx(ext: interp::Extensions) -> interp::Extensions {
    ext.processor("nested.add_fx", |a: &interp::ProcArgs<'_>| {
        a.expect_len(3)?;
        let k = a.int(0)?.rem_euclid(256) as u8;
        let add = if a.bool(1)? { k } else { k.wrapping_neg() };
        let pad = a.bytes(2)?.to_vec();
        Ok(Box::new(AddFx { add, pad }) as Box<dyn statepack_runtime::process::CustomProcessor>)
    })
}

fn hex_of(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn a_registered_processor_is_built_from_the_evaluated_arguments() {
    let s = schema(
        "meta:\n  id: fx\nseq:\n  - id: key\n    type: u1\n  - id: buf\n    size: 3\n    process: nested.add_fx(key + 1, key < 100, [0xee, 0xff])\n",
    );
    let ext = add_fx(interp::Extensions::default());
    assert!(interp::unsupported_with(&s, &ext).is_none());
    let input = [4u8, 10, 20, 30];
    let v = interp::decode_with(&s, &input, &ext).unwrap();
    assert_eq!(
        v.get("buf"),
        Some(&DynValue::Bytes(vec![15, 25, 35, 0xee, 0xff]))
    );
    // Written back through the processor's `encode`, byte-identical.
    let given = Given::Map(vec![
        ("key".into(), Given::Int(4)),
        ("buf".into(), Given::Str(hex_of(&[15, 25, 35, 0xee, 0xff]))),
    ]);
    let (bytes, _) = interp::encode_with(&s, &given, &ext).unwrap();
    assert_eq!(bytes, input);
    // The processor's own refusal names the field.
    let bad = Given::Map(vec![
        ("key".into(), Given::Int(4)),
        ("buf".into(), Given::Str(hex_of(&[15, 25, 35]))),
    ]);
    let e = interp::encode_with(&s, &bad, &ext).unwrap_err();
    assert!(
        e.contains("buf") && e.contains("does not end with the pad"),
        "{e}"
    );
    // An argument of the wrong kind is the factory's error, with the field's path.
    let wrong = schema(
        "meta:\n  id: fx\nseq:\n  - id: buf\n    size: 1\n    process: nested.add_fx(1, 2, [0])\n",
    );
    let e = interp::decode_with(&wrong, &[0], &ext).unwrap_err();
    let m = e.to_string();
    assert!(
        m.contains("buf") && m.contains("argument 2 is an integer, not a boolean"),
        "{m}"
    );
}

#[test]
fn a_processors_output_counts_against_the_files_budget() {
    let s = schema(
        "meta:\n  id: fx\nseq:\n  - id: buf\n    size: 4\n    process: nested.add_fx(0, true, big)\n    repeat: expr\n    repeat-expr: 2\ninstances:\n  big:\n    value: '[0]'\n",
    );
    let ext =
        interp::Extensions::default().processor("nested.add_fx", |_: &interp::ProcArgs<'_>| {
            Ok(Box::new(AddFx {
                add: 0,
                pad: vec![0; 40_000],
            })
                as Box<dyn statepack_runtime::process::CustomProcessor>)
        });
    // Two fields of 40 KB each: the second passes the budget of 64 KiB plus 1,032 bytes per
    // input byte (about 74 KB for 8 bytes).
    let e = interp::decode_with(&s, &[0; 8], &ext).unwrap_err();
    assert!(e.to_string().contains("budget"), "{e}");
}

/// The opaque type `pair`, as a schema of its own.
fn pair_schema() -> statepack_codegen::typed::Checked {
    schema("meta:\n  id: pair\n  endian: le\nseq:\n  - id: one\n    type: u1\n  - id: two\n    type: u2\n")
}

#[test]
fn an_opaque_type_is_read_and_written_as_another_schema() {
    let s = schema(
        "meta:\n  id: outer\n  ks-opaque-types: true\nseq:\n  - id: a\n    type: pair\n  - id: b\n    size: 3\n    type: pair\n  - id: c\n    size: 3\n    process: xor(0xff)\n    type: pair\n  - id: tail\n    type: u1\n",
    );
    let ext = interp::Extensions::default()
        .opaque("pair", interp::SchemaOpaque::new(pair_schema()).unwrap());
    let input = [1u8, 2, 0, 3, 4, 0, 0xf9, 0xfa, 0xff, 7];
    let v = interp::decode_with(&s, &input, &ext).unwrap();
    let member = |name: &str, m: &str| match v.get(name) {
        Some(DynValue::Struct(p)) => {
            assert_eq!(p.type_name, "pair");
            p.get(m).cloned()
        }
        other => panic!("{name}: {other:?}"),
    };
    assert_eq!(member("a", "two"), Some(DynValue::Int(2)));
    assert_eq!(member("b", "one"), Some(DynValue::Int(3)));
    assert_eq!(member("c", "two"), Some(DynValue::Int(5)));
    assert_eq!(v.get("tail"), Some(&DynValue::Int(7)));
    // The streaming read hands the opaque value over as a user type of whole values.
    let mut sink = Events::default();
    let root = interp::stream_with(&s, &input, &mut sink, &ext).unwrap();
    assert_eq!(root.read_extent(), 10);
    let shown = sink.log.join(" | ");
    assert!(shown.starts_with("open outer | Member(\"a\", Field) | open pair | Member(\"one\", Field) | 1 | Member(\"two\", Field) | 2 | close"), "{shown}");
    assert!(
        shown.ends_with("Member(\"tail\", Field) | 7 | close"),
        "{shown}"
    );
    // Written back through the schema's writer, byte-identical.
    let pair = |one: i128, two: i128| {
        Given::Map(vec![
            ("one".into(), Given::Int(one)),
            ("two".into(), Given::Int(two)),
        ])
    };
    let given = Given::Map(vec![
        ("a".into(), pair(1, 2)),
        ("b".into(), pair(3, 4)),
        ("c".into(), pair(6, 5)),
        ("tail".into(), Given::Int(7)),
    ]);
    let (bytes, _) = interp::encode_with(&s, &given, &ext).unwrap();
    assert_eq!(bytes, input);
}

#[test]
fn processors_and_opaque_types_not_registered_are_refused_by_name() {
    let fx = schema("meta:\n  id: fx\nseq:\n  - id: a\n    size: 2\n    process: my_fx(1)\n");
    let ext = add_fx(interp::Extensions::default())
        .opaque("pair", interp::SchemaOpaque::new(pair_schema()).unwrap());
    let why = interp::unsupported_with(&fx, &ext).expect("refused");
    assert!(
        why.contains("seq[0]: process: my_fx") && why.contains("none is registered"),
        "{why}"
    );
    let e = interp::decode_with(&fx, &[1, 2], &ext)
        .unwrap_err()
        .to_string();
    assert!(e.contains("my_fx"), "{e}");
    let e = interp::encode_with(
        &fx,
        &Given::Map(vec![("a".into(), Given::Str("0102".into()))]),
        &ext,
    )
    .unwrap_err();
    assert!(e.contains("my_fx"), "{e}");
    let op = schema(
        "meta:\n  id: op\n  ks-opaque-types: true\nseq:\n  - id: a\n    type: pair\n  - id: b\n    type: triple\n",
    );
    let why = interp::unsupported_with(&op, &ext).expect("refused");
    assert!(why.contains("opaque types (triple)"), "{why}");
    let why = interp::unsupported(&op).expect("refused");
    assert!(why.contains("opaque types (pair, triple)"), "{why}");
}

/// A Rust opaque type: one byte, shown as a struct of one member.
#[derive(Debug)]
struct Byte(u8);

impl statepack_runtime::reflect::Reflect for Byte {
    fn schema_type(&self) -> &'static str {
        "byte"
    }
    fn member(&self, name: &str) -> Option<statepack_runtime::reflect::Value<'_>> {
        (name == "value").then_some(statepack_runtime::reflect::Value::Int(i128::from(self.0)))
    }
    fn member_names(&self) -> &'static [&'static str] {
        &["value"]
    }
}

impl statepack_runtime::reflect::ToValue for Byte {
    fn to_value(&self) -> statepack_runtime::reflect::Value<'_> {
        statepack_runtime::reflect::Value::Struct(self)
    }
}

impl statepack_runtime::process::OpaqueType for Byte {
    const MIN_LEN: usize = 1;
    fn read_from<T: statepack_runtime::io::Tracer>(
        r: &mut statepack_runtime::io::ByteReader<'_, T>,
    ) -> Result<Self, statepack_runtime::io::DecodeError> {
        Ok(Byte(r.take(1)?[0]))
    }
    fn write_to(
        &self,
        w: &mut statepack_runtime::io::ByteWriter,
    ) -> Result<(), statepack_runtime::io::EncodeError> {
        w.write_bytes(&[self.0]);
        Ok(())
    }
    fn encoded_len(&self) -> usize {
        1
    }
}

#[test]
fn a_byte_array_or_string_shorter_than_its_size_is_refused() {
    let s = schema(
        "meta:\n  id: short\nseq:\n  - id: n\n    type: u1\n  - id: body\n    size: n\n  - id: name\n    type: str\n    size: 4\n    encoding: ASCII\n  - id: padded\n    size: 3\n    pad-right: 0x20\n  - id: term\n    type: strz\n    size: 3\n    encoding: ASCII\n",
    );
    let mut g = round_trip(
        &s,
        &[
            2, 0xaa, 0xbb, b'a', b'b', b'c', b'd', 1, 0x20, 0x20, b'x', 0, 0,
        ],
    );
    edit(&mut g, &[], "body", Some(Given::Str("aa".into())));
    let e = interp::encode(&s, &g).unwrap_err();
    assert_eq!(e, "body: 1 byte(s) given, but the size `n` is 2 (only a field with `pad-right` or a terminator is padded)");
    edit(&mut g, &[], "body", Some(Given::Str("aabb".into())));
    edit(&mut g, &[], "name", Some(Given::Str("ab".into())));
    let e = interp::encode(&s, &g).unwrap_err();
    assert!(e.starts_with("name: 2 byte(s) given"), "{e}");
    // Padded or terminated fields are filled as the generated writer fills them.
    edit(&mut g, &[], "name", Some(Given::Str("abcd".into())));
    edit(&mut g, &[], "term", Some(Given::Str("".into())));
    let (out, _) = interp::encode(&s, &g).unwrap();
    assert_eq!(out[10..], [0, 0, 0]);
}

#[test]
fn an_opaque_type_is_read_and_written_as_a_rust_type() {
    let s = schema(
        "meta:\n  id: op\n  ks-opaque-types: true\nseq:\n  - id: items\n    type: byte\n    repeat: expr\n    repeat-expr: 2\n",
    );
    let read_only =
        interp::Extensions::default().opaque("byte", interp::RustOpaque::<Byte>::new("byte"));
    let v = interp::decode_with(&s, &[5, 6], &read_only).unwrap();
    let Some(DynValue::List(items)) = v.get("items") else {
        panic!("{v:?}")
    };
    assert!(matches!(&items[1], DynValue::Struct(b) if b.get("value") == Some(&DynValue::Int(6))));
    let given = Given::Map(vec![(
        "items".into(),
        Given::List(vec![
            Given::Map(vec![("value".into(), Given::Int(5))]),
            Given::Map(vec![("value".into(), Given::Int(6))]),
        ]),
    )]);
    let e = interp::encode_with(&s, &given, &read_only).unwrap_err();
    assert!(e.contains("byte is registered for reading only"), "{e}");
    let rw = interp::Extensions::default().opaque(
        "byte",
        interp::RustOpaque::<Byte>::new("byte").writing(|g| match g {
            Given::Map(m) => match m.first() {
                Some((_, Given::Int(v @ 0..=255))) => Ok(Byte(*v as u8)),
                _ => Err("expected {\"value\": 0..255}".into()),
            },
            _ => Err("expected an object".into()),
        }),
    );
    let (bytes, _) = interp::encode_with(&s, &given, &rw).unwrap();
    assert_eq!(bytes, [5, 6]);
    // A count is checked against the type's `MIN_LEN` before the list grows.
    let bomb = schema(
        "meta:\n  id: op\n  ks-opaque-types: true\nseq:\n  - id: n\n    type: u1\n  - id: items\n    type: byte\n    repeat: expr\n    repeat-expr: n\n",
    );
    let e = interp::decode_with(&bomb, &[200, 1, 2], &read_only).unwrap_err();
    assert!(
        e.to_string()
            .contains("count 200 needs at least 200 byte(s) but only 2 left"),
        "{e}"
    );
}
