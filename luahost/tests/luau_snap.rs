//! SNAP v1.3 in Luau (`lua/luau/snap_cframe.luau`) against the Rust runtime on the same
//! inputs: CFrame compression codes and bytes, decompression, the closed-loop chain's steps
//! and states, whole files byte for byte, the Rust sample files read in Luau (and their
//! truncations refused at the same field and offset), and a Roblox-style recording made
//! from CFrames in Luau read back in Rust within the spec's error bounds.

mod common;

use common::{report, Rng};
use glam::{Quat, Vec3};
use mlua::{Buffer, Function, Table, Value};
use statepack::formats::snap;
use statepack_codecs::quant::angle_between_rad;
use statepack_codecs::snap_delta::{
    chain_pos_error_bound, SnapChainEncoder, SnapStep, CHAIN_ROT_ERROR_BOUND_RAD,
};
use statepack_codecs::snap_quant::{
    compress_cframe, decompress_rotation, PackedCFrame, CFRAME_ROT_ERROR_BOUND_RAD,
};
use statepack_luahost::LuauHost;

fn num(v: Value) -> f64 {
    match v {
        Value::Integer(i) => i as f64,
        Value::Number(n) => n,
        other => panic!("not a number: {other:?}"),
    }
}

fn codes(t: &Table) -> [i16; 3] {
    [1, 2, 3].map(|i| num(t.get(i).unwrap()) as i16)
}

fn packed_of(t: &Table) -> PackedCFrame {
    PackedCFrame {
        x: num(t.get("x").unwrap()) as f32,
        y: num(t.get("y").unwrap()) as f32,
        z_bits: num(t.get("zBits").unwrap()) as u32,
        q: codes(&t.get("q").unwrap()),
    }
}

fn step_of(t: &Table) -> SnapStep {
    if t.get::<bool>("absolute").unwrap() {
        SnapStep::Absolute(packed_of(&t.get("cframe").unwrap()))
    } else {
        SnapStep::Delta {
            pos: t.get::<Option<Table>>("pos").unwrap().map(|c| codes(&c)),
            rot: t.get::<Option<Table>>("rot").unwrap().map(|c| codes(&c)),
        }
    }
}

fn q4(q: Quat) -> (f64, f64, f64, f64) {
    (q.x as f64, q.y as f64, q.z as f64, q.w as f64)
}

