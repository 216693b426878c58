//! Real formats, read and written through generated types: a PNG chunk list
//! (`tests/run/real_png.ksy`), a ustar tar stream (`tests/run/real_tar.ksy`) and a ZIP archive
//! read from its end (`tests/run/real_zip.ksy`), schemas written from the formats' public
//! descriptions. Each file is made in the test by an independent implementation (the `png`,
//! `tar` and `zip` crates), read with the generated reader and checked against what that
//! implementation wrote, read with the `--schema` interpreter (the two must agree value for
//! value), edited through the generated types, written, and read again by both.
//!
//! What the writer derives and what the test computes:
//! - PNG: each chunk's length is derived from its data; the CRC-32 of each chunk (over its
//!   type and data) is a stored member the test computes (`crc32fast`) before writing.
//! - tar: the header's numbers are ASCII octal strings, which the writer does not derive: the
//!   test writes the data size (`size_octal`), the header checksum and the zero padding of the
//!   data to 512 bytes; the writer checks that the data and padding agree with them.
//! - ZIP: the end-of-central-directory record (`pos: _io.size - 22`) is written at the end of
//!   the file; the central directory's offset and size and each local header's offset
//!   (`ofs_local_header`, with `io: _root._io`) are derived, as are the name, extra and
//!   comment lengths and the local header's data length. A member's CRC-32, its uncompressed
//!   size (which the writer cannot tell from stored bytes) and the central directory's copy of
//!   the sizes are set by the test. A local header or central directory that no longer fits
//!   where it was read moves after everything else (the local headers ahead of the directory
//!   pointing at them); the bytes it left keep their old contents, which nothing points at.

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/real_png.rs"]
mod real_png;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/real_tar.rs"]
mod real_tar;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/real_zip.rs"]
mod real_zip;

#[path = "common/interp_writes.rs"]
mod interp_writes;

use interp_writes::{hex, list, read, set, written};
use statepack_codegen::interp::Given;
use statepack_runtime::io::ByteWriter;
use std::io::{Cursor, Read, Write};
use std::path::Path;

/// Reads `bytes` with the `--schema` interpreter from `tests/run/<name>.ksy` and compares the
/// result with the generated reader's value (`generated`), member by member.
fn interpreter_agrees(
    name: &str,
    bytes: &[u8],
    generated: &dyn statepack_runtime::reflect::Reflect,
) {
    let file = format!("{name}.ksy");
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/run")
        .join(&file);
    let text = std::fs::read_to_string(&path).unwrap();
    let s = statepack_codegen::load_checked(&text, &file, &path, &[])
        .unwrap_or_else(|d| panic!("{}", statepack_codegen::render(&d)));
    let dynv = statepack_codegen::interp::decode(&s, bytes).unwrap();
    statepack_codegen::interp::compare(&dynv, generated).unwrap();
}

// ---------------------------------------------------------------- PNG

use real_png::{Chunk, ChunkData, RealPng, Text};

/// 3 × 2 RGB pixels, 8 bits per sample.
fn pixels() -> Vec<u8> {
    (0u8..18).map(|i| i.wrapping_mul(37)).collect()
}

/// A PNG made by the `png` crate: one `tEXt` chunk before the image data.
fn png_file() -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, 3, 2);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.add_text_chunk("Title".to_owned(), "Checker".to_owned())
            .unwrap();
        let mut w = enc.write_header().unwrap();
        w.write_image_data(&pixels()).unwrap();
        w.finish().unwrap();
    }
    out
}

/// The bytes of a chunk's data as the generated writer writes them.
fn chunk_data_bytes(c: &Chunk) -> Vec<u8> {
    let mut w = ByteWriter::new();
    match &c.data {
        ChunkData::Header(h) => h.write_to(&mut w).unwrap(),
        ChunkData::Text(t) => t.write_to(&mut w).unwrap(),
        ChunkData::NoCase(b) => w.write_bytes(b),
    }
    w.into_bytes()
}

/// CRC-32 of the chunk's type and data, as the PNG specification defines it.
fn chunk_crc(c: &Chunk) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(c.chunk_type.as_bytes());
    h.update(&chunk_data_bytes(c));
    h.finalize()
}

