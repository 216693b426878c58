//! Positional instances (`pos`) through the generated Luau: every schema of
//! `codegen/tests/run/` with positional instances that `--target luau` accepts is read by the
//! Luau module to the interpreter's values, and written back by the Luau module to the bytes
//! the generated Rust writer (the modules checked in beside those schemas) writes from the
//! same input — the input itself where Rust is byte-identical. Changed values are laid out at
//! their positions as in Rust, and an overlap with other bytes or an instance past the end
//! of the output is refused with Rust's message.

mod common;

use mlua::{Function, Table, Value};
use statepack_codegen::lua_emit::{self, Target};
use statepack_codegen::typed::Checked;
use statepack_luahost::{repo_root, tree, LuauHost};
use std::path::Path;

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip]
#[path = "../../codegen/tests/run/positional.rs"]
mod positional;

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip]
#[path = "../../codegen/tests/run/positional_chain.rs"]
mod positional_chain;

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip]
#[path = "../../codegen/tests/run/processed_positional.rs"]
mod processed_positional;

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip]
#[path = "../../codegen/tests/run/io_other.rs"]
mod io_other;

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip]
#[path = "../../codegen/tests/run/endian_switch.rs"]
mod endian_switch;

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip]
#[path = "../../codegen/tests/run/adversarial.rs"]
mod adversarial;

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip]
#[path = "../../codegen/tests/run/parent_io.rs"]
mod parent_io;

/// Generates the Luau module of the schema text `text` (named `file`); the checked schema
/// and the module loaded in a fresh VM.
fn load(text: &str, file: &Path) -> Result<(Checked, LuauHost, Table), String> {
    let name = file.display().to_string();
    let schema = statepack_codegen::load_checked(text, &name, file, &[])
        .map_err(|d| statepack_codegen::render(&d))?;
    let code = lua_emit::generate(text, &name, file, &[], Target::Luau)
        .map_err(|d| statepack_codegen::render(&d))?;
    let host = LuauHost::new().map_err(|e| e.to_string())?;
    let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
    match host.load_module(&stem, &code) {
        Ok(Value::Table(t)) => Ok((schema, host, t)),
        Ok(other) => Err(format!("module gave {other:?}")),
        Err(e) => Err(format!("module does not run: {e}\n{code}")),
    }
}

/// `M.decode(bytes)`, then `edit` (Luau statements over the value `v`), then `M.encode(v)`:
/// the value read and the bytes written, or the message of the error raised.
fn round_trip(
    host: &LuauHost,
    module: &Table,
    bytes: &[u8],
    edit: &str,
) -> (Table, Result<Vec<u8>, String>) {
    let run: Function = host
        .lua
        .load(format!(
            "local m, buf = ...\nlocal v = m.decode(buf)\n{edit}\nlocal ok, b = pcall(m.encode, v)\nif ok then return v, true, buffer.tostring(b) end\nif type(b) == 'table' and b.message ~= nil then return v, false, b.message end\nreturn v, false, tostring(b)"
        ))
        .into_function()
        .unwrap();
    let buf = host.lua.create_buffer(bytes).unwrap();
    let (v, ok, out): (Table, bool, mlua::String) = run.call((module.clone(), buf)).unwrap();
    let out = if ok {
        Ok(out.as_bytes().to_vec())
    } else {
        Err(out.to_string_lossy())
    };
    (v, out)
}

