//! Lua 5.1 (Debian's `lua5.1`, in a child process) against the Rust runtime: the reader
//! runtime (`lua/lua51/statepack51.lua`) on random bytes, the engine's VFS quirks, and CBTK
//! tracks written by statepack sampled in Lua (`lua/lua51/cbtk_sample.lua`) to the same unit
//! positions and rotations as the Rust sampler (`Player::sample`, what `statepack sample`
//! prints), with every number the Lua side computes checked to be exact in a 32-bit float.
//!
//! Inflating: Lua 5.1 has no zlib, and the engine's `VFS.ZlibDecompress` is not here. The
//! test inflates each main chunk with flate2 and writes the (stream, inflated bytes) pairs to
//! a side file; the `VFS.ZlibDecompress` stand-in (`luahost/lua51/vfs_standin.lua`) looks a
//! stream up there and raises an error for any stream it does not know, as the engine does for
//! a bad stream. The Lua reader still finds, fetches and hands over each compressed chunk
//! itself. Without `lua5.1` these tests skip with a message; with `CI=true` they fail.

mod common;

use common::{report, Rng};
use statepack::formats::cbtrack::{Player, Track};
use statepack::sim::cbtrack_match::MatchSpec;
use statepack_luahost::{lua51, repo_root};
use std::io::Read;
use std::path::{Path, PathBuf};

