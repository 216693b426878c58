//! Generated types inside binrw and deku types, and read from bitvec slices (the root crate's
//! default features `binrw`, `deku` and `bitvec`; see docs/architecture.md, "binrw, deku and
//! bitvec"): round trips on real format data (SNAP files, world-snapshot records), the bytes
//! each library sees, truncated input as a library error with the position, and values that
//! do not fit as write errors.

use binrw::io::Cursor;
use binrw::{binrw, BinRead, BinWrite};
use deku::prelude::*;
use statepack::formats::snap::{self, SnapV13};
use statepack::formats::world_snapshot::{self as ws, BlobKind};
use statepack::generated::snap_v1_3::{Frame, Recording};
use statepack::generated::world_snapshot::EntityBlob;
use statepack_codecs::netquant as nq;
use statepack_runtime::bitvec::prelude::{BitVec, Msb0};
use statepack_runtime::bitvec::view::BitView;
use statepack_runtime::io::{ByteWriter, DecodeError, DecodeErrorKind, EncodeError};

include!(concat!(env!("OUT_DIR"), "/test_schemas/mod.rs"));

/// A hand-written binrw container around generated SNAP types: a magic, a session id, a whole
/// SNAP file, the frames of its first recording again as a counted list, a trailer.
#[binrw]
#[brw(little, magic = b"PKG1")]
#[derive(Debug, PartialEq)]
struct Package {
    session: u32,
    snap: SnapV13,
    #[br(temp)]
    #[bw(calc = frames.len() as u16)]
    frame_count: u16,
    #[br(count = frame_count)]
    frames: Vec<Frame>,
    trailer: u16,
}

/// The SNAP samples of the format module (the spec's example, every frame shape, the demo's
/// study walk): real files, built in code.
fn snap_files() -> Vec<(String, Vec<u8>)> {
    let files = snap::sample_files();
    assert!(files.len() >= 3, "the SNAP samples are there");
    files
}

fn package_of(bytes: &[u8]) -> Package {
    let snap = SnapV13::decode(bytes).expect("the sample decodes");
    let frames = snap.recordings[0].frames.clone();
    Package {
        session: 0xdead_beef,
        snap,
        frames,
        trailer: 0x5aa5,
    }
}

/// The bytes a Package must be, built from the native encoders.
fn package_bytes(p: &Package, snap_bytes: &[u8]) -> Vec<u8> {
    let mut out = b"PKG1".to_vec();
    out.extend_from_slice(&p.session.to_le_bytes());
    out.extend_from_slice(snap_bytes);
    out.extend_from_slice(&(p.frames.len() as u16).to_le_bytes());
    let mut w = ByteWriter::new();
    for f in &p.frames {
        f.write_to(&mut w).expect("frame writes");
    }
    out.extend_from_slice(&w.into_bytes());
    out.extend_from_slice(&p.trailer.to_le_bytes());
    out
}

#[test]
fn snap_files_round_trip_inside_a_binrw_struct() {
    for (name, bytes) in snap_files() {
        let p = package_of(&bytes);
        let mut c = Cursor::new(Vec::new());
        p.write(&mut c).expect("binrw writes");
        let written = c.into_inner();
        assert_eq!(written, package_bytes(&p, &bytes), "{name}: written bytes");
        let mut c = Cursor::new(&written);
        let back = Package::read(&mut c).expect("binrw reads");
        assert_eq!(back, p, "{name}: value read back");
        assert_eq!(
            c.position(),
            written.len() as u64,
            "{name}: stream left at the end"
        );
    }
}

#[test]
fn generated_types_read_alone_leave_the_stream_after_themselves() {
    let (_, bytes) = snap_files().remove(0);
    let mut data = bytes.clone();
    data.extend_from_slice(b"tail");
    let mut c = Cursor::new(&data);
    let v = SnapV13::read_le(&mut c).expect("reads");
    assert_eq!(v, SnapV13::decode(&bytes).unwrap());
    assert_eq!(c.position(), bytes.len() as u64);
    // The schema fixes the byte order: binrw's endian does not change the value.
    let mut c = Cursor::new(&data);
    assert_eq!(SnapV13::read_be(&mut c).expect("reads"), v);
}

