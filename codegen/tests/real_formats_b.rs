//! Real formats, read, edited and written back through generated types, from schemas written
//! for these tests from the formats' public specifications (`tests/run/real_*.ksy`):
//!
//! - a MessagePack value (`real_msgpack.ksy`) written by the `rmpv` crate: every form of the
//!   type byte is read into the switch that mixes number types and user types; a `str 8`
//!   string and an `array 16` list grow (their lengths and counts derived by the writer) and a
//!   `fixstr` becomes a `str 8`; `rmpv` reads the written bytes back.
//! - a PE32+ image (`real_pe.ksy`) written by the `object` crate: the MZ header's
//!   `e_lfanew`, the COFF and optional headers with their data directories, the section
//!   table, and the debug directory's RVA mapped to a file offset through the section holding
//!   it; `.text`, then `.rdata`, grow past their raw sizes; `object` parses the written
//!   images. The writer derives `e_lfanew` (the PE header is placed), the section and data
//!   directory counts, the optional header's size, and each section's raw size and file
//!   offset (the sections' data are positional instances of the list's elements, placed
//!   when the whole image is laid out).
//! - an ext2 file system (`real_ext2.ksy`) made by `mke2fs -d` from a directory: superblock,
//!   group descriptors, inode table, and the root directory's entries read through the root
//!   inode's first block, with a file's contents through its inode; two entries are renamed
//!   (one to a longer name, its name length derived) and `e2fsck -fn` and `debugfs` read the
//!   result. Needs e2fsprogs: under `CI=true` a missing `mke2fs` fails the test, elsewhere it
//!   is skipped with a message.
//!
//! Each file is also decoded by the schema interpreter (`decode --schema`) and compared value
//! for value with the generated reader's.

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/real_msgpack.rs"]
mod real_msgpack;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/real_pe.rs"]
mod real_pe;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/real_ext2.rs"]
mod real_ext2;

#[allow(dead_code)] // the edits' helpers: this file only writes values back as read
#[path = "common/interp_writes.rs"]
mod interp_writes;

use interp_writes::{read, written};
use statepack_runtime::reflect::Reflect;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The schema interpreter's value of `bytes` under `tests/run/<name>` compared with the
/// generated reader's dynamic view.
fn interpreter_agrees(name: &str, bytes: &[u8], generated: &dyn Reflect) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/run")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let s = statepack_codegen::load_checked(&text, name, &path, &[])
        .unwrap_or_else(|d| panic!("{}", statepack_codegen::render(&d)));
    let dynv = statepack_codegen::interp::decode(&s, bytes).unwrap();
    statepack_codegen::interp::compare(&dynv, generated).unwrap();
}

// ---------------------------------------------------------------------------------------
// MessagePack

mod msgpack {
    use super::real_msgpack::{Array16, Msg, MsgBody, RealMsgpack, Str8};
    use rmpv::Value;

    /// The value a generated `Msg` holds, as `rmpv` models it.
    pub fn to_value(m: &Msg) -> Value {
        match &m.body {
            MsgBody::Empty(_) => match m.b {
                0xc0 => Value::Nil,
                0xc2 => Value::Boolean(false),
                0xc3 => Value::Boolean(true),
                _ => Value::from(i64::try_from(m.fixint()).unwrap()),
            },
            MsgBody::Fixmap(x) => pairs(x.pairs.iter().map(|p| (&*p.key, &*p.value))),
            MsgBody::Map16(x) => pairs(x.pairs.iter().map(|p| (&*p.key, &*p.value))),
            MsgBody::Fixarray(x) => Value::Array(x.elems.iter().map(|e| to_value(e)).collect()),
            MsgBody::Array16(x) => Value::Array(x.elems.iter().map(|e| to_value(e)).collect()),
            MsgBody::Fixstr(s) => Value::from(s.text.as_str()),
            MsgBody::Str8(s) => Value::from(s.text.as_str()),
            MsgBody::Str16(s) => Value::from(s.text.as_str()),
            MsgBody::Bin8(b) => Value::Binary(b.data.clone()),
            MsgBody::F4be(f) => Value::F32(*f),
            MsgBody::F8be(f) => Value::F64(*f),
            MsgBody::U1(n) => Value::from(*n),
            MsgBody::U2be(n) => Value::from(*n),
            MsgBody::U4be(n) => Value::from(*n),
            MsgBody::U8be(n) => Value::from(*n),
            MsgBody::S1(n) => Value::from(*n),
            MsgBody::S2be(n) => Value::from(*n),
            MsgBody::S4be(n) => Value::from(*n),
            MsgBody::S8be(n) => Value::from(*n),
            other => panic!("type byte {:#04x} read as {other:?}", m.b),
        }
    }