/// The (type, data length) of each chunk of `bytes`, walked by hand.
fn raw_chunks(bytes: &[u8]) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut at = 8;
    while at + 12 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        out.push((
            String::from_utf8_lossy(&bytes[at + 4..at + 8]).into_owned(),
            len,
        ));
        at += 12 + len;
    }
    assert_eq!(at, bytes.len(), "chunks end at the end of the file");
    out
}

#[test]
fn png_chunks_read_edited_and_written_with_their_lengths_derived() {
    let bytes = png_file();
    let v = RealPng::decode(&bytes).unwrap();
    // What the png crate wrote.
    let types: Vec<&str> = v.chunks.iter().map(|c| c.chunk_type.as_str()).collect();
    assert_eq!(types.first(), Some(&"IHDR"));
    assert_eq!(types.last(), Some(&"IEND"));
    assert!(types.contains(&"IDAT"));
    let ChunkData::Header(h) = &v.chunks[0].data else {
        panic!("{:?}", v.chunks[0])
    };
    assert_eq!((h.width, h.height, h.bit_depth, h.color_type), (3, 2, 8, 2));
    assert_eq!(h.interlace_method, 0);
    let texts: Vec<&Text> = v
        .chunks
        .iter()
        .filter_map(|c| match &c.data {
            ChunkData::Text(t) => Some(t),
            _ => None,
        })
        .collect();
    assert_eq!(texts.len(), 1);
    assert_eq!(
        (texts[0].keyword.as_str(), texts[0].text.as_str()),
        ("Title", "Checker")
    );
    for c in &v.chunks {
        assert_eq!(c.crc, chunk_crc(c), "{}", c.chunk_type);
    }
    // Written back byte for byte; the interpreter reads the same values.
    assert_eq!(v.encode().unwrap(), bytes);
    interpreter_agrees("real_png", &bytes, &v);

    // Edit: a longer text, and a second text chunk after it.
    let mut e = v.clone();
    let ti = e
        .chunks
        .iter()
        .position(|c| c.chunk_type == "tEXt")
        .unwrap();
    let ChunkData::Text(t) = &mut e.chunks[ti].data else {
        unreachable!()
    };
    t.text = "Checkerboard, three by two".to_owned();
    let author = Chunk {
        chunk_type: "tEXt".to_owned(),
        data: ChunkData::Text(Text {
            keyword: "Author".to_owned(),
            text: "statepack".to_owned(),
            ..Default::default()
        }),
        ..Default::default()
    };
    e.chunks.insert(ti + 1, author);
    for c in &mut e.chunks {
        c.crc = chunk_crc(c);
    }
    let out = e.encode().unwrap();
    assert_eq!(out.len(), bytes.len() + 19 + (12 + 6 + 1 + 9));
    // The same edit on the interpreter's value, written by the interpreter: the same bytes
    // (the JSON gives each chunk's length, which the generated writer derives).
    let mut g = read("real_png", &bytes);
    assert_eq!(written("real_png", &g), bytes);
    let text = |keyword: &str, text: &str, crc: u32| {
        Given::Map(vec![
            (
                "len_data".to_owned(),
                Given::Int((keyword.len() + 1 + text.len()) as i128),
            ),
            ("chunk_type".to_owned(), Given::Str("tEXt".to_owned())),
            (
                "data".to_owned(),
                Given::Map(vec![
                    ("keyword".to_owned(), Given::Str(keyword.to_owned())),
                    ("text".to_owned(), Given::Str(text.to_owned())),
                ]),
            ),
            ("crc".to_owned(), Given::Int(crc.into())),
        ])
    };
    let chunks = list(&mut g, "chunks");
    chunks[ti] = text("Title", "Checkerboard, three by two", e.chunks[ti].crc);
    chunks.insert(ti + 1, text("Author", "statepack", e.chunks[ti + 1].crc));
    assert_eq!(written("real_png", &g), out);
    // The lengths the writer derived, walked by hand.
    let raw = raw_chunks(&out);
    assert_eq!(raw[ti], ("tEXt".to_owned(), 5 + 1 + 26));
    assert_eq!(raw[ti + 1], ("tEXt".to_owned(), 6 + 1 + 9));
    // Read again by the generated reader, the interpreter and the png crate (checking every
    // CRC, and inflating the image data).
    let back = RealPng::decode(&out).unwrap();
    assert_eq!(back, e);
    interpreter_agrees("real_png", &out, &back);
    let mut r = png_strict(&out).read_info().unwrap();
    let got: Vec<(String, String)> = r
        .info()
        .uncompressed_latin1_text
        .iter()
        .map(|t| (t.keyword.clone(), t.text.clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("Title".to_owned(), "Checkerboard, three by two".to_owned()),
            ("Author".to_owned(), "statepack".to_owned())
        ]
    );
    let mut buf = vec![0; r.output_buffer_size()];
    let frame = r.next_frame(&mut buf).unwrap();
    assert_eq!((frame.width, frame.height), (3, 2));
    assert_eq!(&buf[..frame.buffer_size()], &pixels()[..]);
}