#[test]
fn truncated_binrw_stream_is_an_error_with_the_stream_position() {
    // The smallest sample (the spec's one-frame file) cut at every length.
    let (name, bytes) = snap_files()
        .into_iter()
        .min_by_key(|(_, b)| b.len())
        .unwrap();
    let p = package_of(&bytes);
    let full = package_bytes(&p, &bytes);
    let snap_range = 8..8 + bytes.len();
    for cut in 0..full.len() {
        let mut c = Cursor::new(&full[..cut]);
        let err = Package::read(&mut c).expect_err("a cut package does not read");
        assert_eq!(
            c.position(),
            0,
            "{name} cut at {cut}: the stream is restored"
        );
        if snap_range.contains(&cut) {
            let e = err
                .custom_err::<DecodeError>()
                .unwrap_or_else(|| panic!("cut at {cut}: not the native error: {err}"));
            // The input ends early, or a count promises more than is left.
            assert!(
                matches!(
                    e.kind,
                    DecodeErrorKind::UnexpectedEof { .. } | DecodeErrorKind::CountTooLarge { .. }
                ),
                "cut at {cut}: {e}"
            );
            // The offset is the stream position of the failing field, inside the SNAP part.
            assert!(
                snap_range.contains(&(e.offset as usize)) && e.offset as usize <= cut,
                "cut at {cut}: offset {} outside the SNAP part",
                e.offset
            );
            assert!(!e.path.is_empty(), "cut at {cut}: no field path in {e}");
            assert!(
                err.to_string().contains(&format!("0x{:x}", e.offset)),
                "{err}"
            );
        }
    }
}

#[test]
fn a_value_that_does_not_fit_is_a_binrw_write_error_and_writes_nothing() {
    let rec = Recording {
        map_name: "m".repeat(300),
        frames: vec![],
    };
    let mut c = Cursor::new(Vec::new());
    let err = rec
        .write_le(&mut c)
        .expect_err("a 300-byte name does not fit its u1 length");
    let e = err
        .custom_err::<EncodeError>()
        .unwrap_or_else(|| panic!("not the native error: {err}"));
    assert!(e.path.to_string().contains("map_name"), "{e}");
    assert!(c.into_inner().is_empty(), "nothing written");
}

/// A hand-written deku container around a generated world-snapshot record blob: a 3-bit
/// channel, the blob (byte-aligned: it starts on the next byte), two bit fields after it.
#[derive(Debug, PartialEq, DekuRead, DekuWrite)]
#[deku(endian = "big")]
struct Tagged {
    #[deku(bits = 3)]
    channel: u8,
    record: EntityBlob,
    #[deku(bits = 5)]
    flags: u8,
    #[deku(bits = 3)]
    more: u8,
}

/// Real record blobs: the world snapshot's sample entities quantized as steady-state deltas,
/// full records and full own-entity records.
fn records() -> Vec<(EntityBlob, Vec<u8>)> {
    let mut out = Vec::new();
    for i in 0..6 {
        let s = ws::sample_entity(i, i % 2 == 0);
        let origin = nq::origin_for_pos(s.position_m);
        for kind in [BlobKind::DELTA, BlobKind::FULL, BlobKind::FULL.own()] {
            let r = ws::blob_of(&s, origin, kind);
            let mut w = ByteWriter::new();
            r.write_to(&mut w).expect("record writes");
            let bytes = w.into_bytes();
            out.push((r, bytes));
        }
    }
    out
}