    fn pairs<'a>(it: impl Iterator<Item = (&'a Msg, &'a Msg)>) -> Value {
        Value::Map(it.map(|(k, v)| (to_value(k), to_value(v))).collect())
    }

    /// A map with every form the schema knows, as `rmpv` writes it (the shortest form of each
    /// number, string, list and map).
    pub fn sample() -> Value {
        let s = |t: &str| Value::from(t);
        let mut big_map: Vec<(Value, Value)> = (0..17)
            .map(|i| (Value::from(format!("k{i:02}")), Value::from(i * 1000)))
            .collect();
        big_map.push((s("nested"), Value::Map(vec![(s("deep"), Value::Nil)])));
        Value::Map(vec![
            (s("name"), s("statepack")),
            (s("long"), Value::from("x".repeat(40))),
            (s("longer"), Value::from("y".repeat(300))),
            (s("blob"), Value::Binary(vec![0, 1, 2, 0xfe, 0xff])),
            (
                s("tags"),
                Value::Array((0..20).map(|i| Value::from(format!("t{i}"))).collect()),
            ),
            (
                s("unsigned"),
                Value::Array(vec![
                    Value::from(7u8),
                    Value::from(200u8),
                    Value::from(60_000u16),
                    Value::from(4_000_000_000u32),
                    Value::from(1u64 << 40),
                ]),
            ),
            (
                s("signed"),
                Value::Array(vec![
                    Value::from(-5i8),
                    Value::from(-100i8),
                    Value::from(-1000i16),
                    Value::from(-100_000i32),
                    Value::from(-10_000_000_000i64),
                ]),
            ),
            (
                s("floats"),
                Value::Array(vec![Value::F32(1.5), Value::F64(-2.25e100)]),
            ),
            (
                s("flags"),
                Value::Array(vec![
                    Value::Nil,
                    Value::Boolean(true),
                    Value::Boolean(false),
                ]),
            ),
            (s("big_map"), Value::Map(big_map)),
        ])
    }

    pub fn encode_rmpv(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        rmpv::encode::write_value(&mut out, v).unwrap();
        out
    }

    /// The pairs of the top-level map.
    pub fn top_pairs(v: &mut RealMsgpack) -> &mut Vec<Box<super::real_msgpack::Pair>> {
        match &mut v.value.body {
            MsgBody::Fixmap(m) => &mut m.pairs,
            other => panic!("the top-level value is {other:?}"),
        }
    }

    /// The value of key `k` in the top-level map.
    pub fn field<'a>(v: &'a mut RealMsgpack, k: &str) -> &'a mut Msg {
        top_pairs(v)
            .iter_mut()
            .find(|p| matches!(&p.key.body, MsgBody::Fixstr(s) if s.text == k))
            .map(|p| &mut p.value)
            .unwrap_or_else(|| panic!("no key {k}"))
    }

    pub fn str8(text: String) -> Msg {
        Msg {
            b: 0xd9,
            body: MsgBody::Str8(Str8 { text }),
        }
    }

    pub fn array16(v: &mut Msg) -> &mut Array16 {
        match &mut v.body {
            MsgBody::Array16(a) => a,
            other => panic!("not an array 16: {other:?}"),
        }
    }
}