/// The png crate's reader, refusing any chunk whose CRC does not match (by default it
/// skips a stale CRC on an ancillary chunk such as `tEXt`).
fn png_strict(bytes: &[u8]) -> png::Decoder<&[u8]> {
    let mut o = png::DecodeOptions::default();
    o.set_skip_ancillary_crc_failures(false);
    png::Decoder::new_with_options(bytes, o)
}

#[test]
fn a_png_chunk_with_a_stale_crc_is_refused_by_the_png_crate() {
    // The CRC is the test's to compute: written as it stands, a stale one is in the file.
    let mut v = RealPng::decode(&png_file()).unwrap();
    let ti = v
        .chunks
        .iter()
        .position(|c| c.chunk_type == "tEXt")
        .unwrap();
    let ChunkData::Text(t) = &mut v.chunks[ti].data else {
        unreachable!()
    };
    t.text = "changed".to_owned();
    let out = v.encode().unwrap();
    assert!(png_strict(&out).read_info().is_err());
    let fresh = RealPng::decode(&png_file()).unwrap();
    let fresh = fresh.encode().unwrap();
    assert!(png_strict(&fresh).read_info().is_ok());
}

// ---------------------------------------------------------------- tar

use real_tar::{Member, RealTar};

/// A ustar stream made by the `tar` crate: a 600-byte text and a 100-byte table.
fn tar_file() -> (Vec<u8>, Vec<(String, Vec<u8>)>) {
    let members = vec![
        (
            "notes/readme.txt".to_owned(),
            (0..600).map(|i| b'a' + (i % 26) as u8).collect::<Vec<u8>>(),
        ),
        ("data/table.csv".to_owned(), b"x,y\n".repeat(25)),
    ];
    let mut b = tar::Builder::new(Vec::new());
    for (name, data) in &members {
        let mut h = tar::Header::new_ustar();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_mtime(1_700_000_000);
        h.set_entry_type(tar::EntryType::Regular);
        b.append_data(&mut h, name, &data[..]).unwrap();
    }
    (b.into_inner().unwrap(), members)
}

/// What the tar crate reads from `bytes`: each member's path and data.
fn tar_read(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut a = tar::Archive::new(bytes);
    a.entries()
        .unwrap()
        .map(|e| {
            let mut e = e.unwrap();
            let name = e.path().unwrap().to_string_lossy().into_owned();
            assert_eq!(e.header().size().unwrap(), e.size());
            let mut data = Vec::new();
            e.read_to_end(&mut data).unwrap();
            (name, data)
        })
        .collect()
}

/// What the writer cannot derive in a member whose data changed: the octal size, the zero
/// padding to the next 512-byte block and the header checksum (the sum of the header's bytes
/// with the checksum field taken as eight spaces, written as the tar crate writes it: seven
/// octal digits and a zero byte).
fn settle(m: &mut Member) {
    let len = m.data.len();
    m.header.size_octal = format!("{len:011o}");
    m.header.__tail_size_octal = None;
    m.padding = vec![0; (512 - len % 512) % 512];
    m.header.checksum = "0000000".to_owned();
    m.header.__tail_checksum = None;
    let mut w = ByteWriter::new();
    m.header.write_to(&mut w).unwrap();
    let b = w.into_bytes();
    assert_eq!(b.len(), 512);
    let sum: u32 = b[..148]
        .iter()
        .chain(&b[156..])
        .map(|&x| x as u32)
        .sum::<u32>()
        + 8 * 32;
    m.header.checksum = format!("{sum:07o}");
}

