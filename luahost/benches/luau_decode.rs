//! Decode speed of a generated Luau module against a plain hand-written Luau reader of the
//! same bytes, in the same sandboxed VM (as Roblox runs scripts): the SNAP file the demo
//! encodes (the study walk, the largest of `formats::snap::sample_files`), and a 10-minute
//! RPLY crowd (20 walkers, 9 000 ticks at 15 Hz, as `statepack rply-crowd` records it; the
//! CMU walk fixture when present, else the built-in study walk). Before timing, both readers'
//! values are compared with the Rust reader's, member by member. Each module runs in a safe
//! environment, as a Roblox script does, so `buffer.*` calls take their fast path.
//!
//! Before criterion's runs, each pair is also timed alternately (a full collection before
//! every call), and the minimum and median of each and their ratios printed: on a machine
//! shared with other work that ratio moves less than two separate criterion runs do.
//!
//! `cargo bench -p statepack-luahost --bench luau_decode -- --warm-up-time 1 --measurement-time 3`
//! (`-- skipcriterion`, a filter matching no criterion benchmark, for the alternating
//! timing only; `STATEPACK_LUAU_BENCH_DIR=dir` times `dir/<schema>.luau`, a generated module
//! edited by hand, in place of the one generated now; `STATEPACK_LUAU_BENCH_PAIRS=n` times n
//! alternating pairs of each input).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mlua::{Function, Table, Value};
use statepack_codegen::lua_emit::{self, Target};
use statepack_luahost::{repo_root, tree, LuauHost};

/// What a careful Roblox developer writes for this layout: reads at offsets from one
/// position, the same checks as the generated reader (header, counts against bytes left,
/// UTF-8 names, known kinds, the total duration), and the same shape of result.
const HAND_WRITTEN: &str = r#"
return function(buf)
	local len = buffer.len(buf)
	if len < 9 or buffer.readstring(buf, 0, 8) ~= "SNAPV1.3" then
		error("version: not SNAPV1.3")
	end
	local n = buffer.readu8(buf, 8)
	local pos = 9
	if n * 7 > len - pos then
		error("recordings: count too large")
	end
	local recs = table.create(n)
	for ri = 1, n do
		if pos + 1 > len then error("len_map_name: input ends early") end
		local nl = buffer.readu8(buf, pos)
		if pos + 1 + nl + 6 > len then error("map_name: input ends early") end
		local name = buffer.readstring(buf, pos + 1, nl)
		if utf8.len(name) == nil then error("map_name: not UTF-8") end
		pos += 1 + nl
		local nf = buffer.readu16(buf, pos)
		local total = buffer.readu32(buf, pos + 2)
		pos += 6
		if nf * 3 > len - pos then error("frames: count too large") end
		local frames = table.create(nf)
		local sum = 0
		for fi = 1, nf do
			if pos + 3 > len then error("frame: input ends early") end
			local kind = buffer.readu8(buf, pos)
			local dt = buffer.readu16(buf, pos + 1)
			pos += 3
			sum += dt
			local f = { __type = "frame", kind = kind, dt_ms = dt }
			if kind == 4 then
				if pos + 18 > len then error("cframe: input ends early") end
				f.cframe = {
					__type = "cframe",
					x = buffer.readf32(buf, pos),
					y = buffer.readf32(buf, pos + 4),
					z_bits = buffer.readu32(buf, pos + 8),
					q = { buffer.readi16(buf, pos + 12), buffer.readi16(buf, pos + 14), buffer.readi16(buf, pos + 16) },
				}
				pos += 18
			elseif kind < 4 then
				if kind % 2 == 1 then
					if pos + 6 > len then error("pos_delta: input ends early") end
					f.pos_delta = { buffer.readi16(buf, pos), buffer.readi16(buf, pos + 2), buffer.readi16(buf, pos + 4) }
					pos += 6
				end
				if kind >= 2 then
					if pos + 6 > len then error("rot_delta: input ends early") end
					f.rot_delta = { buffer.readi16(buf, pos), buffer.readi16(buf, pos + 2), buffer.readi16(buf, pos + 4) }
					pos += 6
				end
			else
				error("kind: not a frame kind")
			end
			frames[fi] = f
		end
		if sum ~= total then error("total_duration_ms: not the sum of dt_ms") end
		recs[ri] = { __type = "recording", len_map_name = nl, map_name = name, num_frames = nf,
			total_duration_ms = total, frames = frames }
	end
	return { __type = "snap_v1_3", version = "SNAPV1.3", num_recordings = n, recordings = recs }
end
"#;

/// The hand-written RPLY v3 reader (the whole layout, snapshots included).
const RPLY_HAND_WRITTEN: &str = include_str!("rply_hand_written.luau");

fn snap_decode(c: &mut Criterion) {
    let (name, bytes) = statepack::formats::snap::sample_files()
        .into_iter()
        .max_by_key(|(_, b)| b.len())
        .expect("SNAP sample files");
    pair(
        c,
        "snap_v1_3",
        "luau_snap_decode",
        &name,
        &bytes,
        HAND_WRITTEN,
        100,
    );
}

