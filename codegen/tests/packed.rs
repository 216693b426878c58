//! Columns packed after a directory (`tests/run/packed.ksy`): positional instances with
//! `-sp-align: 4` sharing one offset field under exclusive `if`s, in a type with
//! `-sp-end-zeros: 2`. The writer places the columns after the whole directory in directory
//! order, each on a multiple of 4 with zero padding, writes each entry's offset and ends the
//! table with the zeros; the reader checks that layout and keeps nothing else; the
//! interpreter reads and writes the same bytes.

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/packed.rs"]
mod packed;

use packed::{Entry, Packed, Table};
use statepack_codegen::interp::{self, Given};

fn entry(kind: u8, ofs: u16, count: u16, bytes: Option<Vec<u8>>, words: Option<Vec<u16>>) -> Entry {
    Entry {
        kind,
        ofs,
        count,
        bytes_v: bytes,
        words,
    }
}

/// Three entries: 3 bytes, 2 words, and one of an unknown kind (offset kept as given).
fn by_hand() -> Packed {
    Packed {
        body: Table {
            entries: vec![
                entry(1, 0, 3, Some(vec![1, 2, 3]), None),
                entry(2, 0, 2, None, Some(vec![7, 8])),
                entry(9, 77, 5, None, None),
            ],
        },
        ..Default::default()
    }
}

/// The file `by_hand` gives: the table's directory is 2 + 3 x 5 = 17 bytes, so the columns
/// go at 20 (3 bytes and one zero) and 24 (4 bytes), and 2 zero bytes end it at 30.
fn expected() -> Vec<u8> {
    let mut b = 30u32.to_le_bytes().to_vec();
    b.extend([3, 0]);
    b.extend([1, 20, 0, 3, 0]);
    b.extend([2, 24, 0, 2, 0]);
    b.extend([9, 77, 0, 5, 0]);
    b.extend([0, 0, 0]); // up to 20
    b.extend([1, 2, 3, 0]);
    b.extend([7, 0, 8, 0]);
    b.extend([0, 0]);
    b
}

#[test]
fn the_writer_places_the_columns_after_the_directory_and_writes_their_offsets() {
    let bytes = by_hand().encode().unwrap();
    assert_eq!(bytes, expected());
    let back = Packed::decode(&bytes).unwrap();
    assert_eq!(back.body.entries[0].ofs, 20);
    assert_eq!(back.body.entries[1].ofs, 24);
    assert_eq!(
        back.body.entries[2].ofs, 77,
        "an unknown kind keeps its offset"
    );
    assert_eq!(back.body.entries[1].words, Some(vec![7, 8]));
    assert_eq!(
        back.encode().unwrap(),
        bytes,
        "decode then encode is byte-identical"
    );
}

#[test]
fn a_table_laid_out_otherwise_is_refused_where_it_differs() {
    // a padding byte that is not zero
    let mut pad = expected();
    pad[4 + 23] = 0xAB;
    let e = Packed::decode(&pad).unwrap_err();
    assert_eq!(e.offset, 4 + 23, "{e}");
    assert!(e.to_string().contains("AB here, 00 derived"), "{e}");
    // the words moved on by 4 bytes (a gap of zeros before them)
    let mut moved = expected();
    moved[4 + 8] = 28;
    moved.truncate(4 + 24);
    moved.extend([0, 0, 0, 0, 7, 0, 8, 0, 0, 0]);
    moved[0] = 34;
    let e = Packed::decode(&moved).unwrap_err();
    assert_eq!(e.offset, 4 + 24, "where the writer puts the words: {e}");
    assert!(
        e.to_string()
            .contains("an instance at byte 32, where the writer places it at byte 28"),
        "{e}"
    );
    // bytes after the trailing zeros
    let mut longer = expected();
    longer.push(0);
    longer[0] = 31;
    assert_eq!(Packed::decode(&longer).unwrap_err().offset, 4 + 30);
}

#[test]
fn an_offset_its_valid_range_does_not_hold_is_refused_by_name() {
    let col = |n: u16| entry(1, 0, n, Some(vec![5; n as usize]), None);
    let mut v = by_hand();
    v.body.entries = vec![col(300), col(300), col(300), col(300)];
    // 2 + 4 x 5 = 22: columns at 24, 324, 624, 924
    assert!(v.encode().is_ok());
    // with a fifth entry the directory ends at 27: columns at 28, ..., 928, then 1228
    v.body.entries.push(col(1));
    let e = v.encode().unwrap_err().to_string();
    assert!(e.contains("ofs") && e.contains("1228"), "{e}");
}

fn schema() -> statepack_codegen::typed::Checked {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/run/packed.ksy");
    let text = std::fs::read_to_string(path).unwrap();
    statepack_codegen::load_checked(&text, "packed.ksy", std::path::Path::new(path), &[])
        .unwrap_or_else(|d| panic!("{}", statepack_codegen::render(&d)))
}

#[test]
fn the_interpreter_reads_and_writes_the_same_bytes() {
    let s = schema();
    let bytes = expected();
    let tree = interp::decode(&s, &bytes).unwrap();
    let generated = Packed::decode(&bytes).unwrap();
    interp::compare(&generated, &tree).unwrap();
    for bad in [
        {
            let mut b = expected();
            b[4 + 23] = 0xAB;
            b
        },
        {
            let mut b = expected();
            b.push(0);
            b[0] = 31;
            b
        },
    ] {
        assert!(interp::decode(&s, &bad).is_err());
        assert!(Packed::decode(&bad).is_err());
    }
    // Written from values whose offsets are not the derived ones (0): placed as the
    // generated writer places them.
    let e = |kind: i128, ofs: i128, count: i128, col: Option<(&str, Given)>| {
        let mut m = vec![
            ("kind".to_owned(), Given::Int(kind)),
            ("ofs".to_owned(), Given::Int(ofs)),
            ("count".to_owned(), Given::Int(count)),
        ];
        m.extend(col.map(|(k, v)| (k.to_owned(), v)));
        Given::Map(m)
    };
    let words = Given::List(vec![Given::Int(7), Given::Int(8)]);
    let g = Given::Map(vec![
        ("len_body".to_owned(), Given::Int(30)),
        (
            "body".to_owned(),
            Given::Map(vec![
                ("num_entries".to_owned(), Given::Int(3)),
                (
                    "entries".to_owned(),
                    Given::List(vec![
                        e(1, 0, 3, Some(("bytes_v", Given::Str("010203".into())))),
                        e(2, 0, 2, Some(("words", words))),
                        e(9, 77, 5, None),
                    ]),
                ),
            ]),
        ),
    ]);
    let (written, _) = interp::encode(&s, &g).unwrap();
    assert_eq!(written, expected());
}