#[test]
fn msgpack_every_type_byte_is_read_and_the_edits_change_the_lengths() {
    use msgpack::*;
    use real_msgpack::{MsgBody, RealMsgpack};
    let original = sample();
    let bytes = encode_rmpv(&original);
    let mut v = RealMsgpack::decode(&bytes).unwrap();
    assert_eq!(to_value(&v.value), original);
    // Every form the schema lists was written by rmpv and read.
    let mut seen = std::collections::BTreeSet::new();
    fn walk(m: &real_msgpack::Msg, seen: &mut std::collections::BTreeSet<i128>) {
        seen.insert(m.kind());
        match &m.body {
            MsgBody::Fixmap(x) => x.pairs.iter().for_each(|p| {
                walk(&p.key, seen);
                walk(&p.value, seen)
            }),
            MsgBody::Map16(x) => x.pairs.iter().for_each(|p| {
                walk(&p.key, seen);
                walk(&p.value, seen)
            }),
            MsgBody::Fixarray(x) => x.elems.iter().for_each(|e| walk(e, seen)),
            MsgBody::Array16(x) => x.elems.iter().for_each(|e| walk(e, seen)),
            _ => {}
        }
    }
    walk(&v.value, &mut seen);
    let all: std::collections::BTreeSet<i128> = [
        0x00, 0x80, 0x90, 0xa0, 0xc0, 0xc2, 0xc3, 0xc4, 0xca, 0xcb, 0xcc, 0xcd, 0xce, 0xcf, 0xd0,
        0xd1, 0xd2, 0xd3, 0xd9, 0xda, 0xdc, 0xde, 0xe0,
    ]
    .into_iter()
    .collect();
    assert_eq!(seen, all);
    assert_eq!(
        v.encode().unwrap(),
        bytes,
        "read then written is byte-identical"
    );
    interpreter_agrees(
        "real_msgpack.ksy",
        &bytes,
        &*real_msgpack::reflect_decode(&bytes).unwrap(),
    );
    // The interpreter writes its value back as read: every number-type switch case.
    let g = read("real_msgpack", &bytes);
    assert_eq!(written("real_msgpack", &g), bytes);

    // A `fixstr` that grows past 31 bytes without a new type byte is refused: the type
    // byte holds its length.
    let mut bad = v.clone();
    if let MsgBody::Fixstr(s) = &mut field(&mut bad, "name").body {
        s.text = "n".repeat(50);
    }
    assert!(
        bad.encode().is_err(),
        "a fixstr longer than its type byte is written"
    );

    // The edits: `long` (a str 8) grows, `tags` (an array 16) gets three more strings,
    // `name` becomes a str 8.
    let long = "L".repeat(200);
    match &mut field(&mut v, "long").body {
        MsgBody::Str8(s) => s.text = long.clone(),
        other => panic!("long is {other:?}"),
    }
    let tags = array16(field(&mut v, "tags"));
    for t in ["u1", "u2", "a rather longer tag"] {
        tags.elems.push(Box::new(real_msgpack::Msg {
            b: 0xa0 | t.len() as u8,
            body: MsgBody::Fixstr(real_msgpack::Fixstr {
                len: t.len() as i128,
                text: t.to_owned(),
            }),
        }));
    }
    *field(&mut v, "name") = str8("statepack, now longer than thirty-one bytes".to_owned());
    let out = v.encode().unwrap();
    assert_eq!(
        out.len(),
        bytes.len() + (200 - 40) + (3 + 3 + 20) + (2 + 43 - 10),
        "the edits' bytes and nothing else"
    );

    // What rmpv reads from the written bytes is the original with the edits.
    let mut expected = original.clone();
    if let rmpv::Value::Map(m) = &mut expected {
        for (k, val) in m.iter_mut() {
            match k.as_str().unwrap() {
                "name" => *val = "statepack, now longer than thirty-one bytes".into(),
                "long" => *val = long.as_str().into(),
                "tags" => {
                    if let rmpv::Value::Array(a) = val {
                        a.extend(["u1", "u2", "a rather longer tag"].map(rmpv::Value::from));
                    }
                }
                _ => {}
            }
        }
    }
    let reread = rmpv::decode::read_value(&mut &out[..]).unwrap();
    assert_eq!(reread, expected);
    // rmpv writes the edited value the same way: lengths and counts where it puts them.
    assert_eq!(encode_rmpv(&expected), out);
    let back = RealMsgpack::decode(&out).unwrap();
    assert_eq!(back, v);
    assert_eq!(to_value(&back.value), expected);
    interpreter_agrees(
        "real_msgpack.ksy",
        &out,
        &*real_msgpack::reflect_decode(&out).unwrap(),
    );
    assert_eq!(written("real_msgpack", &read("real_msgpack", &out)), out);
}