#[test]
fn world_snapshot_records_round_trip_inside_a_deku_struct() {
    for (i, (record, bytes)) in records().into_iter().enumerate() {
        let t = Tagged {
            channel: 0b101,
            record,
            flags: 0b10011,
            more: 0b110,
        };
        let out = t.to_bytes().expect("deku writes");
        let mut want = vec![0b101_00000];
        want.extend_from_slice(&bytes);
        want.push(0b1001_1110); // flags 10011, more 110
        assert_eq!(out, want, "record {i}: bytes");
        let ((rest, _), back) = Tagged::from_bytes((&out, 0)).expect("deku reads");
        assert!(rest.is_empty(), "record {i}: all read");
        assert_eq!(back, t, "record {i}: value read back");
    }
}

#[test]
fn nonzero_bits_before_a_byte_aligned_record_are_a_deku_error() {
    let (_, bytes) = records().remove(0);
    let mut data = vec![0b101_00100];
    data.extend_from_slice(&bytes);
    data.push(0);
    let err = Tagged::from_bytes((&data, 0)).expect_err("padding is not zero");
    assert!(
        matches!(&err, DekuError::Parse(m) if m.contains("padding")),
        "{err}"
    );
}

#[test]
fn truncated_deku_stream_is_an_error_with_the_position() {
    let (record, bytes) = records().pop().unwrap();
    let t = Tagged {
        channel: 1,
        record,
        flags: 0,
        more: 0,
    };
    let full = t.to_bytes().unwrap();
    for cut in 0..full.len() {
        let err = Tagged::from_bytes((&full[..cut], 0)).expect_err("a cut value does not read");
        if (1..=bytes.len()).contains(&cut) {
            let DekuError::Parse(m) = &err else {
                panic!("cut at {cut}: not a parse error: {err}");
            };
            // "<path> (byte offset N): unexpected end ...", N the failing field's position in
            // the stream, inside the record (which starts at byte 1).
            let at: usize = m
                .split("(byte offset ")
                .nth(1)
                .and_then(|r| r.split(')').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("cut at {cut}: no position in {m}"));
            assert!(
                (1..=cut).contains(&at),
                "cut at {cut}: position {at} in {m}"
            );
        }
    }
}

/// Bits from a string of `0`/`1` (other characters ignored).
fn bits_of(s: &str) -> BitVec<u8, Msb0> {
    s.bytes()
        .filter(|c| *c == b'0' || *c == b'1')
        .map(|c| c == b'1')
        .collect()
}

/// A deku container whose generated field starts with bit fields: it goes on from the
/// container's bit position instead of the next byte.
#[derive(Debug, PartialEq, DekuRead, DekuWrite)]
struct Packed {
    #[deku(bits = 3)]
    lead: u8,
    item: bits::Item,
    #[deku(bits = 4)]
    tail: u8,
}

#[test]
fn a_type_starting_with_bits_continues_the_deku_bit_stream() {
    let p = Packed {
        lead: 0b011,
        item: bits::Item {
            sign: true,
            mag: 0b10_0000_0001,
            align: vec![],
        },
        tail: 0b1001,
    };
    let out = p.to_bytes().expect("deku writes");
    // lead, sign, mag, the item's padding to the byte, tail, deku's final padding.
    let want = bits_of("011 1 1000000001 00 1001 0000").into_vec();
    assert_eq!(out, want);
    let ((rest, bit), back) = Packed::from_bytes((&out, 0)).expect("deku reads");
    // deku counted 20 bits read: its 4 padding bits of the last byte are left.
    assert_eq!((rest.len(), bit), (1, 4));
    assert_eq!(back, p);
}

#[test]
fn generated_bit_readers_accept_a_bitslice_anywhere_in_memory() {
    for (record, bytes) in records() {
        // Three bits before the record and five after it: the slice starts inside a byte.
        let mut bv = bits_of("101");
        bv.extend_from_bitslice(bytes.view_bits::<Msb0>());
        bv.extend_from_bitslice(&bits_of("11111"));
        let n = bytes.len() * 8;
        let (back, used) = EntityBlob::read_bits(&bv[3..]).expect("reads from the slice");
        assert_eq!(back, record);
        assert_eq!(used, n);
        assert_eq!(record.to_bits().expect("writes"), bytes.view_bits::<Msb0>());
        // One bit short: an UnexpectedEof naming the field, never values from the padding.
        let err = EntityBlob::read_bits(&bv[3..3 + n - 1]).expect_err("one bit short");
        assert!(
            matches!(err.kind, DecodeErrorKind::UnexpectedEof { .. }),
            "{err}"
        );
        assert!(!err.path.is_empty(), "{err}");
    }
}

