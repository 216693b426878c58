//! Positional instances the writer places (`tests/run/placed.ksy`, a resource pack: a header
//! with the index's offset and the blob's 16-byte block, the index and the blob at those
//! places). A value built by hand is laid out after the header with the header's numbers
//! derived; a decoded file keeps its layout byte for byte; an instance that grew moves past
//! everything else and its number follows; a number that does not fit is refused by name.
//! The offset may be a member of a header type (`tests/run/placed_header.ksy`, `pos:
//! head.ofs_dir`).

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/placed.rs"]
mod placed;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/placed_header.rs"]
mod placed_header;

use placed::{Entry, Placed};

fn entry(id: u32, name: &str) -> Entry {
    Entry {
        id,
        name: name.to_owned(),
    }
}

fn by_hand() -> Placed {
    Placed {
        title: "demo".to_owned(),
        index: vec![entry(1, "alpha"), entry(2, "beta")],
        blob: (0u8..20).collect(),
        ..Default::default()
    }
}

/// magic, num_entries u2le, ofs_index u4le, blob_block u2be, len_blob u4le, len_title u1.
const HEADER: usize = 4 + 2 + 4 + 2 + 4 + 1;

#[test]
fn a_value_built_by_hand_is_laid_out_with_its_numbers_derived() {
    let v = by_hand();
    let bytes = v.encode().unwrap();
    let seq_end = HEADER + 4; // the title
    let index_len = (5 + 5) + (5 + 4);
    // The index right after the `seq`, the blob on the next 16-byte block after it.
    assert_eq!(
        u32::from_le_bytes(bytes[6..10].try_into().unwrap()),
        seq_end as u32
    );
    let blob_at = (seq_end + index_len).div_ceil(16) * 16;
    assert_eq!(
        u16::from_be_bytes([bytes[10], bytes[11]]),
        (blob_at / 16) as u16
    );
    assert_eq!(&bytes[seq_end + 5..seq_end + 10], b"alpha");
    assert_eq!(&bytes[blob_at..], &v.blob[..]);
    assert!(bytes[seq_end + index_len..blob_at].iter().all(|b| *b == 0));
    let back = Placed::decode(&bytes).unwrap();
    assert_eq!(
        back,
        Placed {
            ofs_index: seq_end as u32,
            blob_block: (blob_at / 16) as u16,
            ..v
        }
    );
    assert_eq!(
        back.encode().unwrap(),
        bytes,
        "decode then encode is byte-identical"
    );
}

/// A file laid out by another writer: the blob first (block 2), then a gap of 0xEE bytes,
/// then the index at 70.
fn foreign_file() -> Vec<u8> {
    let mut b = b"PAK1".to_vec();
    b.extend(1u16.to_le_bytes());
    b.extend(70u32.to_le_bytes());
    b.extend(2u16.to_be_bytes());
    b.extend(6u32.to_le_bytes());
    b.push(2);
    b.extend(b"hi");
    b.resize(32, 0xEE);
    b.extend(b"BLOB!!");
    b.resize(70, 0xEE);
    b.extend(9u32.to_le_bytes());
    b.push(3);
    b.extend(b"one");
    b
}

#[test]
fn a_decoded_file_keeps_its_layout() {
    let b = foreign_file();
    let v = Placed::decode(&b).unwrap();
    assert_eq!((v.ofs_index, v.blob_block), (70, 2));
    assert_eq!(v.blob, b"BLOB!!");
    assert_eq!(v.index, vec![entry(9, "one")]);
    assert_eq!(v.encode().unwrap(), b);
    // A value that still fits its place stays there.
    let mut w = v.clone();
    w.index[0].name = "two".to_owned();
    let out = w.encode().unwrap();
    assert_eq!(out.len(), b.len());
    assert_eq!(Placed::decode(&out).unwrap().index, w.index);
}

#[test]
fn an_instance_that_grew_moves_past_everything_and_its_number_follows() {
    let v = Placed::decode(&foreign_file()).unwrap();
    let mut w = v.clone();
    w.blob = b"a longer blob".to_vec();
    let out = w.encode().unwrap();
    let back = Placed::decode(&out).unwrap();
    assert_eq!(back.blob, w.blob);
    assert_eq!(back.index, v.index, "the index keeps its place");
    assert_eq!(back.ofs_index, 70);
    // After the furthest byte of the file as read (the index ends at 78), on a block.
    assert_eq!(back.blob_block, 5);
    assert_eq!(
        &out[HEADER..70],
        &foreign_file()[HEADER..70],
        "the old blob and the gap stay"
    );
    assert_eq!(back.encode().unwrap(), out);
}

#[test]
fn a_derived_number_that_does_not_fit_is_refused_by_name() {
    // 4,200 entries of 260 bytes: the index ends past block 65,535 × 16.
    let name = "n".repeat(255);
    let v = Placed {
        index: (0..4200).map(|i| entry(i, &name)).collect(),
        blob: vec![1],
        ..Default::default()
    };
    let Err(e) = v.encode() else {
        panic!("a blob past block 65,535 is written")
    };
    let e = e.to_string();
    assert!(e.contains("blob_block") && e.contains("u16"), "{e}");
}

fn lump(filepos: u32, name: &[u8; 8]) -> placed_header::Lump {
    placed_header::Lump {
        filepos,
        size: 4,
        name: name.to_vec(),
    }
}

#[test]
fn an_offset_in_a_header_type_is_derived() {
    use placed_header::{Header, PlacedHeader};
    let v = PlacedHeader {
        head: Header {
            num_lumps: 2,
            ofs_dir: 999,
        },
        palette: vec![7; 16],
        directory: vec![lump(28, b"PLAYPAL\0"), lump(32, b"COLORMAP")],
        ..Default::default()
    };
    let bytes = v.encode().unwrap();
    // magic, num_lumps, ofs_dir, then the palette: the directory follows at 28.
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 28);
    assert_eq!(bytes.len(), 28 + 2 * 16);
    let back = PlacedHeader::decode(&bytes).unwrap();
    assert_eq!(back.head.ofs_dir, 28);
    assert_eq!(back.directory, v.directory);
    assert_eq!(back.encode().unwrap(), bytes);
    // A directory that another writer put further on, after a gap, stays there.
    let mut far = bytes[..28].to_vec();
    far[8..12].copy_from_slice(&40u32.to_le_bytes());
    far.resize(40, 0xAB);
    far.extend_from_slice(&bytes[28..]);
    let d = PlacedHeader::decode(&far).unwrap();
    assert_eq!(d.head.ofs_dir, 40);
    assert_eq!(d.encode().unwrap(), far);
}