#[test]
fn tar_members_read_edited_and_written_with_their_data_placed() {
    let (bytes, members) = tar_file();
    let v = RealTar::decode(&bytes).unwrap();
    // Two members, then the end-of-archive block (a zero block) and the rest of the zeros.
    assert_eq!(v.members.len(), 3);
    assert!(v.members[2].is_end());
    assert!(!v.members[0].is_end());
    assert!(v.end_blocks.iter().all(|b| *b == 0));
    for (m, (name, data)) in v.members.iter().zip(&members) {
        assert_eq!(&m.header.name, name);
        assert_eq!(m.header.len_data().unwrap(), data.len() as i128);
        assert_eq!(&m.data, data);
        assert_eq!(m.header.magic, "ustar");
        assert_eq!(m.header.mode, "0000644");
        assert_eq!((m.data.len() + m.padding.len()) % 512, 0);
    }
    assert_eq!(v.encode().unwrap(), bytes);
    interpreter_agrees("real_tar", &bytes, &v);

    // Edit: rename the first member and grow its data past two blocks.
    let mut e = v.clone();
    let first = &mut e.members[0];
    first.header.name = "notes/read-me-first.txt".to_owned();
    first.header.__tail_name = None;
    first.data = (0..1300).map(|i| b'A' + (i % 26) as u8).collect();
    settle(first);
    let out = e.encode().unwrap();
    // The same edit on the interpreter's value, written by the interpreter.
    let mut g = read("real_tar", &bytes);
    assert_eq!(written("real_tar", &g), bytes);
    let m = &e.members[0];
    set(
        &mut g,
        "members.0.header.name",
        Given::Str(m.header.name.clone()),
    );
    set(
        &mut g,
        "members.0.header.size_octal",
        Given::Str(m.header.size_octal.clone()),
    );
    set(
        &mut g,
        "members.0.header.checksum",
        Given::Str(m.header.checksum.clone()),
    );
    set(&mut g, "members.0.data", Given::Str(hex(&m.data)));
    set(&mut g, "members.0.padding", Given::Str(hex(&m.padding)));
    assert_eq!(written("real_tar", &g), out);
    assert_eq!(out.len(), bytes.len() + 512); // 600 bytes took 2 blocks, 1300 take 3
                                              // The second member's header moved to the block after the grown data.
    assert_eq!(&out[512 * 4..512 * 4 + 14], b"data/table.csv");
    let back = RealTar::decode(&out).unwrap();
    assert_eq!(back, e);
    assert_eq!(back.members[0].header.len_data().unwrap(), 1300);
    interpreter_agrees("real_tar", &out, &back);
    // The tar crate checks every header checksum.
    let read = tar_read(&out);
    assert_eq!(read.len(), 2);
    assert_eq!(
        read[0],
        (
            "notes/read-me-first.txt".to_owned(),
            e.members[0].data.clone()
        )
    );
    assert_eq!(read[1], members[1]);
}

#[test]
fn a_tar_member_whose_data_disagrees_with_its_size_is_refused() {
    let (bytes, _) = tar_file();
    let mut v = RealTar::decode(&bytes).unwrap();
    v.members[1].data.push(b'!');
    let e = v.encode().unwrap_err().to_string();
    assert!(e.contains("data"), "{e}");
}

// ---------------------------------------------------------------- ZIP

use real_zip::RealZip;

/// The members of the ZIP archives below: a short text and 300 bytes of binary.
fn zip_members() -> Vec<(String, Vec<u8>)> {
    vec![
        ("hello.txt".to_owned(), b"Hello, zip!\n".to_vec()),
        (
            "dir/data.bin".to_owned(),
            (0..300u32).map(|i| (i * 7) as u8).collect(),
        ),
    ]
}