// ---------------------------------------------------------------------------------------
// PE

mod pe {
    use object::write::pe::{NtHeaders, Writer};

    pub const CODE: &[u8] = &[0x48, 0x31, 0xc0, 0xc3]; // xor rax, rax; ret
    /// The debug directory entry (28 bytes), at offset 0x10 of `.rdata`.
    pub const DEBUG_AT: u32 = 0x10;

    pub fn debug_entry() -> Vec<u8> {
        (0u8..28)
            .map(|i| i.wrapping_mul(7).wrapping_add(1))
            .collect()
    }

    pub fn rdata() -> Vec<u8> {
        let mut r = b"read-only data..".to_vec();
        r.extend(debug_entry());
        r.extend(b"after the debug entry");
        r
    }

    pub fn data() -> Vec<u8> {
        b"initialised data".repeat(5)
    }

    /// A PE32+ image with `.text`, `.rdata` (holding the debug directory) and `.data`, as
    /// the `object` crate writes it; and the file offsets it chose for the three sections.
    pub fn image() -> (Vec<u8>, u32, [u32; 3]) {
        let mut out = Vec::new();
        let mut w = Writer::new(true, 0x1000, 0x200, &mut out);
        w.reserve_dos_header_and_stub();
        w.reserve_nt_headers(16);
        w.reserve_section_headers(3);
        let text = w.reserve_text_section(CODE.len() as u32);
        let rd = w.reserve_rdata_section(rdata().len() as u32);
        let da = w.reserve_data_section(data().len() as u32, data().len() as u32);
        w.set_data_directory(
            object::pe::IMAGE_DIRECTORY_ENTRY_DEBUG,
            rd.virtual_address + DEBUG_AT,
            28,
        );
        let e_lfanew = w.nt_headers_offset();
        w.write_dos_header_and_stub().unwrap();
        w.write_nt_headers(NtHeaders {
            machine: object::pe::IMAGE_FILE_MACHINE_AMD64,
            time_date_stamp: 0x6000_0000,
            characteristics: object::pe::IMAGE_FILE_EXECUTABLE_IMAGE
                | object::pe::IMAGE_FILE_LARGE_ADDRESS_AWARE,
            major_linker_version: 14,
            minor_linker_version: 0,
            address_of_entry_point: text.virtual_address,
            image_base: 0x1_4000_0000,
            major_operating_system_version: 6,
            minor_operating_system_version: 0,
            major_image_version: 0,
            minor_image_version: 0,
            major_subsystem_version: 6,
            minor_subsystem_version: 0,
            subsystem: object::pe::IMAGE_SUBSYSTEM_WINDOWS_CUI,
            dll_characteristics: 0,
            size_of_stack_reserve: 0x10_0000,
            size_of_stack_commit: 0x1000,
            size_of_heap_reserve: 0x10_0000,
            size_of_heap_commit: 0x1000,
        });
        w.write_section_headers();
        w.write_section(text.file_offset, CODE);
        w.write_section(rd.file_offset, &rdata());
        w.write_section(da.file_offset, &data());
        (
            out,
            e_lfanew,
            [text.file_offset, rd.file_offset, da.file_offset],
        )
    }

    /// The sections as `object` reads them: name, file offset, data (the raw size).
    pub fn object_sections(bytes: &[u8]) -> Vec<(String, u32, Vec<u8>)> {
        use object::{Object, ObjectSection};
        let f = object::read::pe::PeFile64::parse(bytes).unwrap();
        f.sections()
            .map(|s| {
                (
                    s.name().unwrap().to_owned(),
                    s.file_range().map_or(0, |r| r.0 as u32),
                    s.data().unwrap().to_vec(),
                )
            })
            .collect()
    }