/// Random rotations and positions, plus the edge cases (ties, half turns, identity, the
/// all-1/2 corner): the Luau codes and bytes equal the Rust ones.
#[test]
fn compression_codes_match_rust() {
    let host = LuauHost::new().unwrap();
    let compress = host.func("snap_cframe", "compress").unwrap();
    let mut rng = Rng(0x5EED_0101);
    let mut inputs: Vec<(Vec3, Quat)> = Vec::new();
    let h = std::f32::consts::FRAC_1_SQRT_2;
    for c in [
        [0.0, 0.0, 0.0, 1.0],
        [0.0, 0.0, 0.0, -1.0],
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [h, 0.0, 0.0, h],
        [0.0, -h, h, 0.0],
        [0.5, 0.5, 0.5, 0.5],
        [-0.5, 0.5, -0.5, 0.5],
        [0.9, 0.3, -0.2, 0.1],
        [0.0, 0.0, 0.0, 5.0],
    ] {
        inputs.push((Vec3::new(1.0, -2.0, 3.0), Quat::from_array(c)));
    }
    for _ in 0..100_000 {
        let scale = 10f64.powi(rng.range(-2, 7) as i32);
        let pos = Vec3::new(
            (rng.unit() * scale) as f32,
            (rng.unit() * scale) as f32,
            (rng.unit() * scale) as f32,
        );
        // Unnormalized inputs too: any finite non-zero quaternion is accepted.
        let q = rng.quat() * (0.25 + 2.0 * rng.f64() as f32);
        inputs.push((pos, q));
    }
    for _ in 0..20_000 {
        // Near the all-1/2 corner, where rounding decides the dropped component.
        let c = [0.5, 0.5, 0.5, 0.5].map(|v: f64| (v + 1e-3 * rng.unit()) as f32);
        inputs.push((Vec3::ZERO, Quat::from_array(c).normalize()));
    }
    for (pos, q) in &inputs {
        let want = compress_cframe(*pos, *q).unwrap();
        let (x, y, z, w) = q4(*q);
        let got: Table = compress
            .call((pos.x as f64, pos.y as f64, pos.z as f64, x, y, z, w))
            .unwrap();
        let got = packed_of(&got);
        assert_eq!(got.to_le_bytes(), want.to_le_bytes(), "{pos:?} {q:?}");
    }
    // Refusals: non-finite position or rotation, all-zero rotation.
    let refuse: Function = host
        .eval(
            "refuse",
            "return function(...) local ok, e = pcall(Snap.compress, ...); return ok, tostring(e) end",
        )
        .unwrap();
    for args in [
        (f64::NAN, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
        (0.0, 0.0, f64::INFINITY, 0.0, 0.0, 0.0, 1.0),
        (0.0, 0.0, 0.0, f64::NAN, 0.0, 0.0, 1.0),
        (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    ] {
        let (ok, msg): (bool, String) = refuse.call(args).unwrap();
        assert!(!ok, "{args:?}: {msg}");
    }
    report("Luau SNAP CFrame compression", inputs.len() + 4);
}

/// Any index and any three i16 codes decode to the same f32 quaternion as in Rust.
#[test]
fn decompression_matches_rust() {
    let host = LuauHost::new().unwrap();
    let f: Function = host
        .eval(
            "dec",
            "return function(i, a, b, c) return { Snap.decompressRotation(i, { a, b, c }) } end",
        )
        .unwrap();
    let mut rng = Rng(0x5EED_0102);
    let mut n = 0;
    let extremes = [
        i16::MIN,
        -32767,
        -23170,
        -16384,
        -1,
        0,
        1,
        16384,
        23170,
        32767,
    ];
    let mut cases = Vec::new();
    for index in 0..4u8 {
        for &a in &extremes {
            for &b in &extremes {
                for &c in &extremes {
                    cases.push((index, [a, b, c]));
                }
            }
        }
    }
    for _ in 0..60_000 {
        let index = rng.range(0, 4) as u8;
        let spread = [32768, 23171, 2000][rng.range(0, 3) as usize];
        let c = [0; 3].map(|_: i16| rng.range(-spread, spread) as i16);
        cases.push((index, c));
    }
    for (index, q) in cases {
        let want = decompress_rotation(index, q);
        let got: Vec<f64> = f
            .call((index, q[0] as f64, q[1] as f64, q[2] as f64))
            .unwrap();
        let got = Quat::from_xyzw(got[0] as f32, got[1] as f32, got[2] as f32, got[3] as f32);
        assert_eq!(
            got.to_array().map(f32::to_bits),
            want.to_array().map(f32::to_bits),
            "{index} {q:?}"
        );
        n += 1;
    }
    report("Luau SNAP CFrame decompression", n);
}

/// A path of samples: smooth stretches, jumps (forced absolute frames), slow drift (below
/// the epsilons) and spins near the rotation-delta limit.
fn path(rng: &mut Rng, frames: usize, scale: f64) -> Vec<(Vec3, Quat)> {
    let mut out = Vec::with_capacity(frames);
    let mut p = glam::DVec3::new(rng.unit(), rng.unit(), rng.unit()) * scale;
    let mut q = rng.quat().as_dquat();
    let mut vel = glam::DVec3::new(rng.unit(), rng.unit(), rng.unit());
    let mut spin = glam::DVec3::new(rng.unit(), rng.unit(), rng.unit()) * 0.05;
    for _ in 0..frames {
        match rng.range(0, 40) {
            0 => p += glam::DVec3::new(rng.unit(), rng.unit(), rng.unit()) * 20.0,
            1 => q = rng.quat().as_dquat(),
            2 => vel = glam::DVec3::new(rng.unit(), rng.unit(), rng.unit()) * 1e-4,
            3 => spin = glam::DVec3::new(rng.unit(), rng.unit(), rng.unit()) * 0.12,
            4 => vel = glam::DVec3::new(rng.unit(), rng.unit(), rng.unit()) * 4.0,
            _ => {}
        }
        p += vel;
        let a = spin.length();
        if a > 0.0 {
            q = (q * glam::DQuat::from_axis_angle(spin / a, a)).normalize();
        }
        out.push((p.as_vec3(), q.as_quat()));
    }
    out
}

/// The closed-loop chain: the Luau encoder emits the same steps as the Rust encoder on the
/// same samples, and its decoder holds the same reconstructed state, bit for bit.
#[test]
fn chain_steps_and_states_match_rust() {
    let host = LuauHost::new().unwrap();
    let new_encoder = host.func("snap_cframe", "newEncoder").unwrap();
    let push = host.func("snap_cframe", "push").unwrap();
    let mut rng = Rng(0x5EED_0103);
    let (mut frames, mut deltas) = (0, 0);
    for run in 0..120 {
        let scale = [1.0, 100.0, 5000.0, 1e6][run % 4];
        let samples = path(&mut rng, 600, scale);
        let mut rust = SnapChainEncoder::new();
        let enc: Table = new_encoder.call(()).unwrap();
        for (i, (p, q)) in samples.iter().enumerate() {
            let want = rust.push(*p, *q).unwrap();
            let (x, y, z, w) = q4(*q);
            let got: Table = push
                .call((enc.clone(), p.x as f64, p.y as f64, p.z as f64, x, y, z, w))
                .unwrap();
            let got_step = step_of(&got);
            match (got_step, want) {
                (SnapStep::Absolute(a), SnapStep::Absolute(b)) => {
                    assert_eq!(a.to_le_bytes(), b.to_le_bytes(), "run {run} frame {i}")
                }
                (a, b) => assert_eq!(a, b, "run {run} frame {i}"),
            }
            if matches!(want, SnapStep::Delta { .. }) {
                deltas += 1;
            }
            let dec: Table = enc.get("decoder").unwrap();
            let pos: Vec<f64> = dec.get("pos").unwrap();
            let rot: Vec<f64> = dec.get("rot").unwrap();
            let (rp, rq) = rust.reconstructed().unwrap();
            assert_eq!(
                pos.iter()
                    .map(|v| (*v as f32).to_bits())
                    .collect::<Vec<_>>(),
                rp.to_array().map(f32::to_bits).to_vec(),
                "run {run} frame {i}"
            );
            assert_eq!(
                rot.iter()
                    .map(|v| (*v as f32).to_bits())
                    .collect::<Vec<_>>(),
                rq.to_array().map(f32::to_bits).to_vec(),
                "run {run} frame {i}"
            );
            frames += 1;
        }
    }
    assert!(deltas > frames / 2, "{deltas} of {frames}");
    report("Luau SNAP chain frames (steps and states)", frames);
}

fn samples_table(host: &LuauHost, samples: &[snap::Sample]) -> Table {
    let t = host.lua.create_table().unwrap();
    for (i, s) in samples.iter().enumerate() {
        let e = host.lua.create_table().unwrap();
        e.set("dtMs", s.dt_ms).unwrap();
        e.set("x", s.pos_studs.x as f64).unwrap();
        e.set("y", s.pos_studs.y as f64).unwrap();
        e.set("z", s.pos_studs.z as f64).unwrap();
        e.set("qx", s.rot.x as f64).unwrap();
        e.set("qy", s.rot.y as f64).unwrap();
        e.set("qz", s.rot.z as f64).unwrap();
        e.set("qw", s.rot.w as f64).unwrap();
        t.set(i + 1, e).unwrap();
    }
    t
}

/// Whole files: the Luau recorder writes the Rust recorder's bytes; the Luau reader
/// reconstructs the Rust reader's frames from them.
#[test]
fn files_match_rust_byte_for_byte() {
    let host = LuauHost::new().unwrap();
    let record: Function = host
        .eval(
            "record",
            r#"
            return function(recs)
                local rec = Snap.newRecorder()
                for _, r in recs do
                    Snap.addRecording(rec, r.name, r.samples)
                end
                return Snap.finish(rec)
            end
            "#,
        )
        .unwrap();
    let mut rng = Rng(0x5EED_0104);
    let mut files = 0;
    for run in 0..12 {
        let mut rust = snap::Recorder::new();
        let recs = host.lua.create_table().unwrap();
        for r in 0..(1 + run % 3) {
            let samples: Vec<snap::Sample> = path(&mut rng, 300 + 50 * r, 50.0)
                .into_iter()
                .map(|(p, q)| snap::Sample {
                    dt_ms: rng.range(0, 70) as u32,
                    pos_studs: p,
                    rot: q,
                })
                .collect();
            let name = format!("map {run}-{r}");
            rust.add_recording(&name, &samples).unwrap();
            let e = host.lua.create_table().unwrap();
            e.set("name", name).unwrap();
            e.set("samples", samples_table(&host, &samples)).unwrap();
            recs.set(r + 1, e).unwrap();
        }
        let want = rust.finish().unwrap();
        let got: Buffer = record.call(recs).unwrap();
        assert_eq!(got.to_vec(), want, "run {run}");
        files += 1;
    }
    report("Luau SNAP files written byte for byte", files);
}

/// Rust's sample files read in Luau: the same frames (bit for bit); every truncation and a
/// corrupted kind byte refused at the same field path and byte offset as the Rust reader.
#[test]
fn rust_files_read_in_luau_and_errors_agree() {
    let host = LuauHost::new().unwrap();
    let read: Function = host
        .eval(
            "read",
            r#"
            return function(buf)
                local ok, v = pcall(Snap.read, buf)
                if ok then return true, v end
                return false, v
            end
            "#,
        )
        .unwrap();
    let (mut frames, mut errors) = (0, 0);
    for (name, bytes) in snap::sample_files() {
        let want = snap::read(&bytes).unwrap();
        let (ok, got): (bool, Table) = read.call(host.lua.create_buffer(&bytes).unwrap()).unwrap();
        assert!(ok, "{name}");
        assert_eq!(got.raw_len(), want.len());
        for (r, rec) in want.iter().enumerate() {
            let g: Table = got.get(r + 1).unwrap();
            assert_eq!(g.get::<String>("mapName").unwrap(), rec.map_name);
            let gf: Table = g.get("frames").unwrap();
            assert_eq!(gf.raw_len(), rec.frames.len(), "{name}");
            for (i, f) in rec.frames.iter().enumerate() {
                let e: Table = gf.get(i + 1).unwrap();
                let pos: Vec<f64> = e.get("pos").unwrap();
                let rot: Vec<f64> = e.get("rot").unwrap();
                assert_eq!(
                    pos.iter()
                        .map(|v| (*v as f32).to_bits())
                        .collect::<Vec<_>>(),
                    f.pos_studs.to_array().map(f32::to_bits).to_vec(),
                    "{name} {r} {i}"
                );
                assert_eq!(
                    rot.iter()
                        .map(|v| (*v as f32).to_bits())
                        .collect::<Vec<_>>(),
                    f.rot.to_array().map(f32::to_bits).to_vec(),
                    "{name} {r} {i}"
                );
                assert_eq!(num(e.get("timeMs").unwrap()) as u64, f.time_ms);
                frames += 1;
            }
        }
        // Truncations and a bad kind byte.
        // Every cut in the first 256 bytes, then about 300 cuts spread over the rest (each
        // check decodes the whole prefix twice).
        let stride = (bytes.len() / 300).max(1);
        let cuts = (0..bytes.len()).filter(|&n| n < 256 || n % stride == 0 || n + 1 == bytes.len());
        let mut damaged: Vec<Vec<u8>> = cuts.map(|n| bytes[..n].to_vec()).collect();
        if want.iter().any(|r| !r.frames.is_empty()) {
            let first_kind = 8 + 1 + 1 + want[0].map_name.len() + 2 + 4;
            let mut b = bytes.clone();
            b[first_kind] = 9;
            damaged.push(b);
            let mut b = bytes.clone();
            b.push(0);
            damaged.push(b);
            if !want[0].map_name.is_empty() {
                let mut b = bytes.clone();
                b[8 + 1 + 1] = 0xFF;
                damaged.push(b);
            }
        }
        for d in damaged {
            let Err(snap::SnapError::Decode(rust_err)) = snap::read(&d) else {
                panic!("{name}: Rust accepted {} damaged bytes", d.len());
            };
            let (ok, e): (bool, Value) = read.call(host.lua.create_buffer(&d).unwrap()).unwrap();
            assert!(!ok, "{name}: Luau accepted {} damaged bytes", d.len());
            let e = e.as_table().expect("an error table");
            let path: String = e.get("path").unwrap();
            let offset = num(e.get("offset").unwrap()) as u64;
            assert_eq!(
                (path.as_str(), offset),
                (rust_err.path.to_string().as_str(), rust_err.offset),
                "{name} ({} bytes): Rust says {rust_err}",
                d.len()
            );
            errors += 1;
        }
    }
    report("Luau SNAP frames read from Rust files", frames);
    report("Luau SNAP damaged files (same path and offset)", errors);
}

/// Roblox-style: CFrames built in Luau (stand-ins for Roblox's CFrame) are recorded through
/// the SNAP module and read back in Rust, each frame within the chain's error bounds of the
/// CFrame it came from.
#[test]
fn roblox_recording_reads_in_rust_within_bounds() {
    let host = LuauHost::new().unwrap();
    let (file, truth): (Buffer, Table) = host
        .eval(
            "roblox",
            r#"
            -- A character walking in circles, turning, jumping, then teleporting.
            local samples, truth = {}, {}
            local cf = CFrame.new(10, 3, -40)
            for i = 1, 900 do
                local step = CFrame.new(0, math.sin(i / 15) * 0.05, -0.3) * CFrame.fromAxisAngle(Vector3.new(0, 1, 0), 0.02)
                if i % 97 == 0 then
                    step = CFrame.new(50, 0, 0) * CFrame.fromAxisAngle(Vector3.new(1, 2, 3), 1.3)
                end
                if i % 13 == 0 then
                    step = step * CFrame.fromAxisAngle(Vector3.new(1, 0, 0), 0.15)
                end
                cf = cf * step
                table.insert(samples, { cframe = cf, dtMs = 16 + i % 3 })
                table.insert(truth, { cf.X, cf.Y, cf.Z, cf._q[1], cf._q[2], cf._q[3], cf._q[4] })
            end
            local rec = Snap.newRecorder()
            Snap.addCFrameRecording(rec, "Crossroads", samples)
            return Snap.finish(rec), truth
            "#,
        )
        .unwrap();
    let recs = snap::read(&file.to_vec()).unwrap();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].map_name, "Crossroads");
    let frames = &recs[0].frames;
    assert_eq!(frames.len(), 900);
    let (mut worst_rot, mut deltas) = (0.0f64, 0);
    for (i, f) in frames.iter().enumerate() {
        let t: Vec<f64> = truth.get(i + 1).unwrap();
        let pos = Vec3::new(t[0] as f32, t[1] as f32, t[2] as f32);
        let rot = glam::DQuat::from_xyzw(t[3], t[4], t[5], t[6]).normalize();
        let err = (f.pos_studs.as_dvec3() - pos.as_dvec3()).length();
        assert!(err <= chain_pos_error_bound(pos), "frame {i}: {err}");
        let a = angle_between_rad(rot, f.rot.as_dquat());
        assert!(a <= CHAIN_ROT_ERROR_BOUND_RAD, "frame {i}: {a}");
        worst_rot = worst_rot.max(a);
        deltas += usize::from(!f.absolute);
    }
    assert!(deltas > 700, "{deltas}");
    assert!(worst_rot <= CFRAME_ROT_ERROR_BOUND_RAD);
    report(
        "Roblox-style SNAP frames read in Rust within bounds",
        frames.len(),
    );
}
