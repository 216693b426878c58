//! Positional instances read on first use (`statepack_runtime::lazy::Lazy`): an instance that
//! nothing asks for is never read, so a view the data does not have does not fail the
//! decode; asking for it gives its error with its path and byte offset; reads on access keep
//! the input's budgets; the writer writes what it can read, so decode then encode stays
//! byte-identical.

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/lazy_instances.rs"]
mod lazy_instances;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/lazy_budget.rs"]
mod lazy_budget;

use lazy_instances::LazyInstances;
use statepack_runtime::io::DecodeErrorKind;
use statepack_runtime::reflect::{Reflect, Value};

/// Two inodes: a directory at 7 (one entry: inode 0xff, named `a`) and a file at 11
/// (`hi\n`). The directory's bytes are not UTF-8 text; the file's are not a listing.
const IMAGE: [u8; 14] = [
    2, // num_inodes
    0x10, 0x04, 7, // mode 1 (directory), len_data 4, ofs_data 7
    0x20, 0x03, 11, // mode 2 (file), len_data 3, ofs_data 11
    1, 0xff, b'a', 0, // the listing
    b'h', b'i', b'\n', // the text
];

#[test]
fn a_view_nobody_asks_for_does_not_fail_the_decode() {
    let v = LazyInstances::decode(&IMAGE).unwrap();
    let (dir, file) = (&v.inodes[0], &v.inodes[1]);
    assert!(!dir.as_dir.is_read() && !file.as_file.is_read());
    // The view each mode names reads.
    let listing = dir.as_dir.get().unwrap();
    assert_eq!(listing.entries.len(), 1);
    assert_eq!(
        (listing.entries[0].inode, listing.entries[0].name.as_str()),
        (0xff, "a")
    );
    assert_eq!(file.as_file.get().unwrap(), "hi\n");
    // The other one fails when asked for, naming its path and where.
    let e = file.as_dir.get().unwrap_err();
    assert!(e.path.to_string().starts_with("as_dir.entries"), "{e}");
    assert!(e.to_string().contains("only 2 left"), "{e}");
    let e = dir.as_file.get().unwrap_err();
    assert_eq!(e.path.to_string(), "as_file", "{e}");
    assert_eq!(e.offset, 7, "{e}");
    assert!(matches!(e.kind, DecodeErrorKind::BadString { .. }), "{e}");
    // The same error on every call; the good view is kept.
    assert_eq!(dir.as_file.get().unwrap_err(), e);
    assert!(dir.as_dir.is_read());
}

#[test]
fn decode_then_encode_is_byte_identical_with_views_that_fail() {
    let v = LazyInstances::decode(&IMAGE).unwrap();
    // Nothing read yet: the writer reads each view, writes those that read, and leaves the
    // others out (their bytes are those the root kept).
    assert_eq!(v.encode().unwrap(), IMAGE);
    // Changed through a view: the new text goes where the inode says.
    let mut w = LazyInstances::decode(&IMAGE).unwrap();
    w.inodes[1].as_file.set("yo\n".into());
    let out = w.encode().unwrap();
    assert_eq!(&out[11..], b"yo\n");
    assert_eq!(&out[..11], &IMAGE[..11]);
    // Clones share the read still to do, and compare by value.
    let a = LazyInstances::decode(&IMAGE).unwrap();
    let b = a.clone();
    assert_eq!(a, b);
    assert_ne!(a, w);
}

#[test]
fn the_dynamic_view_and_debug_show_a_failed_read_as_its_error() {
    let v = LazyInstances::decode(&IMAGE).unwrap();
    match v.inodes[1].member("as_dir") {
        Some(Value::Error(e)) => assert!(e.path.to_string().starts_with("as_dir.entries"), "{e}"),
        other => panic!("expected the read's error, got {other:?}"),
    }
    match v.inodes[1].member("as_file") {
        Some(Value::Str(s)) => assert_eq!(s, "hi\n"),
        other => panic!("expected the text, got {other:?}"),
    }
    let shown = format!("{:?}", v.inodes[0]);
    assert!(
        shown.contains("as_file: <not readable: as_file (byte offset 7)"),
        "{shown}"
    );
}