    /// The debug directory's bytes, as `object` maps its RVA through the section table.
    pub fn object_debug_dir(bytes: &[u8]) -> Vec<u8> {
        let f = object::read::pe::PeFile64::parse(bytes).unwrap();
        let d = f
            .data_directory(object::pe::IMAGE_DIRECTORY_ENTRY_DEBUG)
            .unwrap();
        d.data(bytes, &f.section_table()).unwrap().to_vec()
    }
}

/// The debug directory's bytes as the schema finds them: the section whose virtual range
/// holds the RVA (`holds_debug`) maps it to a file offset (`debug_offset`).
fn schema_debug_dir(v: &real_pe::RealPe, bytes: &[u8]) -> (usize, Vec<u8>) {
    let secs: Vec<&real_pe::Section> =
        v.pe.sections
            .iter()
            .filter(|s| s.holds_debug().unwrap())
            .collect();
    assert_eq!(secs.len(), 1, "one section holds the debug directory");
    let at = usize::try_from(secs[0].debug_offset().unwrap()).unwrap();
    let len = v.pe.optional_header.data_dirs[6].size as usize;
    (at, bytes[at..at + len].to_vec())
}

#[test]
fn pe_image_is_read_and_a_grown_section_is_placed_by_the_writer() {
    use real_pe::RealPe;
    let (bytes, e_lfanew, offsets) = pe::image();
    let v = RealPe::decode(&bytes).unwrap();
    assert_eq!(v.mz.ofs_pe_header, e_lfanew);
    let pe_h = &v.pe;
    assert_eq!(pe_h.machine, object::pe::IMAGE_FILE_MACHINE_AMD64);
    assert_eq!(pe_h.optional_header.magic, 0x20b);
    assert_eq!(
        pe_h.optional_header.image_base,
        real_pe::OptionalHeaderImageBase::U8le(0x1_4000_0000)
    );
    assert_eq!(pe_h.optional_header.data_dirs.len(), 16);
    let names: Vec<&str> = pe_h.sections.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, [".text", ".rdata", ".data"]);
    let from_object = pe::object_sections(&bytes);
    // object gives a section's data up to its virtual size.
    for (s, (name, at, data)) in pe_h.sections.iter().zip(&from_object) {
        assert_eq!((&s.name, s.pointer_to_raw_data), (name, *at));
        assert_eq!(&s.body[..data.len()], &data[..]);
        assert_eq!(data.len(), s.body.len().min(s.virtual_size as usize));
    }
    assert_eq!(
        offsets,
        [0, 1, 2].map(|i| pe_h.sections[i].pointer_to_raw_data)
    );
    assert_eq!(&pe_h.sections[0].body[..pe::CODE.len()], pe::CODE);
    let (at, debug) = schema_debug_dir(&v, &bytes);
    assert_eq!(at as u32, offsets[1] + pe::DEBUG_AT);
    assert_eq!(debug, pe::debug_entry());
    assert_eq!(debug, pe::object_debug_dir(&bytes));
    assert_eq!(
        v.encode().unwrap(),
        bytes,
        "read then written is byte-identical"
    );
    interpreter_agrees(
        "real_pe.ksy",
        &bytes,
        &*real_pe::reflect_decode(&bytes).unwrap(),
    );

    // `.text` grows from 4 bytes to 0x300 (two file-alignment units of raw data) and no
    // longer fits its place: the writer moves it past the end of the file and writes its
    // file offset, derives its raw size from its bytes, and writes `e_lfanew` (set to 0
    // here) from where the PE header goes. The other sections keep their places.
    let mut w = v.clone();
    let code: Vec<u8> = (0..0x300u32).map(|i| (i % 251) as u8).collect();
    let text = &mut w.pe.sections[0];
    text.body = code.clone();
    text.body.resize(code.len().next_multiple_of(0x200), 0);
    text.virtual_size = code.len() as u32;
    w.pe.sections[0].pointer_to_raw_data = 0;
    w.mz.ofs_pe_header = 0;
    let out = w.encode().unwrap();
    assert_eq!(out.len(), bytes.len() + 0x400);

    let back = RealPe::decode(&out).unwrap();
    assert_eq!(back.mz.ofs_pe_header, e_lfanew, "e_lfanew derived");
    assert_eq!(
        back.pe.sections[0].pointer_to_raw_data as usize,
        bytes.len()
    );
    assert_eq!(back.pe.sections[0].body.len(), 0x400);
    let from_object = pe::object_sections(&out);
    assert_eq!(
        from_object[0].1 as usize,
        bytes.len(),
        ".text moved to the end"
    );
    assert_eq!(from_object[0].2, code);
    for i in 1..3 {
        assert_eq!(from_object[i].1, offsets[i], "section {i} kept its place");
        assert!(
            v.pe.sections[i].body.starts_with(&from_object[i].2),
            "section {i} kept"
        );
        assert_eq!(back.pe.sections[i].body, v.pe.sections[i].body);
    }
    assert_eq!(
        back.encode().unwrap(),
        out,
        "the written image is written again as is"
    );
    // A `.rdata` that grows too moves after `.text`; the debug directory follows it.
    let mut w2 = back.clone();
    w2.pe.sections[1].body.extend(vec![0xAA; 0x200]);
    let out2 = w2.encode().unwrap();
    let again = RealPe::decode(&out2).unwrap();
    assert_eq!(again.pe.sections[1].pointer_to_raw_data as usize, out.len());
    let (at2, debug2) = schema_debug_dir(&again, &out2);
    assert_eq!(at2, out.len() + pe::DEBUG_AT as usize);
    assert_eq!(debug2, pe::debug_entry());
    assert_eq!(pe::object_debug_dir(&out2), debug2);
    let (at, debug) = schema_debug_dir(&back, &out);
    assert_eq!(at, (offsets[1] + pe::DEBUG_AT) as usize);
    assert_eq!(debug, pe::debug_entry());
    assert_eq!(pe::object_debug_dir(&out), debug);
    interpreter_agrees(
        "real_pe.ksy",
        &out,
        &*real_pe::reflect_decode(&out).unwrap(),
    );
}