/// A ZIP archive made by the `zip` crate, every member stored (not compressed).
fn zip_file() -> Vec<u8> {
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, data) in zip_members() {
        z.start_file(name, opts).unwrap();
        z.write_all(&data).unwrap();
    }
    z.finish().unwrap().into_inner()
}

/// What the zip crate reads from `bytes`: each member's name, size, CRC-32 and data (reading
/// a member to its end checks its CRC-32).
fn zip_read(bytes: &[u8]) -> Vec<(String, u64, u32, Vec<u8>)> {
    let mut a = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    (0..a.len())
        .map(|i| {
            let mut f = a.by_index(i).unwrap();
            let mut data = Vec::new();
            f.read_to_end(&mut data).unwrap();
            (f.name().unwrap().into_owned(), f.size(), f.crc32(), data)
        })
        .collect()
}

#[test]
fn zip_central_directory_found_from_the_end_and_written_back() {
    let bytes = zip_file();
    let by_zip = zip_read(&bytes);
    let v = RealZip::decode(&bytes).unwrap();
    let eocd = &v.end_of_central_dir;
    assert_eq!((eocd.num_entries, eocd.num_entries_on_disk), (2, 2));
    assert!(eocd.comment.is_empty());
    let entries = &eocd.central_dir.entries;
    assert_eq!(entries.len(), 2);
    for (e, (name, size, crc, data)) in entries.iter().zip(&by_zip) {
        assert_eq!(&e.name, name);
        assert_eq!(e.compression, 0, "stored");
        assert_eq!(
            (e.len_compressed as u64, e.len_uncompressed as u64),
            (*size, *size)
        );
        assert_eq!(e.crc32, *crc);
        let local = &e.local_file;
        assert_eq!(&local.name, name);
        assert_eq!(local.crc32, *crc);
        assert_eq!(&local.data, data);
    }
    assert_eq!(
        by_zip
            .iter()
            .map(|(n, _, _, d)| (n.clone(), d.clone()))
            .collect::<Vec<_>>(),
        zip_members()
    );
    assert_eq!(v.encode().unwrap(), bytes);
    interpreter_agrees("real_zip", &bytes, &v);
    // Written back by the interpreter: the offsets as given, and the central directory's
    // derived when left out (placed after the local headers, as the generated writer places
    // it).
    let mut g = read("real_zip", &bytes);
    assert_eq!(written("real_zip", &g), bytes);
    interp_writes::remove(&mut g, "end_of_central_dir.ofs_central_dir");
    assert_eq!(written("real_zip", &g), bytes);
}

/// CRC-32 of `data`, as ZIP stores it for a member.
fn crc32(data: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(data);
    h.finalize()
}

