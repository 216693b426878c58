//! CBTK v1 window decode in Lua 5.1 (Debian's `lua5.1`, a child process): the generated
//! reader (`lua/lua51/cbtrack_v1.lua`, the column directory and every column of a window's
//! inflated main chunk) beside a plain hand-written Lua 5.1 reader of the same bytes, both
//! timed by the VM's own clock (`os.clock`) in `luahost/lua51/bench_cbtk.lua`, alternately,
//! after checking that they read the same values. The track is the one `benches/cbtrack.rs`
//! times (the study walk as a crowd of 16 over 1,800 frames, two windows of 900, 20
//! features); its main chunks are inflated here with the Rust reader.
//!
//! `cargo bench -p statepack-luahost --bench lua51_cbtk_decode` (rounds and repetitions:
//! `STATEPACK_LUA51_BENCH=rounds,reps`, default `5,3`). Without `lua5.1` it says so and
//! exits.

use statepack::formats::cbtrack::Track;
use statepack::sim::cbtrack_match::MatchSpec;
use statepack_codecs::motion::walk::study_walk_clip;
use statepack_luahost::{lua51, repo_root};

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken from the command line.
    let Some(lua) = lua51::interpreter("lua51_cbtk_decode") else {
        return;
    };
    let (rounds, reps) = std::env::var("STATEPACK_LUA51_BENCH")
        .ok()
        .and_then(|v| {
            let (a, b) = v.split_once(',')?;
            Some((a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?))
        })
        .unwrap_or((5, 3));
    let mut spec = MatchSpec::crowd(study_walk_clip(), 16, 1800);
    spec.features = 20;
    let mut out = std::io::Cursor::new(Vec::new());
    spec.write(&mut out, |_, _| {})
        .expect("the bench match writes");
    let bytes = out.into_inner();
    let track = Track::open(&bytes).expect("the track opens");
    let mut chunks = Vec::new();
    let mut total = 0;
    for k in 0..track.raw.index.len() {
        let body = track.main_bytes(k).expect("the main chunk inflates");
        total += body.len();
        chunks.extend(format!("{}\n", body.len()).bytes());
        chunks.extend_from_slice(&body);
    }
    let dir = std::env::temp_dir().join(format!("statepack-lua51-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let file = dir.join("chunks.bin");
    std::fs::write(&file, &chunks).expect("write the chunks");
    let script = repo_root()
        .join("luahost")
        .join("lua51")
        .join("bench_cbtk.lua");
    let res = lua51::run(
        &lua,
        &script,
        &[
            file.to_str().expect("a UTF-8 path"),
            &rounds.to_string(),
            &reps.to_string(),
        ],
    );
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_dir(&dir);
    let text = res.unwrap_or_else(|e| panic!("{e}"));
    let windows = track.raw.index.len();
    println!(
        "track: {} bytes, {windows} windows, {total} inflated main-chunk bytes",
        bytes.len()
    );
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        match f.as_slice() {
            ["CHECKED", c, cols, vals] => {
                println!("both readers agree on {c} chunks, {cols} columns, {vals} values")
            }
            ["ROUND", k, "generated", g, "hand_written", h] => {
                let g: f64 = g.parse().expect("a time");
                let h: f64 = h.parse().expect("a time");
                let per = f64::from(reps) * windows as f64;
                println!(
                    "round {k}: generated {:.2} ms a window, hand-written {:.2} ms a window, ratio {:.2}",
                    g * 1e3 / per,
                    h * 1e3 / per,
                    g / h
                );
            }
            _ => println!("{line}"),
        }
    }
}