// ---------------------------------------------------------------------------------------
// ext2

/// `mke2fs`, or `None` (with a message) when e2fsprogs is not installed outside CI.
fn e2fs_tool(name: &str) -> Option<PathBuf> {
    let found = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.exists());
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "`{name}` (e2fsprogs) is needed by this test under CI"
        );
        eprintln!("skipped: `{name}` (e2fsprogs) is not installed");
    }
    found
}

fn run(tool: &Path, args: &[&str]) -> String {
    let out = Command::new(tool).args(args).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{} {args:?}: {text}", tool.display());
    text
}

#[test]
fn ext2_root_directory_is_read_and_renamed() {
    use real_ext2::{FileType, RealExt2};
    let Some(mke2fs) = e2fs_tool("mke2fs") else {
        return;
    };
    let (e2fsck, debugfs) = (e2fs_tool("e2fsck").unwrap(), e2fs_tool("debugfs").unwrap());
    let dir = std::env::temp_dir().join(format!("statepack-ext2-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("tree/sub")).unwrap();
    std::fs::write(dir.join("tree/hello.txt"), "hello, ext2\n").unwrap();
    std::fs::write(dir.join("tree/sub/inner.bin"), vec![7u8; 3000]).unwrap();
    let img = dir.join("fs.img");
    let img_s = img.to_str().unwrap();
    run(
        &mke2fs,
        &[
            "-q",
            "-F",
            "-d",
            dir.join("tree").to_str().unwrap(),
            "-t",
            "ext2",
            "-b",
            "1024",
            img_s,
            "1M",
        ],
    );
    let bytes = std::fs::read(&img).unwrap();
    let v = RealExt2::decode(&bytes).unwrap();
    assert_eq!(v.block_size().unwrap(), 1024);
    assert_eq!(v.sb.blocks_count as usize * 1024, bytes.len());
    assert_eq!(v.num_groups().unwrap(), 1);
    let inodes = &v.inode_table;
    assert_eq!(inodes.len(), v.sb.inodes_per_group as usize);
    let root_inode = &inodes[1];
    assert_eq!(root_inode.mode & 0xf000, 0x4000, "inode 2 is a directory");
    let entries = &v.root_dir.get().unwrap().entries;
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, [".", "..", "lost+found", "hello.txt", "sub"]);
    // What debugfs lists: the same names and inode numbers.
    let listing = run(&debugfs, &["-R", "ls -l /", img_s]);
    for e in entries {
        let line = listing
            .lines()
            .find(|l| l.split_whitespace().last() == Some(e.name.as_str()))
            .unwrap_or_else(|| panic!("debugfs does not list {}: {listing}", e.name));
        assert_eq!(
            line.split_whitespace().next(),
            Some(e.inode.to_string().as_str())
        );
    }
    // The file's size and contents through its inode.
    let hello = entries.iter().find(|e| e.name == "hello.txt").unwrap();
    assert_eq!(hello.file_type, FileType::Regular);
    let ino = &inodes[hello.inode as usize - 1];
    assert_eq!(ino.size, 12);
    let first = ino.first_block.get().unwrap().as_ref().unwrap();
    assert_eq!(&first[..12], b"hello, ext2\n");
    let sub = entries.iter().find(|e| e.name == "sub").unwrap();
    assert_eq!(sub.file_type, FileType::Directory);
    assert_eq!(
        v.encode().unwrap(),
        bytes,
        "read then written is byte-identical"
    );
    interpreter_agrees(
        "real_ext2.ksy",
        &bytes,
        &*real_ext2::reflect_decode(&bytes).unwrap(),
    );

    // Renames within the records the directory has: `hello.txt` to a name of the same length,
    // and the last entry (whose record runs to the end of the block) to a longer one: its
    // name length is derived, its padding is what the record has left.
    let mut w = v.clone();
    let entries = &mut w.root_dir.get_mut().unwrap().entries;
    entries[3].name = "howdy.txt".to_owned();
    let last = entries.last_mut().unwrap();
    let longer = "a-subdirectory-with-a-longer-name";
    last.name = longer.to_owned();
    last.padding = vec![0; usize::from(last.rec_len) - 8 - longer.len()];
    // The root inode's `first_block` is the same block seen as bytes: while it still holds
    // the old names the writer refuses the file, naming both instances.
    let e = w.encode().unwrap_err().to_string();
    assert!(
        e.contains("instances.root_dir") && e.contains("first_block"),
        "{e}"
    );
    let mut block = statepack_runtime::io::ByteWriter::new();
    w.root_dir.get().unwrap().write_to(&mut block).unwrap();
    w.inode_table[1].first_block.set(Some(block.into_bytes()));
    let out = w.encode().unwrap();
    assert_eq!(out.len(), bytes.len());
    let back = RealExt2::decode(&out).unwrap();
    let names: Vec<String> = back
        .root_dir
        .get()
        .unwrap()
        .entries
        .iter()
        .map(|e| e.name.clone())
        .collect();
    assert_eq!(names, [".", "..", "lost+found", "howdy.txt", longer]);
    std::fs::write(&img, &out).unwrap();
    run(&e2fsck, &["-fn", img_s]);
    let listing = run(&debugfs, &["-R", "ls -l /", img_s]);
    assert!(
        listing.contains(longer) && listing.contains("howdy.txt") && !listing.contains("hello.txt"),
        "{listing}"
    );
    let cat = run(&debugfs, &["-R", "cat /howdy.txt", img_s]);
    assert!(cat.contains("hello, ext2"), "{cat}");
    interpreter_agrees(
        "real_ext2.ksy",
        &out,
        &*real_ext2::reflect_decode(&out).unwrap(),
    );
    let _ = std::fs::remove_dir_all(&dir);
}