#[test]
fn zip_members_renamed_and_grown_are_placed_by_the_writer() {
    let bytes = zip_file();
    let v = RealZip::decode(&bytes).unwrap();
    let mut e = v.clone();
    let entries = &mut e.end_of_central_dir.central_dir.entries;
    // Rename the first member (its local header and its central directory entry grow) and
    // grow the second member's data.
    let first = &mut entries[0];
    first.name = "greetings/hello.txt".to_owned();
    first.local_file.name = first.name.clone();
    let more: Vec<u8> = (0..900u32).map(|i| (i * 13) as u8).collect();
    let second = &mut entries[1];
    let (len, crc) = (more.len() as u32, crc32(&more));
    (second.len_compressed, second.len_uncompressed, second.crc32) = (len, len, crc);
    let local = &mut second.local_file;
    (local.len_uncompressed, local.crc32) = (len, crc);
    local.data = more.clone();
    let out = e.encode().unwrap();

    // Read back by the generated reader, the interpreter and the zip crate.
    let back = RealZip::decode(&out).unwrap();
    // The offsets are members (they say where things were read) that the writer computes:
    // what the edited value held there was not used.
    let mut expect = e.clone();
    let eocd = &mut expect.end_of_central_dir;
    eocd.ofs_central_dir = back.end_of_central_dir.ofs_central_dir;
    for (x, y) in eocd
        .central_dir
        .entries
        .iter_mut()
        .zip(&back.end_of_central_dir.central_dir.entries)
    {
        x.ofs_local_header = y.ofs_local_header;
    }
    assert_eq!(back, expect);
    interpreter_agrees("real_zip", &out, &back);
    let by_zip = zip_read(&out);
    assert_eq!(
        by_zip,
        [
            (
                "greetings/hello.txt".to_owned(),
                12,
                crc32(b"Hello, zip!\n"),
                b"Hello, zip!\n".to_vec()
            ),
            ("dir/data.bin".to_owned(), 900, crc, more),
        ]
    );
    // The places the writer derived: the end-of-central-directory record ends the file and
    // says where the central directory is and how long; each entry says where its local
    // header is, and the member's data follows that header.
    let eocd = &back.end_of_central_dir;
    assert_eq!(&out[out.len() - 22..out.len() - 18], b"PK\x05\x06");
    let ofs_cd = eocd.ofs_central_dir as usize;
    let len_cd = u32::from_le_bytes(out[out.len() - 10..out.len() - 6].try_into().unwrap());
    assert_eq!(ofs_cd + len_cd as usize, out.len() - 22);
    assert_eq!(&out[ofs_cd..ofs_cd + 4], b"PK\x01\x02");
    assert_ne!(ofs_cd as u32, v.end_of_central_dir.ofs_central_dir, "moved");
    for (entry, name) in eocd
        .central_dir
        .entries
        .iter()
        .zip(["greetings/hello.txt", "dir/data.bin"])
    {
        let at = entry.ofs_local_header as usize;
        assert_eq!(&out[at..at + 4], b"PK\x03\x04");
        assert_eq!(&out[at + 30..at + 30 + name.len()], name.as_bytes());
    }
    // The second member's local header did not fit where it was: it moved.
    let old = &v.end_of_central_dir.central_dir.entries;
    assert_ne!(
        eocd.central_dir.entries[1].ofs_local_header,
        old[1].ofs_local_header
    );
}

#[test]
fn a_zip_archive_built_by_hand_is_laid_out_by_the_writer() {
    use real_zip::{CentralDir, CentralDirEntry, EndOfCentralDir, LocalFile};
    let members = zip_members();
    let entries: Vec<CentralDirEntry> = members
        .iter()
        .map(|(name, data)| {
            let (len, crc) = (data.len() as u32, crc32(data));
            CentralDirEntry {
                version_made_by: 20,
                version_needed: 10,
                crc32: crc,
                len_compressed: len,
                len_uncompressed: len,
                name: name.clone(),
                local_file: Box::new(LocalFile {
                    version_needed: 10,
                    crc32: crc,
                    len_uncompressed: len,
                    name: name.clone(),
                    data: data.clone(),
                    ..Default::default()
                }),
                ..Default::default()
            }
        })
        .collect();
    let v = RealZip {
        end_of_central_dir: Box::new(EndOfCentralDir {
            num_entries_on_disk: 2,
            num_entries: 2,
            central_dir: Box::new(CentralDir {
                entries,
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let out = v.encode().unwrap();
    // Local headers first, in order, then the central directory, then the record.
    let local_len = |(n, d): &(String, Vec<u8>)| 30 + n.len() + d.len();
    let cd_at = members.iter().map(local_len).sum::<usize>();
    let cd_len = members.iter().map(|(n, _)| 46 + n.len()).sum::<usize>();
    assert_eq!(out.len(), cd_at + cd_len + 22);
    let back = RealZip::decode(&out).unwrap();
    let eocd = &back.end_of_central_dir;
    assert_eq!(eocd.ofs_central_dir as usize, cd_at);
    let ofs: Vec<u32> = eocd
        .central_dir
        .entries
        .iter()
        .map(|e| e.ofs_local_header)
        .collect();
    assert_eq!(ofs, [0, local_len(&members[0]) as u32]);
    interpreter_agrees("real_zip", &out, &back);
    // The interpreter lays out the same archive from its value with the central
    // directory's offset left out.
    let mut g = read("real_zip", &out);
    interp_writes::remove(&mut g, "end_of_central_dir.ofs_central_dir");
    assert_eq!(written("real_zip", &g), out);
    let by_zip = zip_read(&out);
    assert_eq!(
        by_zip
            .into_iter()
            .map(|(n, _, _, d)| (n, d))
            .collect::<Vec<_>>(),
        members
    );
}