fn driver(name: &str) -> PathBuf {
    repo_root().join("luahost").join("lua51").join(name)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("statepack-luahost-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Removes the scratch files of a test that passed (a failing test leaves them to look at).
fn cleanup(paths: &[&Path]) {
    for p in paths {
        let _ = std::fs::remove_file(p);
        // The folder goes with the last test's files (removing a non-empty one fails).
        if let Some(dir) = p.parent() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

fn parse(v: &str) -> f64 {
    match v {
        "inf" => f64::INFINITY,
        "-inf" => f64::NEG_INFINITY,
        "nan" | "-nan" => f64::NAN,
        _ => v.parse().unwrap_or_else(|_| panic!("not a number: {v}")),
    }
}

/// Every column type at every offset of random bytes, read by the readers and by the
/// one-call column path, through the VFS stand-in and through arithmetic alone.
#[test]
fn runtime_reads_match_rust() {
    let Some(lua) = lua51::interpreter("runtime_reads_match_rust") else {
        return;
    };
    let mut rng = Rng(0x5EED_0301);
    let mut count = 0;
    for round in 0..6 {
        let mut bytes = rng.bytes(200);
        // Floats worth reading: a few well-formed f32s among the random bits.
        for i in 0..10 {
            let v = (rng.unit() * 1e4) as f32;
            bytes[i * 8..i * 8 + 4].copy_from_slice(&v.to_le_bytes());
        }
        let file = scratch(&format!("bytes{round}.bin"));
        std::fs::write(&file, &bytes).unwrap();
        for mode in ["vfs", "plain"] {
            let out = lua51::run(
                &lua,
                &driver("runtime_driver.lua"),
                &[file.to_str().unwrap(), mode],
            )
            .unwrap();
            for line in out.lines() {
                let mut it = line.split(' ');
                let tag = it.next().unwrap();
                if let Some(rest) = tag.strip_prefix("LAST") {
                    assert!(rest.is_empty());
                    let ok = it.next().unwrap();
                    // The engine's UnpackType returns nothing at the last byte: the column path
                    // reports it; the arithmetic path reads it.
                    if mode == "vfs" {
                        assert_eq!(ok, "false", "{line}");
                        assert!(line.contains("cols[7] (byte offset 199)"), "{line}");
                    } else {
                        assert_eq!(ok, "true", "{line}");
                    }
                    count += 1;
                    continue;
                }
                let code: u8 = tag[1..].parse().unwrap();
                let size = [0, 1, 2, 2, 4, 4, 4][code as usize];
                let vals: Vec<f64> = it.filter(|s| !s.is_empty()).map(parse).collect();
                let start = if tag.starts_with('R') { 0 } else { 1 };
                let want_len = if start == 0 {
                    bytes.len() - size + 1
                } else {
                    (bytes.len() - 2) / size
                };
                assert_eq!(vals.len(), want_len, "{mode} {tag}");
                for (i, g) in vals.iter().enumerate() {
                    let at = start + i * if start == 0 { 1 } else { size };
                    let b = &bytes[at..at + size];
                    let want = match code {
                        1 => f64::from(b[0]),
                        2 => f64::from(u16::from_le_bytes([b[0], b[1]])),
                        3 => f64::from(i16::from_le_bytes([b[0], b[1]])),
                        4 => f64::from(u32::from_le_bytes(b.try_into().unwrap())),
                        5 => f64::from(i32::from_le_bytes(b.try_into().unwrap())),
                        _ => f64::from(f32::from_le_bytes(b.try_into().unwrap())),
                    };
                    assert!(
                        *g == want || (g.is_nan() && want.is_nan()),
                        "{mode} {tag} at {at}: Lua {g} Rust {want}"
                    );
                    count += 1;
                }
            }
        }
        cleanup(&[&file]);
    }
    report("Lua 5.1 runtime reads", count);
}

/// The side file of (zlib stream, inflated bytes) pairs for every main chunk of `bytes`.
fn write_side_file(bytes: &[u8], path: &Path) {
    let t = Track::open(bytes).unwrap();
    let mut out = Vec::new();
    for e in &t.raw.index {
        let at = e.main_block as usize * 64;
        let z = &bytes[at..at + e.main_len as usize];
        let mut inflated = Vec::new();
        flate2::read::ZlibDecoder::new(z)
            .read_to_end(&mut inflated)
            .unwrap();
        out.extend(format!("{} {}\n", z.len(), inflated.len()).bytes());
        out.extend(z);
        out.extend(inflated);
    }
    std::fs::write(path, out).unwrap();
}

#[derive(Debug)]
struct LuaSample {
    frame: f64,
    units: Vec<[f64; 11]>,
}

fn run_sampler(
    lua: &PathBuf,
    track: &Path,
    side: &Path,
    frames: &[f64],
    mode: &str,
) -> (Vec<Result<LuaSample, String>>, u64) {
    let fpath = track.with_extension("frames");
    std::fs::write(
        &fpath,
        frames
            .iter()
            .map(|f| format!("{f:?}\n"))
            .collect::<String>(),
    )
    .unwrap();
    let out = lua51::run(
        lua,
        &driver("cbtk_driver.lua"),
        &[
            track.to_str().unwrap(),
            side.to_str().unwrap(),
            fpath.to_str().unwrap(),
            mode,
            "check",
        ],
    )
    .unwrap();
    let mut samples: Vec<Result<LuaSample, String>> = Vec::new();
    let mut checked = 0;
    for line in out.lines() {
        let mut it = line.split(' ');
        match it.next().unwrap() {
            "F" => samples.push(Ok(LuaSample {
                frame: parse(it.next().unwrap()),
                units: Vec::new(),
            })),
            "U" => {
                let v: Vec<f64> = it.map(parse).collect();
                let s = samples.last_mut().unwrap().as_mut().unwrap();
                s.units.push(v.try_into().unwrap());
            }
            "E" => samples.push(Err(line[2..].to_owned())),
            "CHECKED" => checked = it.next().unwrap().parse().unwrap(),
            other => panic!("unexpected line {other}"),
        }
    }
    (samples, checked)
}

/// Tracks written by statepack, sampled at every frame and between frames, in Lua 5.1:
/// the same units at the same positions and rotations (bit for bit) as the Rust sampler.
/// Both column paths (VFS stand-in, arithmetic) and the 32-bit float number checks are on.
#[test]
fn sampled_unit_positions_match_rust() {
    let Some(lua) = lua51::interpreter("sampled_unit_positions_match_rust") else {
        return;
    };
    let small = MatchSpec::small();
    let mut larger = MatchSpec::small();
    larger.units = 24;
    larger.frames = 900;
    larger.window_length = 128;
    larger.spawn_every = 9;
    larger.lifetime = 400;
    let (mut units, mut frames, mut checked) = (0, 0, 0u64);
    for (name, spec) in [("small", small), ("larger", larger)] {
        let mut out = std::io::Cursor::new(Vec::new());
        spec.write(&mut out, |_, _| {}).unwrap();
        let bytes = out.into_inner();
        let track = scratch(&format!("{name}.cbtrack"));
        let side = scratch(&format!("{name}.inflated"));
        std::fs::write(&track, &bytes).unwrap();
        write_side_file(&bytes, &side);
        let mut player = Player::new(&bytes).unwrap();
        let (first, last) = (player.header().first_frame, player.header().last_frame);
        let mut at: Vec<f64> = (first..=last).map(f64::from).collect();
        at.extend((first..last).map(|f| f as f64 + 0.5));
        at.extend((first..last).step_by(7).map(|f| f as f64 + 0.123));
        for mode in ["vfs", "plain"] {
            let (samples, n) = run_sampler(&lua, &track, &side, &at, mode);
            checked += n;
            assert_eq!(samples.len(), at.len());
            for (frame, got) in at.iter().zip(samples) {
                let got = got.unwrap_or_else(|e| panic!("{name} {mode} frame {frame}: {e}"));
                assert_eq!(got.frame, *frame);
                let want = player.sample(*frame).unwrap();
                assert_eq!(
                    got.units.len(),
                    want.units.len(),
                    "{name} {mode} frame {frame}"
                );
                for (g, w) in got.units.iter().zip(&want.units) {
                    let expect = [
                        f64::from(w.serial),
                        f64::from(w.unit_id),
                        f64::from(w.def),
                        f64::from(w.team),
                        w.pos_elmos[0],
                        w.pos_elmos[1],
                        w.pos_elmos[2],
                        w.rot[0],
                        w.rot[1],
                        w.rot[2],
                        w.rot[3],
                    ];
                    assert_eq!(
                        g.map(f64::to_bits),
                        expect.map(f64::to_bits),
                        "{name} {mode} frame {frame}: Lua {g:?} Rust {expect:?}"
                    );
                    units += 1;
                }
                frames += 1;
            }
        }
        cleanup(&[&track, &side, &track.with_extension("frames")]);
    }
    assert!(checked > 10_000, "{checked}");
    println!("lua5.1 32-bit float profile: {checked} computed numbers checked exact in an f32");
    report("Lua 5.1 CBTK sampled frames", frames);
    report("Lua 5.1 CBTK sampled unit states", units);
}

/// A damaged main chunk is an error for that window only, named by its index entry as in
/// Rust; frames of other windows still sample.
#[test]
fn damaged_chunk_is_named_like_rust() {
    let Some(lua) = lua51::interpreter("damaged_chunk_is_named_like_rust") else {
        return;
    };
    let mut out = std::io::Cursor::new(Vec::new());
    MatchSpec::small().write(&mut out, |_, _| {}).unwrap();
    let bytes = out.into_inner();
    let track = scratch("damaged.cbtrack");
    let side = scratch("damaged.inflated");
    write_side_file(&bytes, &side);
    let t = Track::open(&bytes).unwrap();
    let e = &t.raw.index[1];
    let mut bad = bytes.clone();
    let at = e.main_block as usize * 64 + e.main_len as usize / 2;
    bad[at] ^= 0x55;
    std::fs::write(&track, &bad).unwrap();
    let rust_err = Track::open(&bad).unwrap().window(1).unwrap_err();
    let h = t.header();
    let in_w1 = f64::from(h.window_span(1).0) + 1.0;
    let in_w0 = 1.0;
    let (samples, _) = run_sampler(&lua, &track, &side, &[in_w0, in_w1], "vfs");
    assert!(samples[0].is_ok());
    let msg = samples[1].as_ref().unwrap_err();
    let want = format!("{} (byte offset {})", rust_err.path, rust_err.offset);
    assert!(msg.starts_with(&want), "Lua: {msg}; Rust: {rust_err}");
    cleanup(&[&track, &side, &track.with_extension("frames")]);
    report("Lua 5.1 CBTK damaged chunk (same path and offset)", 1);
}

/// Header damage (magic, version, header size, window length, rotation bits) and a cut in the
/// window index: the Lua reader refuses each at the field path and byte offset the Rust reader
/// names.
#[test]
fn damaged_header_is_named_like_rust() {
    let Some(lua) = lua51::interpreter("damaged_header_is_named_like_rust") else {
        return;
    };
    let mut out = std::io::Cursor::new(Vec::new());
    MatchSpec::small().write(&mut out, |_, _| {}).unwrap();
    let bytes = out.into_inner();
    let side = scratch("header.inflated");
    write_side_file(&bytes, &side);
    let poke = |at: usize, v: &[u8]| {
        let mut b = bytes.clone();
        b[at..at + v.len()].copy_from_slice(v);
        b
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("magic", poke(0, b"CBTX")),
        ("format version", poke(4, &2u16.to_le_bytes())),
        ("header size", poke(6, &95u16.to_le_bytes())),
        ("window length", poke(20, &0u32.to_le_bytes())),
        ("rotation bits", poke(34, &[7])),
        ("rotation bits", poke(34, &[17])),
        ("index cut", bytes[..96 + 8].to_vec()),
    ];
    let track = scratch("header.cbtrack");
    let mut n = 0;
    for (what, bad) in cases {
        std::fs::write(&track, &bad).unwrap();
        let rust_err = match Track::open(&bad) {
            Err(e) => e,
            Ok(_) => panic!("{what}: Rust opened it"),
        };
        let (samples, _) = run_sampler(&lua, &track, &side, &[1.0], "vfs");
        let msg = samples[0].as_ref().unwrap_err();
        let want = format!("{} (byte offset {})", rust_err.path, rust_err.offset);
        assert!(
            msg.starts_with(&want),
            "{what}: Lua: {msg}; Rust: {rust_err}"
        );
        n += 1;
    }
    cleanup(&[&track, &side, &track.with_extension("frames")]);
    report("Lua 5.1 CBTK damaged headers (same path and offset)", n);
}