fn rply_decode(c: &mut Criterion) {
    let clip = match statepack_fixtures::fixture_path("motion/cmu-131-01-walk.bvh") {
        Ok(p) => statepack_codecs::motion::load_motion_file(&p).expect("read the walk"),
        Err(_) => statepack_codecs::motion::walk::study_walk_clip(),
    };
    let opts = statepack::sim::rply_crowd::CrowdOptions::default();
    let crowd = statepack::sim::rply_crowd::record_crowd(&clip, &opts).expect("record the crowd");
    let name = format!(
        "crowd of {} walkers, {} ticks at {} Hz",
        opts.characters, opts.ticks, opts.tick_rate
    );
    // About 0.3 s a decode: 10 samples.
    pair(
        c,
        "rply_v3",
        "luau_rply_decode",
        &name,
        &crowd.bytes,
        RPLY_HAND_WRITTEN,
        10,
    );
}

/// Generates `schema/<schema>.ksy`, checks that both readers read `bytes` to the Rust
/// reader's values, and times both in group `group` with `samples` samples.
fn pair(
    c: &mut Criterion,
    schema_name: &str,
    group: &str,
    name: &str,
    bytes: &[u8],
    hand_src: &str,
    samples: usize,
) {
    let path = repo_root()
        .join("schema")
        .join(format!("{schema_name}.ksy"));
    let text = statepack_codegen::read_schema_file(&path).unwrap();
    let file = path.display().to_string();
    let schema = statepack_codegen::load_checked(&text, &file, &path, &[]).unwrap();
    let mut code = lua_emit::generate(&text, &file, &path, &[], Target::Luau).unwrap();
    // A module edited by hand in place of the generated one (to find what costs):
    // `STATEPACK_LUAU_BENCH_DIR=dir` with `dir/<schema>.luau`.
    if let Some(dir) = std::env::var_os("STATEPACK_LUAU_BENCH_DIR") {
        let edited = std::path::Path::new(&dir).join(format!("{schema_name}.luau"));
        if let Ok(text) = std::fs::read_to_string(&edited) {
            println!("module: {} (edited by hand)", edited.display());
            code = text;
        }
    }
    let host = LuauHost::new().unwrap();
    let Value::Table(module) = host.load_module(schema_name, &code).unwrap() else {
        panic!("the generated module gave no table")
    };
    let generated: Function = module.get("decode").unwrap();
    let hand: Function = host.eval("hand_written", hand_src).unwrap();
    let buf = host.lua.create_buffer(bytes).unwrap();
    let rust = statepack_codegen::interp::decode(&schema, bytes).unwrap();
    for (what, f) in [("generated", &generated), ("hand_written", &hand)] {
        let t: Table = f.call(buf.clone()).unwrap();
        let node = tree::convert(&schema, schema_name, &t).unwrap();
        statepack_codegen::interp::compare(&rust, &node)
            .unwrap_or_else(|e| panic!("{what} reads other values than Rust: {e}"));
    }
    println!("input: {name}, {} bytes", bytes.len());
    // `STATEPACK_LUAU_BENCH_PAIRS=n`: n alternating pairs instead of twice the samples.
    let pairs = std::env::var("STATEPACK_LUAU_BENCH_PAIRS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(samples * 2);
    alternate(&host.lua, group, &generated, &hand, &buf, pairs);
    let mut g = c.benchmark_group(group);
    g.sample_size(samples);
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("generated", |b| {
        b.iter(|| generated.call::<Table>(buf.clone()).unwrap())
    });
    g.bench_function("hand_written", |b| {
        b.iter(|| hand.call::<Table>(buf.clone()).unwrap())
    });
    g.finish();
}

/// Both readers timed alternately, `pairs` times, each call after a full collection (so
/// neither pays for the other's garbage): the minimum and median of each and the ratio of
/// the generated reader's time to the hand-written one's, by the wall clock and by the
/// thread's CPU clock. On a machine shared with other work these ratios move less than two
/// separate criterion runs do, the CPU clock's least.
fn alternate(
    lua: &mlua::Lua,
    group: &str,
    generated: &Function,
    hand: &Function,
    buf: &mlua::Buffer,
    pairs: usize,
) {
    let (mut tg, mut th) = (Vec::with_capacity(pairs), Vec::with_capacity(pairs));
    let (mut cg, mut ch) = (Vec::with_capacity(pairs), Vec::with_capacity(pairs));
    for _ in 0..pairs {
        for (f, out, cpu) in [(generated, &mut tg, &mut cg), (hand, &mut th, &mut ch)] {
            lua.gc_collect().unwrap();
            let (t0, c0) = (std::time::Instant::now(), thread_cpu());
            let t: Table = f.call(buf.clone()).unwrap();
            cpu.push(thread_cpu() - c0);
            out.push(t0.elapsed().as_secs_f64());
            drop(t);
        }
    }
    let stats = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[0], v[v.len() / 2])
    };
    for (clock, g, h) in [("wall", &mut tg, &mut th), ("thread CPU", &mut cg, &mut ch)] {
        let (gmin, gmed) = stats(g);
        let (hmin, hmed) = stats(h);
        println!(
            "{group}: alternating, {pairs} pairs, {clock} time: generated min {:.3} ms median {:.3} ms, hand-written min {:.3} ms median {:.3} ms; ratio of minimums {:.3}, of medians {:.3}",
            gmin * 1e3,
            gmed * 1e3,
            hmin * 1e3,
            hmed * 1e3,
            gmin / hmin,
            gmed / hmed
        );
    }
}

/// The CPU time this thread has used, in seconds (`CLOCK_THREAD_CPUTIME_ID`): unlike the
/// wall clock it does not count the time other work on the machine takes the core. (The
/// wall clock where there is no such clock.)
fn thread_cpu() -> f64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec for the call's duration.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
        }
    }
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
}

criterion_group!(benches, snap_decode, rply_decode);
criterion_main!(benches);