/// `positional.ksy` without its value instance over `block._io` (a value's stream, which
/// the Luau target does not read): the same layout, so the generated Rust is the reference.
fn positional_schema() -> (String, std::path::PathBuf) {
    let src = repo_root().join("codegen/tests/run/positional.ksy");
    let text = std::fs::read_to_string(&src).unwrap();
    let mut out = String::new();
    let mut skip = false;
    for l in text.lines() {
        if l == "  block_io:" {
            skip = true;
            continue;
        }
        if skip && l.starts_with("    ") {
            continue;
        }
        skip = false;
        out.push_str(l);
        out.push('\n');
    }
    assert!(!out.contains("block._io"), "block_io is removed");
    let dir = std::env::temp_dir().join(format!("luau-positional-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    (out, dir.join("positional.ksy"))
}

/// `ofs_name` = 9; two numbers (count from `header` at 12); a 6-byte `block` whose `inner`
/// sits at 4 of its substream; `name` = "hi" at 9, `header.count` = 2 at 12, a gap byte at
/// 13, `tail_word` in the last two bytes (`_io.size - 2`): the input of the Rust tests.
const POSITIONAL: [u8; 16] = [
    9, 0x0a, 0x0b, 0x61, 0x62, 0x63, 0x64, 0x34, 0x12, b'h', b'i', 0, 2, 0x77, 0xcd, 0xab,
];

/// `len` = 3, then the chunk [ofs = 2, 0x00, 0x77] xor 0x5a.
fn processed_bytes() -> Vec<u8> {
    let plain = [2u8, 0x00, 0x77];
    let mut b = vec![plain.len() as u8];
    b.extend(plain.iter().map(|x| x ^ 0x5a));
    b
}

/// Two documents, `II` (little-endian body) and `MM` (big-endian body); `at_two` of each
/// body reads bytes 2..4 of the whole input in the body's order.
const ENDIAN_DOCS: [u8; 28] = [
    b'I', b'I', 0x02, 0x01, 0x03, 0x04, 0xfe, 0xff, 0xff, 0xff, 0x00, 0x00, 0xc0, 0x3f, //
    b'M', b'M', 0x01, 0x02, 0x03, 0x04, 0xff, 0xff, 0xff, 0xfe, 0x3f, 0xc0, 0x00, 0x00,
];

/// A file of `adversarial.ksy` with a chain of two nodes after the seq (a stored zlib body,
/// which the Luau module keeps as bytes).
fn adversarial_bytes() -> Vec<u8> {
    let body = statepack_runtime::cbtk_columns::deflate(b"steer", 6);
    let mut v = Vec::new();
    v.extend_from_slice(&0u32.to_le_bytes());
    v.extend_from_slice(&0xffffu16.to_le_bytes());
    v.extend_from_slice(&[3, 0, 0, 0]);
    v.push(body.len() as u8);
    v.extend_from_slice(&body);
    v.extend_from_slice(&[7, 0]);
    let end = v.len() as u16;
    v[4..6].copy_from_slice(&end.to_le_bytes());
    v.extend_from_slice(&(end + 3).to_le_bytes());
    v.push(0xAA);
    v.extend_from_slice(&0u16.to_le_bytes());
    v.push(0xBB);
    v
}

type RustWrite = fn(&[u8]) -> Result<Vec<u8>, String>;

fn rust_positional(b: &[u8]) -> Result<Vec<u8>, String> {
    let v = positional::Positional::decode(b).map_err(|e| e.to_string())?;
    v.encode().map_err(|e| e.to_string())
}
fn rust_chain(b: &[u8]) -> Result<Vec<u8>, String> {
    let v = positional_chain::PositionalChain::decode(b).map_err(|e| e.to_string())?;
    v.encode().map_err(|e| e.to_string())
}
fn rust_processed(b: &[u8]) -> Result<Vec<u8>, String> {
    let v = processed_positional::ProcessedPositional::decode(b).map_err(|e| e.to_string())?;
    v.encode().map_err(|e| e.to_string())
}
fn rust_endian(b: &[u8]) -> Result<Vec<u8>, String> {
    let v = endian_switch::EndianSwitch::decode(b).map_err(|e| e.to_string())?;
    v.encode().map_err(|e| e.to_string())
}
fn rust_adversarial(b: &[u8]) -> Result<Vec<u8>, String> {
    let v = adversarial::Adversarial::decode(b).map_err(|e| e.to_string())?;
    v.encode().map_err(|e| e.to_string())
}

fn rust_parent_io(b: &[u8]) -> Result<Vec<u8>, String> {
    let v = parent_io::ParentIo::decode(b).map_err(|e| e.to_string())?;
    v.encode().map_err(|e| e.to_string())
}

#[test]
fn positional_schemas_round_trip_like_rust() {
    let (ptext, ppath) = positional_schema();
    let run = |n: &str| {
        repo_root()
            .join("codegen/tests/run")
            .join(format!("{n}.ksy"))
    };
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    // (schema text, file, samples, Rust writer, whether values compare with the
    // interpreter: the Luau module keeps zlib bytes as stored).
    let chain_p = run("positional_chain");
    let proc_p = run("processed_positional");
    let endian_p = run("endian_switch");
    let adv_p = run("adversarial");
    let parent_p = run("parent_io");
    let mut moved = POSITIONAL;
    // `tail_word` is kept where it was read: after the name moves into the gap byte.
    moved[0] = 13;
    moved[13] = 0;
    #[allow(clippy::type_complexity)]
    let cases: Vec<(String, &Path, Vec<Vec<u8>>, RustWrite, bool)> = vec![
        (
            ptext.clone(),
            &ppath,
            vec![POSITIONAL.to_vec(), moved.to_vec()],
            rust_positional,
            true,
        ),
        (
            read(&chain_p),
            &chain_p,
            vec![
                vec![2, 10, 4, 20, 0, 30],
                vec![0, 5],
                vec![4, 1, 0, 0, 0, 9],
            ],
            rust_chain,
            true,
        ),
        (
            read(&proc_p),
            &proc_p,
            vec![processed_bytes()],
            rust_processed,
            true,
        ),
        (
            read(&endian_p),
            &endian_p,
            vec![ENDIAN_DOCS.to_vec(), ENDIAN_DOCS[..14].to_vec()],
            rust_endian,
            true,
        ),
        (
            read(&adv_p),
            &adv_p,
            vec![adversarial_bytes()],
            rust_adversarial,
            false,
        ),
        // `io: _parent._io` and `_root` / `_parent` paths in nested instance positions.
        (
            read(&parent_p),
            &parent_p,
            vec![vec![8, 5, 2, 3, 4, 0xa1, 0xb2, 0x77, 0, 0, 0, 0xc1, 0xc2]],
            rust_parent_io,
            true,
        ),
    ];
    std::fs::write(&ppath, &ptext).unwrap();
    let mut files = 0;
    for (text, path, samples, rust_write, values) in cases {
        let name = path.display().to_string();
        let (schema, host, module) = load(&text, path).unwrap_or_else(|e| panic!("{name}: {e}"));
        for bytes in samples {
            let want = rust_write(&bytes).unwrap_or_else(|e| panic!("{name}: Rust: {e}"));
            let (t, got) = round_trip(&host, &module, &bytes, "");
            if values {
                let rust = statepack_codegen::interp::decode(&schema, &bytes)
                    .unwrap_or_else(|e| panic!("{name}: interpreter: {e}"));
                let node = tree::convert(&schema, &schema.types[0].name, &t)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                statepack_codegen::interp::compare(&rust, &node)
                    .unwrap_or_else(|e| panic!("{name} {bytes:02x?}: Rust vs Luau: {e}"));
            }
            let got = got.unwrap_or_else(|e| panic!("{name} {bytes:02x?}: Luau write: {e}"));
            assert_eq!(got, want, "{name} {bytes:02x?}: Luau vs Rust writer");
            assert_eq!(got, bytes, "{name}: Rust and Luau write the input back");
            files += 1;
        }
    }
    common::report(
        "positional-instance inputs read and written back by generated Luau as by Rust",
        files,
    );
}

/// Luau and Rust make the same change to the decoded `POSITIONAL`; both results (bytes or
/// message) must agree.
fn same_change(
    host: &LuauHost,
    module: &Table,
    edit_luau: &str,
    edit_rust: fn(&mut positional::Positional),
) -> Result<Vec<u8>, String> {
    let mut v = positional::Positional::decode(&POSITIONAL).unwrap();
    edit_rust(&mut v);
    let rust = v.encode().map_err(|e| e.to_string());
    let (_, luau) = round_trip(host, module, &POSITIONAL, edit_luau);
    match (&rust, &luau) {
        (Ok(r), Ok(l)) => assert_eq!(r, l, "`{edit_luau}`: Rust vs Luau bytes"),
        (Err(r), Err(l)) => assert!(
            r.contains(l.as_str()),
            "`{edit_luau}`: Rust `{r}` vs Luau `{l}`"
        ),
        _ => panic!("`{edit_luau}`: Rust {rust:?} vs Luau {luau:?}"),
    }
    luau
}

#[test]
fn changed_instances_are_laid_out_or_refused_as_in_rust() {
    let (text, path) = positional_schema();
    std::fs::write(&path, &text).unwrap();
    let (_, host, module) = load(&text, &path).unwrap();
    // Written at their positions, the gap byte kept.
    let out = same_change(&host, &module, "v.name = 'yo'; v.tail_word = 0x0102", |v| {
        v.name.set("yo".into());
        v.tail_word = 0x0102;
    })
    .unwrap();
    let mut want = POSITIONAL;
    want[9] = b'y';
    want[10] = b'o';
    want[14] = 0x02;
    want[15] = 0x01;
    assert_eq!(out, want);
    // `name` moved onto `header` (both at 12), with other bytes.
    let e = same_change(&host, &module, "v.name = 'yo'; v.ofs_name = 12", |v| {
        v.name.set("yo".into());
        v.ofs_name = 12;
    })
    .unwrap_err();
    assert!(
        e.contains("`instances.name` overlaps `instances.header` at byte offset 12"),
        "{e}"
    );
    // An instance over bytes the seq wrote must agree with them.
    let e = same_change(&host, &module, "v.block.inner = 0x5555", |v| {
        *v.block.inner.get_mut().unwrap() = 0x5555
    })
    .unwrap_err();
    assert!(
        e.contains("`types.block.instances.inner` overlaps the fields written in sequence at byte offset 7"),
        "{e}"
    );
    // Past the end of the output (16 bytes with the kept ones): refused, not padded.
    let e = same_change(&host, &module, "v.ofs_name = 40", |v| v.ofs_name = 40).unwrap_err();
    assert!(
        e.contains(
            "`instances.name` starts at byte offset 40, after the end of the output (16 bytes)"
        ),
        "{e}"
    );
    // The trailer (`tail_word`, at `_io.size - 2`) moved back by one ends the output there:
    // the kept byte after it (`__beyond`) is dropped, so the file reads it back where it is.
    let out = same_change(&host, &module, "v.__pos_tail_word = 13", |v| {
        v.__pos_tail_word = 13
    })
    .unwrap();
    assert_eq!(&out[13..], &[0xcd, 0xab]);
    // Processed: the instance must agree with the substream's bytes kept around it.
    let proc_p = repo_root().join("codegen/tests/run/processed_positional.ksy");
    let (_, host, module) = load(&std::fs::read_to_string(&proc_p).unwrap(), &proc_p).unwrap();
    let (_, e) = round_trip(&host, &module, &processed_bytes(), "v.chunk.at_ofs = 0x78");
    let mut rv = processed_positional::ProcessedPositional::decode(&processed_bytes()).unwrap();
    rv.chunk.at_ofs = 0x78;
    let r = rv.encode().unwrap_err().to_string();
    let e = e.unwrap_err();
    assert!(
        r.contains(&e) && e.contains("`types.chunk.instances.at_ofs` overlaps"),
        "Rust `{r}` vs Luau `{e}`"
    );
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

/// CBTK tracks written by statepack (`schema/cbtrack_v1.ksy`: the info, features and window
/// chunks are positional instances, at block offsets the header and window index give): the
/// Luau module reads them (zlib chunks kept as stored bytes) and writes them back to the
/// bytes the generated Rust writer writes, which are the track's own.
#[test]
fn cbtk_tracks_round_trip_through_luau() {
    use statepack::formats::cbtrack::CbtrackV1;
    use statepack::sim::cbtrack_match::MatchSpec;
    let path = repo_root().join("schema/cbtrack_v1.ksy");
    let text = statepack_codegen::read_schema_file(&path).unwrap();
    let (_, host, module) = load(&text, &path).unwrap();
    let small = MatchSpec::small();
    let mut larger = MatchSpec::small();
    larger.units = 24;
    larger.frames = 900;
    larger.window_length = 128;
    let mut tracks = 0;
    for spec in [small, larger] {
        let mut out = std::io::Cursor::new(Vec::new());
        spec.write(&mut out, |_, _| {}).unwrap();
        let bytes = out.into_inner();
        let decoded = CbtrackV1::decode(&bytes).unwrap();
        let windows = decoded.head.index.len();
        let rust = decoded.encode().unwrap();
        let (_, luau) = round_trip(&host, &module, &bytes, "");
        let luau = luau.unwrap_or_else(|e| panic!("Luau write: {e}"));
        assert!(
            luau == rust,
            "Luau wrote {} byte(s), Rust {}",
            luau.len(),
            rust.len()
        );
        assert!(luau == bytes, "the track's own bytes");
        // The second window's main chunk moved onto the first one's: refused, naming both.
        assert!(windows >= 2, "{windows} window(s)");
        let (_, e) = round_trip(
            &host,
            &module,
            &bytes,
            "v.head.index[2].main_block = v.head.index[1].main_block",
        );
        let e = e.unwrap_err();
        assert!(
            e.contains("`types.window.instances.main` overlaps `types.window.instances.main`"),
            "{e}"
        );
        let mut moved = decoded.clone();
        moved.head.index[1].main_block = moved.head.index[0].main_block;
        moved.windows[1].entry.main_block = moved.head.index[0].main_block;
        let r = moved.encode().unwrap_err().to_string();
        assert!(r.contains(&e), "Rust `{r}` vs Luau `{e}`");
        tracks += 1;
    }
    common::report(
        "CBTK tracks read and written back by generated Luau",
        tracks,
    );
}

/// The runtime's lay-out against the Rust runtime's (`ByteWriter::instance_writer`, `place`,
/// `lay_out_positional`) on random streams: bytes written in sequence, kept bytes, and up to
/// four instances at random positions, with bytes from a two-letter alphabet so that overlaps
/// agree as often as they differ. The same bytes, or the same message.
#[test]
fn lay_out_matches_the_rust_runtime() {
    use statepack_runtime::io::ByteWriter;
    let host = LuauHost::new().unwrap();
    let lay_out: Function = host
        .eval(
            "lay_out",
            r#"
            return function(seq, kept, placements)
                local w = Statepack.writer()
                Statepack.writeBytes(w, seq)
                for _, p in placements do
                    local iw = Statepack.instanceWriter(w, p[1], false, nil)
                    Statepack.writeBytes(iw, p[2])
                    Statepack.place(w, iw, p[3])
                end
                local ok, e = pcall(Statepack.layOut, w, kept)
                if not ok then
                    return false, e.message
                end
                return true, buffer.tostring(Statepack.finish(w))
            end
            "#,
        )
        .unwrap();
    const NAMES: [&str; 4] = [
        "instances.a",
        "instances.b",
        "types.t.instances.c",
        "instances.d",
    ];
    let mut rng = common::Rng(0x5EED_0050);
    let (mut written, mut refused) = (0, 0);
    let two = |rng: &mut common::Rng, n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| if rng.next_u64() % 2 == 0 { 0xA1 } else { 0x5C })
            .collect()
    };
    for _ in 0..4000 {
        let seq_len = rng.range(0, 12) as usize;
        let seq = two(&mut rng, seq_len);
        let kept_len = rng.range(0, 6) as usize;
        let kept = two(&mut rng, kept_len);
        let n = rng.range(1, 5) as usize;
        let mut placements = Vec::new();
        for name in NAMES.iter().take(n) {
            let pos = rng.range(0, 22);
            let len = rng.range(0, 6) as usize;
            placements.push((pos, two(&mut rng, len), *name));
        }
        let mut w = ByteWriter::new();
        w.write_bytes(&seq);
        for (pos, b, name) in &placements {
            let mut iw = w.instance_writer(i128::from(*pos), false).unwrap();
            iw.write_bytes(b);
            w.place(iw, name);
        }
        let rust = w
            .lay_out_positional(&kept)
            .map(|()| w.into_bytes())
            .map_err(|e| e.to_string());
        let list = host.lua.create_table().unwrap();
        for (pos, b, name) in &placements {
            let p = host.lua.create_table().unwrap();
            p.push(*pos).unwrap();
            p.push(host.lua.create_string(b).unwrap()).unwrap();
            p.push(*name).unwrap();
            list.push(p).unwrap();
        }
        let (ok, out): (bool, mlua::String) = lay_out
            .call((
                host.lua.create_string(&seq).unwrap(),
                host.lua.create_string(&kept).unwrap(),
                list,
            ))
            .unwrap();
        match (rust, ok) {
            (Ok(r), true) => {
                assert_eq!(
                    r,
                    out.as_bytes().to_vec(),
                    "{seq:02x?} {kept:02x?} {placements:02x?}"
                );
                written += 1;
            }
            (Err(r), false) => {
                let l = out.to_string_lossy();
                assert!(r.contains(&l), "Rust `{r}` vs Luau `{l}`");
                refused += 1;
            }
            (r, _) => panic!(
                "{seq:02x?} {kept:02x?} {placements:02x?}: Rust {r:?} vs Luau {}",
                out.to_string_lossy()
            ),
        }
    }
    assert!(
        written > 500 && refused > 500,
        "{written} laid out, {refused} refused"
    );
    common::report(
        "random positional lay-outs (bytes or refusal)",
        written + refused,
    );
}

/// `M.decode(bytes)` under pcall: the value, or the error's (path, offset).
fn decode_or_error(
    host: &LuauHost,
    module: &Table,
    bytes: &[u8],
) -> Result<Table, (String, u64, String)> {
    let run: Function = host
        .lua
        .load("local m, buf = ...\nlocal ok, v = pcall(m.decode, buf)\nif ok then return true, v end\nif type(v) == 'table' and v.path ~= nil then return false, v.path, v.offset, v.message end\nreturn false, '', -1, tostring(v)")
        .into_function()
        .unwrap();
    let buf = host.lua.create_buffer(bytes).unwrap();
    let (ok, v, off, msg): (bool, Value, Option<f64>, Option<mlua::String>) =
        run.call((module.clone(), buf)).unwrap();
    match (ok, v) {
        (true, Value::Table(t)) => Ok(t),
        (_, v) => Err((
            match v {
                Value::String(s) => s.to_string_lossy(),
                _ => String::new(),
            },
            off.unwrap_or(-1.0) as u64,
            msg.map(|m| m.to_string_lossy()).unwrap_or_default(),
        )),
    }
}

/// Two 3-byte blocks stored XORed with `_io.pos` after their bytes (3, then 6), then a tag:
/// `peek.first_rest` reads byte 2 of the first block's substream (the byte the block leaves
/// unread), `peek.second_a` the second block's first two bytes.
const IO_OTHER: [u8; 7] = [0x13, 0x23, 0x33, 0x46, 0x56, 0x66, 0x77];

/// `io: X._io` (`codegen/tests/run/io_other.ksy`): the Luau module reads the instances from
/// the blocks' processed substreams to the interpreter's values, writes the input back as
/// the generated Rust does, refuses an instance that disagrees with its block's bytes with
/// Rust's message, and refuses every truncated input at the interpreter's path and offset;
/// instances that run past their substream are refused at the same path and offset too
/// (offsets counted from the substream's start).
#[test]
fn instances_in_another_values_stream_read_and_write_like_rust() {
    let path = repo_root().join("codegen/tests/run/io_other.ksy");
    let text = std::fs::read_to_string(&path).unwrap();
    let (schema, host, module) = load(&text, &path).unwrap();
    let t = decode_or_error(&host, &module, &IO_OTHER).unwrap();
    let rust = statepack_codegen::interp::decode(&schema, &IO_OTHER).unwrap();
    let node = tree::convert(&schema, "io_other", &t).unwrap();
    statepack_codegen::interp::compare(&rust, &node).unwrap();
    let peek: Table = t.get("peek").unwrap();
    assert_eq!(peek.get::<u32>("first_rest").unwrap(), 0x30);
    assert_eq!(peek.get::<u32>("second_a").unwrap(), 0x5040);
    let rv = io_other::IoOther::decode(&IO_OTHER).unwrap();
    let (_, out) = round_trip(&host, &module, &IO_OTHER, "");
    assert_eq!(out.unwrap(), rv.encode().unwrap(), "Luau vs Rust writer");

    // An instance that disagrees with its block's bytes: the same refusal as Rust's.
    let (_, e) = round_trip(&host, &module, &IO_OTHER, "v.peek.first_rest = 0x31");
    let e = e.unwrap_err();
    let mut w = rv.clone();
    w.peek.first_rest = 0x31;
    let r = w.encode().unwrap_err().to_string();
    assert!(
        r.contains(&e)
            && e.contains("differs from the bytes of `_parent.blocks[0]` at byte offset 2"),
        "Rust `{r}` vs Luau `{e}`"
    );
    // The block and the instance changed together agree; the key is applied again.
    let (_, out) = round_trip(
        &host,
        &module,
        &IO_OTHER,
        "v.blocks[2].a = 0x0102; v.peek.second_a = 0x0102",
    );
    let mut w = rv.clone();
    w.blocks[1].a = 0x0102;
    w.peek.__ctx_parent_blocks[1].a = 0x0102;
    w.peek.second_a = 0x0102;
    let out = out.unwrap();
    assert_eq!(out, w.encode().unwrap());
    assert_eq!(&out[3..5], &[0x02 ^ 6, 0x01 ^ 6]);

    // Every truncation: refused where the interpreter refuses it.
    let mut cuts = 0;
    for n in 0..IO_OTHER.len() {
        let want = statepack_codegen::interp::decode(&schema, &IO_OTHER[..n]).unwrap_err();
        let (p, off, msg) = decode_or_error(&host, &module, &IO_OTHER[..n]).unwrap_err();
        assert_eq!(
            (p.as_str(), off),
            (want.path.to_string().as_str(), want.offset),
            "{n} byte(s): Luau `{msg}` vs Rust `{want}`"
        );
        cuts += 1;
    }
    // Instances that do not fit their substream: a read past its end, a position past it.
    let dir = std::env::temp_dir().join(format!("luau-io-other-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let variants = [
        (
            "pos: 0\n        type: u2",
            "pos: 0\n        type: u4",
            "peek.second_a",
            0,
        ),
        (
            "pos: 2\n        type: u1",
            "pos: 2\n        type: u2",
            "peek.first_rest",
            2,
        ),
        (
            "pos: 2\n        type: u1",
            "pos: 4\n        type: u1",
            "peek.first_rest",
            0,
        ),
    ];
    for (from, to, at, _) in variants {
        assert!(text.contains(from), "{from}");
        let vp = dir.join("io_other.ksy");
        let vtext = text.replace(from, to);
        std::fs::write(&vp, &vtext).unwrap();
        let (vschema, vhost, vmodule) = load(&vtext, &vp).unwrap();
        let want = statepack_codegen::interp::decode(&vschema, &IO_OTHER).unwrap_err();
        let (p, off, msg) = decode_or_error(&vhost, &vmodule, &IO_OTHER).unwrap_err();
        assert_eq!(
            (p.as_str(), off),
            (want.path.to_string().as_str(), want.offset),
            "`{to}`: Luau `{msg}` vs Rust `{want}`"
        );
        assert_eq!(p, at, "{msg}");
        cuts += 1;
    }
    let _ = std::fs::remove_dir_all(&dir);
    common::report(
        "`io: X._io` inputs read and written as by Rust, refusals at Rust's path and offset",
        cuts + 3,
    );
}