#[test]
fn built_values_and_serde_hold_plain_values() {
    use lazy_instances::{Dir, DirEntry, Inode};
    // A value built by hand: `Lazy::from`, `Default`, `..Default::default()`. Both views
    // are written over the same 4 bytes, so they must agree: a listing of one entry
    // (inode `a`, name `b`) that is also text.
    let built = LazyInstances {
        inodes: vec![Inode {
            mode: 1,
            len_data: 4,
            ofs_data: 4,
            as_file: "\u{1}ab\u{0}".to_string().into(),
            as_dir: Box::new(Dir {
                entries: vec![DirEntry {
                    inode: b'a',
                    name: "b".into(),
                }],
                ..Default::default()
            })
            .into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let out = built.encode().unwrap();
    assert_eq!(out, [1, 0x10, 0x04, 4, 1, b'a', b'b', 0]);
    assert_eq!(LazyInstances::decode(&out).unwrap(), built);
    // JSON holds the values; read back, they are plain values again.
    let v = LazyInstances::decode(&IMAGE).unwrap();
    let json = serde_json::to_string(&v.inodes[1].as_file).unwrap();
    assert_eq!(json, "\"hi\\n\"");
    // A view that cannot be read cannot be written as JSON: the error says why.
    let e = serde_json::to_string(&v.inodes[1]).unwrap_err().to_string();
    assert!(e.contains("as_dir.entries"), "{e}");
    let back: statepack_runtime::lazy::Lazy<String> = serde_json::from_str(&json).unwrap();
    assert!(back.is_read());
    assert_eq!(back.get().unwrap(), "hi\n");
}

#[test]
fn reads_on_access_keep_the_inputs_budget_of_bytes() {
    // 255 views of the whole input (300 bytes): together they would read 76,500 bytes, past
    // the budget of 65,536 + 16 per input byte (70,336) for this input.
    let mut bytes = vec![255u8];
    bytes.extend(std::iter::repeat_n(7u8, 255));
    bytes.resize(300, 0);
    let v = lazy_budget::LazyBudget::decode(&bytes).unwrap();
    let mut read = 0;
    let e = loop {
        match v.views[read].whole.get() {
            Ok(w) => assert_eq!(w.len(), 300),
            Err(e) => break e,
        }
        read += 1;
        assert!(read < 255, "every view read: the budget did not hold");
    };
    assert!(
        e.to_string()
            .contains("positional instances read more than 70336 bytes"),
        "{e}"
    );
    assert_eq!(read, 235, "{e}");
}

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/forward_paths.rs"]
mod forward_paths;

#[test]
fn an_instance_named_by_a_path_from_an_earlier_type_is_read_at_that_use() {
    let bytes = [
        11, // ofs_names
        1, 0xa1, 0xa2, 0xa3, // entry: names[1] is "xyz", so 3 bytes
        0, 0xb1, 0xb2, // entry: names[0] is "ab", so 2 bytes
        18, 7, 8, // box: trailer at 18 says 2 items
        b'a', b'b', 0, b'x', b'y', b'z', 0, // names
        2, // trailer
    ];
    let v = forward_paths::ForwardPaths::decode(&bytes).unwrap();
    assert_eq!(v.names, ["ab", "xyz"]);
    assert_eq!(v.entries[0].body, [0xa1, 0xa2, 0xa3]);
    assert_eq!(v.entries[1].body, [0xb1, 0xb2]);
    assert_eq!(
        (v.r#box.trailer, v.r#box.child.items.as_slice()),
        (2, &[7u8, 8][..])
    );
    assert_eq!(v.encode().unwrap(), bytes, "byte-identical");
}

#[test]
fn a_path_to_an_instance_whose_position_is_read_later_is_still_refused() {
    // `names` would be read at `entries`' first use, but its position is read after them.
    let text = "meta:\n  id: later\nseq:\n  - id: entries\n    type: entry\n  - id: ofs_names\n    type: u1\ninstances:\n  names:\n    pos: ofs_names\n    type: u1\ntypes:\n  entry:\n    seq:\n      - id: body\n        size: _root.names\n";
    let e = statepack_codegen::generate(text, "later.ksy").unwrap_err();
    let shown = statepack_codegen::render(&e);
    assert!(shown.contains("is read after `entries`"), "{shown}");
}

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/lazy_self.rs"]
mod lazy_self;

#[test]
fn the_root_type_again_at_a_position_is_read_one_level_per_access() {
    use lazy_self::LazySelf;
    let b = [0x50u8, 0x41];
    let v = LazySelf::decode(&b).unwrap();
    // Named only by a value instance, the instance is read when that is computed.
    assert!(!v.again.is_read());
    assert_eq!(v.again_code().unwrap(), 0x41);
    assert!(v.again.is_read());
    let again = v.again.get().unwrap();
    assert_eq!(again.code, 0x41);
    assert!(!again.again.is_read());
    // Each access reads one level more; the chain ends as an error once instances nest three
    // deep at one offset.
    let mut level = again;
    let mut depth = 1;
    let e = loop {
        match level.again.get() {
            Ok(next) => {
                level = next;
                depth += 1;
            }
            Err(e) => break e,
        }
    };
    assert_eq!(depth, 3);
    assert!(
        e.to_string()
            .contains("nest more than 3 deep at byte offset 1"),
        "{e}"
    );
    assert!(level.again_code().is_err());
    // The dynamic view shows it; decode then encode is byte-identical.
    assert!(matches!(v.member("again"), Some(Value::Struct(_))));
    assert_eq!(v.encode().unwrap(), b);
}

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/forward_stream.rs"]
mod forward_stream;

/// Two records before the pool their labels point into (`io: _root.pool._io`).
const POOL: [u8; 10] = [
    2, // num_records
    3, // records[0].ofs_label: "cd"
    0, // records[1].ofs_label: "ab"
    b'a', b'b', 0, b'c', b'd', 0, 0, // pool
];

#[test]
fn an_instance_reads_on_first_use_from_a_stream_the_root_reads_later() {
    use forward_stream::{ForwardStream, Record};
    let v = ForwardStream::decode(&POOL).unwrap();
    assert!(!v.records[0].label.is_read());
    assert_eq!(v.records[0].label.get().unwrap(), "cd");
    assert_eq!(v.records[1].label.get().unwrap(), "ab");
    assert_eq!(v.encode().unwrap(), POOL, "byte-identical");
    // Positions count from the pool's start: one past its end fails there, as its own error.
    let mut bad = POOL;
    bad[1] = 8;
    let v = ForwardStream::decode(&bad).unwrap();
    let e = v.records[0].label.get().unwrap_err();
    assert!(
        matches!(e.kind, DecodeErrorKind::UnexpectedEof { .. }),
        "{e}"
    );
    assert_eq!(e.offset, 10, "{e}");
    // A record read on its own has no pool: its label names the stream it lacks.
    let mut rd = statepack_runtime::io::ByteReader::new(&[0]);
    let r = Record::read_from(&mut rd).unwrap();
    let e = r.label.get().unwrap_err();
    assert!(e.to_string().contains("`_root.pool._io`"), "{e}");
}

#[test]
fn an_instance_whose_bytes_another_value_holds_is_written_only_as_read() {
    use forward_stream::ForwardStream;
    let mut v = ForwardStream::decode(&POOL).unwrap();
    v.records[1].label.get_mut().unwrap().push('x');
    let e = v.encode().unwrap_err();
    assert!(
        e.to_string().contains("records.1.label") || e.to_string().contains("label"),
        "{e}"
    );
    assert!(e.to_string().contains("whose bytes `pool` holds"), "{e}");
    let mut v = ForwardStream::decode(&POOL).unwrap();
    v.records[0].label.set("cd".into());
    assert!(v.encode().is_err(), "a value given by hand is refused");
    // Changing the pool is how labels change; the record's position stays its own.
    let mut v = ForwardStream::decode(&POOL).unwrap();
    v.pool.body[3] = b'C';
    let out = v.encode().unwrap();
    assert_eq!(out[6], b'C');
}

/// Labels read once each spend most of the file's instance-bytes budget (255 records all
/// pointing at one 250-byte label: 64,005 bytes of 73,648); writing them back must not read
/// each again to see it is unchanged, which would pass the budget and refuse the file.
#[test]
fn labels_read_once_are_written_back_without_a_second_read() {
    use forward_stream::ForwardStream;
    let mut input = vec![255u8];
    input.extend([0u8; 255]);
    input.extend([b'A'; 250]);
    input.push(0);
    let v = ForwardStream::decode(&input).unwrap();
    assert_eq!(v.encode().unwrap(), input, "byte-identical");
    // A label lent out is compared with a fresh read: unchanged, it is written back;
    // changed, refused.
    let mut v = ForwardStream::decode(&input).unwrap();
    v.records[3].label.get_mut().unwrap();
    assert_eq!(v.encode().unwrap(), input);
    v.records[3].label.get_mut().unwrap().push('B');
    assert!(v.encode().is_err());
}

#[test]
fn an_instance_from_a_later_stream_that_the_seq_needs_is_refused() {
    // `size: label.length` needs the label while the record is read, before the pool is.
    let text = "meta:\n  id: later_stream\nseq:\n  - id: rec\n    type: rec\n  - id: pool\n    type: pool\n    size-eos: true\ntypes:\n  rec:\n    seq:\n      - id: ofs\n        type: u1\n      - id: body\n        size: label.length\n    instances:\n      label:\n        io: _root.pool._io\n        pos: ofs\n        type: strz\n        encoding: ASCII\n  pool:\n    seq:\n      - id: b\n        size-eos: true\n";
    let e = statepack_codegen::generate(text, "later_stream.ksy").unwrap_err();
    let shown = statepack_codegen::render(&e);
    assert!(shown.contains("can only be read on first use"), "{shown}");
    let checked = statepack_codegen::load_checked(
        text,
        "later_stream.ksy",
        std::path::Path::new("later_stream.ksy"),
        &[],
    );
    assert!(checked.is_err(), "the interpreter refuses it too");
}