#[test]
fn a_bitslice_shorter_than_a_bit_field_names_the_field() {
    // An item is 1 + 10 bits padded to 16; 9 bits end inside `mag`.
    let bv = bits_of("1 1000000001 00000");
    let (item, used) = bits::Item::read_bits(&bv).expect("16 bits read");
    assert_eq!((item.sign, item.mag, used), (true, 0b10_0000_0001, 16));
    let err = bits::Item::read_bits(&bv[..9]).expect_err("9 bits are too few");
    assert_eq!(err.path.to_string(), "mag", "{err}");
    assert_eq!(
        err.kind,
        DecodeErrorKind::UnexpectedEof {
            needed: 2,
            available: 1
        },
        "{err}"
    );
    let short = bits::Item::read_bits(&bv[..14]).expect_err("the padding is part of the item");
    assert!(
        matches!(short.kind, DecodeErrorKind::UnexpectedEof { .. }),
        "{short}"
    );
}

/// Records one after another to the end of the input: deku peeks a byte to find the end
/// (held as a whole leftover byte), and each record must leave deku exactly after itself.
#[derive(Debug, PartialEq, DekuRead, DekuWrite)]
struct Stream {
    count: u8,
    #[deku(read_all)]
    records: Vec<EntityBlob>,
}

#[test]
fn a_deku_stream_of_records_reads_to_its_end() {
    let recs: Vec<(EntityBlob, Vec<u8>)> = records();
    let s = Stream {
        count: recs.len() as u8,
        records: recs.iter().map(|(r, _)| r.clone()).collect(),
    };
    let out = s.to_bytes().expect("deku writes");
    let mut want = vec![recs.len() as u8];
    for (_, b) in &recs {
        want.extend_from_slice(b);
    }
    assert_eq!(out, want);
    let ((rest, bit), back) = Stream::from_bytes((&out, 0)).expect("deku reads");
    assert_eq!((rest.len(), bit), (0, 0));
    assert_eq!(back, s);
}

/// A deku container around a type that ends inside a byte (Kaitai's rules): it takes exactly
/// its four bits, and deku goes on from the next bit.
#[derive(Debug, PartialEq, DekuRead, DekuWrite)]
struct Nibbles {
    #[deku(bits = 2)]
    lead: u8,
    nibble: bits_unaligned::Nibble,
    #[deku(bits = 2)]
    tail: u8,
}

#[test]
fn a_type_ending_inside_a_byte_takes_exactly_its_bits_in_deku_and_bitvec() {
    let n = Nibbles {
        lead: 0b10,
        nibble: bits_unaligned::Nibble {
            flag: true,
            value: 0b011,
        },
        tail: 0b01,
    };
    let out = n.to_bytes().expect("deku writes");
    assert_eq!(out, bits_of("10 1 011 01").into_vec());
    let ((rest, bit), back) = Nibbles::from_bytes((&out, 0)).expect("deku reads");
    assert_eq!((rest.len(), bit), (0, 0));
    assert_eq!(back, n);
    let (nib, used) = bits_unaligned::Nibble::read_bits(&bits_of("1011")).expect("4 bits");
    assert_eq!((nib, used), (n.nibble.clone(), 4));
    assert_eq!(n.nibble.to_bits().expect("writes"), bits_of("1011"));
    let err = bits_unaligned::Nibble::read_bits(&bits_of("101")).expect_err("3 bits");
    assert_eq!(err.path.to_string(), "value", "{err}");
}
