//! RPLY v3 rules where the reference implementation's files depart from the spec, on files
//! built byte by byte: keyframes that omit a live entity (the entity holds its transform,
//! seeking equals playing), "deltas accumulate from the last XFORM" for XFORMs that carry
//! only a position or only a rotation, NaN transforms (compared bitwise), an idle tail
//! (a `tick_count` past the op stream's last marker) and what it costs, seek refusing what
//! play refuses, and a player left unchanged by a call that fails.

use glam::{DQuat, DVec3};
use statepack::formats::rply::{self, OpBody, Player, Recorder, RecorderOptions, State};

/// Ops of a hand-built replay; keyframes are taken where [`Ops::keyframe`] is called.
#[derive(Default)]
struct Ops {
    bytes: Vec<u8>,
    keyframes: Vec<(u32, u32)>,
}

impl Ops {
    fn spawn(&mut self, id: u16) -> &mut Self {
        self.bytes.push(1);
        self.bytes.extend_from_slice(&id.to_le_bytes());
        self.bytes.extend_from_slice(&1u16.to_le_bytes());
        self.bytes.extend_from_slice(&0u16.to_le_bytes());
        self
    }
    fn next(&mut self) -> &mut Self {
        self.bytes.push(10);
        self
    }
    /// Marks the next marker as keyframe `tick`'s.
    fn keyframe(&mut self, tick: u32) -> &mut Self {
        self.keyframes.push((tick, self.bytes.len() as u32));
        self
    }
    fn xform(
        &mut self,
        id: u16,
        pos: Option<[f32; 3]>,
        rot: Option<[i16; 3]>,
        yaw: Option<i16>,
    ) -> &mut Self {
        self.bytes.push(3);
        self.bytes.extend_from_slice(&id.to_le_bytes());
        self.bytes.push(
            u8::from(pos.is_some()) | u8::from(rot.is_some()) << 1 | u8::from(yaw.is_some()) << 2,
        );
        for v in pos.into_iter().flatten() {
            self.bytes.extend_from_slice(&v.to_le_bytes());
        }
        for v in rot.into_iter().flatten() {
            self.bytes.extend_from_slice(&v.to_le_bytes());
        }
        if let Some(y) = yaw {
            self.bytes.extend_from_slice(&y.to_le_bytes());
        }
        self
    }
    /// XFORM_D with an i8 position delta and/or an i8 rotation delta.
    fn delta(&mut self, id: u8, pos8: Option<[i8; 3]>, rot: Option<[i8; 3]>) -> &mut Self {
        self.bytes.push(11);
        self.bytes.push(id);
        self.bytes
            .push(u8::from(pos8.is_some()) | u8::from(rot.is_some()) << 3);
        for v in pos8.into_iter().chain(rot).flatten() {
            self.bytes.push(v as u8);
        }
        self
    }
    fn file(&self, tick_count: u32) -> Vec<u8> {
        let mut b = b"RPLY".to_vec();
        b.push(3);
        b.push(15);
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&0f64.to_le_bytes());
        b.extend_from_slice(&tick_count.to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&(self.keyframes.len() as u16).to_le_bytes());
        b.extend_from_slice(&(self.bytes.len() as u32).to_le_bytes());
        b.extend_from_slice(&10u16.to_le_bytes());
        b.extend_from_slice(b"part:Block");
        for (t, o) in &self.keyframes {
            b.extend_from_slice(&t.to_le_bytes());
            b.extend_from_slice(&o.to_le_bytes());
        }
        b.extend_from_slice(&self.bytes);
        b
    }
}

fn play_all(bytes: &[u8]) -> Result<Vec<State>, rply::RplyError> {
    let mut p = Player::open(bytes)?;
    let mut out = Vec::new();
    while p.advance()? {
        out.push(p.state().clone());
    }
    Ok(out)
}

/// Every tick reached by a fresh player's seek, by one player seeking backwards, and by one
/// seeking forwards equals the played state.
fn assert_seek_equals_play(bytes: &[u8]) -> Vec<State> {
    let played = play_all(bytes).unwrap();
    let mut back = Player::open(bytes).unwrap();
    for t in (0..played.len()).rev() {
        back.seek(t as u32).unwrap();
        assert_eq!(back.state(), &played[t], "seek back to tick {t}");
        let mut fresh = Player::open(bytes).unwrap();
        fresh.seek(t as u32).unwrap();
        assert_eq!(fresh.state(), &played[t], "fresh seek to tick {t}");
    }
    let mut fwd = Player::open(bytes).unwrap();
    for (t, s) in played.iter().enumerate() {
        fwd.seek(t as u32).unwrap();
        assert_eq!(fwd.state(), s, "seek forward to tick {t}");
    }
    played
}

const YAW0: Option<i16> = Some(0);

/// A keyframe without a full XFORM for a live entity (the reference recorder writes these
/// for a tracked model whose parts are all gone): the entity holds its last transform when
/// playing and when seeking, and `verify` accepts the file, counting the hold.
#[test]
fn keyframe_omitting_a_live_entity_holds_its_transform() {
    let mut o = Ops::default();
    o.spawn(1).spawn(2);
    o.keyframe(1)
        .next()
        .xform(1, Some([1.0, 2.0, 3.0]), None, YAW0);
    o.xform(2, Some([5.0, 0.0, 0.0]), None, YAW0);
    o.next()
        .delta(1, Some([16, 0, 0]), None)
        .delta(2, Some([0, 0, 16]), None);
    // Keyframe 3 has entity 2 only; entity 1 keeps (1.5, 2, 3).
    o.keyframe(3)
        .next()
        .xform(2, Some([5.0, 0.0, 1.0]), None, YAW0);
    o.next().xform(2, Some([5.0, 0.0, 2.0]), None, YAW0);
    let b = o.file(4);
    let played = assert_seek_equals_play(&b);
    for t in 2..=4 {
        let e = &played[t].entities[&1];
        assert_eq!(e.xform.pos, Some(DVec3::new(1.5, 2.0, 3.0)), "tick {t}");
        assert!(e.xform.shown_rot.is_some());
    }
    let mut p = Player::open(&b).unwrap();
    p.verify_all().unwrap();
    assert_eq!(p.keyframe_holds(), 1);
}

/// The held transform is also the base of the deltas that follow the keyframe (the entity
/// is moved again after the keyframe with deltas only): playing and seeking agree.
#[test]
fn deltas_after_an_omitting_keyframe_continue_from_the_held_transform() {
    let mut o = Ops::default();
    o.spawn(1);
    o.keyframe(1)
        .next()
        .xform(1, Some([0.0; 3]), Some([0, 1000, 0]), None);
    o.next().delta(1, Some([32, 0, 0]), Some([0, 0, 10]));
    o.keyframe(3).next();
    o.next().delta(1, Some([32, 0, 0]), Some([0, 0, 10]));
    let b = o.file(4);
    let played = assert_seek_equals_play(&b);
    assert_eq!(
        played[4].entities[&1].xform.pos,
        Some(DVec3::new(2.0, 0.0, 0.0))
    );
    rply::verify(&b).unwrap();
}

/// After an XFORM with only a rotation (mask 2) or only a yaw (mask 4), a position delta
/// has no base, as a rotation delta has none after a position-only XFORM (mask 1): each
/// XFORM resets both delta bases. Playing, seeking and `verify` all refuse it.
#[test]
fn each_xform_resets_both_delta_bases() {
    for (name, second) in [
        ("rotation-only", (None, Some([0i16, 500, 0]), None)),
        ("yaw-only", (None, None, Some(300i16))),
    ] {
        let mut o = Ops::default();
        o.spawn(1);
        o.keyframe(1)
            .next()
            .xform(1, Some([1.0, 1.0, 1.0]), Some([0, 100, 0]), None);
        o.next().xform(1, second.0, second.1, second.2);
        o.next().delta(1, Some([8, 0, 0]), None);
        let b = o.file(3);
        let e = play_all(&b).unwrap_err().to_string();
        assert!(
            e.contains(
                "entity 1 at tick 3: position delta with no position in the entity's last XFORM"
            ),
            "{name}: {e}"
        );
        let v = rply::verify(&b).unwrap_err().to_string();
        assert_eq!(v, e, "{name}");
        let s = Player::open(&b).unwrap().seek(3).unwrap_err().to_string();
        assert_eq!(s, e, "{name}");
        // Tick 2 is fine: the rotation-only sample is shown, the position held.
        let mut p = Player::open(&b).unwrap();
        p.seek(2).unwrap();
        assert_eq!(
            p.state().entities[&1].xform.pos,
            Some(DVec3::new(1.0, 1.0, 1.0))
        );
    }
    // Position only, then a rotation delta.
    let mut o = Ops::default();
    o.spawn(1);
    o.keyframe(1)
        .next()
        .xform(1, Some([1.0, 1.0, 1.0]), Some([0, 100, 0]), None);
    o.next().xform(1, Some([2.0, 1.0, 1.0]), None, None);
    o.next().delta(1, None, Some([1, 0, 0]));
    let e = rply::verify(&o.file(3)).unwrap_err().to_string();
    assert!(
        e.contains("rotation delta with no earlier full rotation (base: none)"),
        "{e}"
    );
    // Rotation only, then a rotation delta: accumulates from the last XFORM.
    let mut o = Ops::default();
    o.spawn(1);
    o.keyframe(1)
        .next()
        .xform(1, Some([1.0, 1.0, 1.0]), Some([0, 100, 0]), None);
    o.next().xform(1, None, Some([0, 500, 0]), None);
    o.next().delta(1, None, Some([1, 0, 0]));
    let b = o.file(3);
    rply::verify(&b).unwrap();
    assert_seek_equals_play(&b);
}

/// A transform recorded as raw NaN (as the reference recorder writes a NaN CFrame) is
/// played and shown as NaN; states compare bitwise, so seeking equals playing.
#[test]
fn nan_transforms_compare_bitwise() {
    let mut o = Ops::default();
    o.spawn(1);
    o.keyframe(1)
        .next()
        .xform(1, Some([0.0, 1.0, 0.0]), None, YAW0);
    o.next().xform(1, Some([f32::NAN; 3]), None, YAW0);
    o.keyframe(3)
        .next()
        .xform(1, Some([f32::NAN; 3]), None, YAW0);
    o.next().delta(1, Some([1, 0, 0]), None);
    let b = o.file(4);
    let played = assert_seek_equals_play(&b);
    assert!(played[4].entities[&1].xform.pos.unwrap().x.is_nan());
    rply::verify(&b).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_statepack"))
        .arg("verify")
        .arg(write_temp("nan.rply", &b))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Seeking to a keyframe that follows a position delta with no base refuses the file as
/// playing does (before, building the keyframe's saved state skipped the delta unchecked).
#[test]
fn seek_refuses_what_play_refuses() {
    let mut o = Ops::default();
    o.spawn(1);
    o.keyframe(1).next().delta(1, Some([1, 0, 0]), None);
    o.keyframe(2).next().xform(1, Some([0.0; 3]), None, YAW0);
    let b = o.file(2);
    let played = play_all(&b).unwrap_err().to_string();
    assert!(played.contains("position delta"), "{played}");
    let sought = Player::open(&b).unwrap().seek(2).unwrap_err().to_string();
    assert_eq!(sought, played);
    // A rotation delta on a yaw-only base, before a keyframe.
    let mut o = Ops::default();
    o.spawn(1);
    o.keyframe(1).next().xform(1, Some([0.0; 3]), None, YAW0);
    o.next().delta(1, None, Some([1, 0, 0]));
    o.keyframe(3).next().xform(1, Some([0.0; 3]), None, YAW0);
    let b = o.file(3);
    let played = play_all(&b).unwrap_err().to_string();
    let sought = Player::open(&b).unwrap().seek(3).unwrap_err().to_string();
    assert_eq!(sought, played);
}

/// A recording with a one-tick idle tail and one with an idle tail of 2^32 - 2 ticks (the
/// same file, `tick_count` patched to 2 and to 4,294,967,295; the stream's last marker is
/// tick 1), the way the reference recorder leaves one (it writes nothing for idle ticks).
fn idle_tails() -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let mut rec = Recorder::new(RecorderOptions::default());
    let id = rec.spawn("part:Block", None).unwrap();
    rec.begin_tick().unwrap();
    rec.transform(id, DVec3::new(1.0, 2.0, 3.0), DQuat::IDENTITY)
        .unwrap();
    rec.event("hit", &serde_json::json!({"by": 1})).unwrap();
    let none = rec.finish().unwrap();
    let with_tail = |tick_count: u32| {
        let mut b = none.clone();
        b[18..22].copy_from_slice(&tick_count.to_le_bytes());
        b
    };
    (none.clone(), with_tail(2), with_tail(u32::MAX))
}

/// The state without its tick, to compare ticks of an idle tail with the last op's tick.
fn untimed(s: &State) -> State {
    State {
        tick: None,
        ..s.clone()
    }
}

/// An idle tail is valid (`verify` accepts it) and the ticks in it hold the state of the
/// stream's last tick, events leaving the one-second window as time passes.
#[test]
fn idle_tail_holds_the_last_state() {
    let (none, short, long) = idle_tails();
    let ops = rply::verify(&none).unwrap();
    assert_eq!(rply::verify(&short).unwrap(), ops);
    assert_eq!(rply::verify(&long).unwrap(), ops);
    let played = assert_seek_equals_play(&short);
    assert_eq!(played.len(), 3);
    assert_eq!(untimed(&played[2]), untimed(&played[1]));
    assert_eq!(
        played[2].recent_events.len(),
        1,
        "tick 1's event, 1/15 s ago"
    );
    let mut p = Player::open(&long).unwrap();
    p.seek(1).unwrap();
    let at_last_op = p.state().clone();
    for t in [2, 14, 15, 16, u32::MAX - 1, u32::MAX] {
        p.seek(t).unwrap();
        assert_eq!(p.state().tick, Some(t));
        let s = p.state();
        assert_eq!(s.entities, at_last_op.entities, "tick {t}");
        // The window is the last 15 ticks (tick_rate): tick 1's event shows up to tick 15.
        assert_eq!(s.recent_events.len(), usize::from(t <= 15), "tick {t}");
    }
    assert!(!p.advance().unwrap(), "the last tick is 4,294,967,295");
}

/// The cost of `verify`, seeking and playing does not grow with the idle tail: a tail of
/// 2^32 - 2 ticks takes exactly the work of a tail of one tick, counted as the ops the
/// player's loops pass (`Player::ops_applied`: its loops run over ops, never over ticks).
#[test]
fn idle_tail_costs_nothing_per_tick() {
    let (_, short, long) = idle_tails();
    // The work done after each call, and the entities it reaches (the events of the last
    // second differ: a tick of the long tail is far past the event).
    let work = |b: &[u8]| -> Vec<(u64, State)> {
        let mut out = Vec::new();
        let mut rec = |p: &Player| {
            let s = State {
                recent_events: Vec::new(),
                ..untimed(p.state())
            };
            out.push((p.ops_applied(), s))
        };
        let mut p = Player::open(b).unwrap();
        let last = p.header().tick_count;
        p.verify_all().unwrap();
        rec(&p);
        let mut p = Player::open(b).unwrap();
        p.seek(last).unwrap();
        rec(&p);
        p.seek(last - 1).unwrap();
        rec(&p);
        p.seek(0).unwrap();
        rec(&p);
        p.seek(last).unwrap();
        rec(&p);
        let mut p = Player::open(b).unwrap();
        p.seek(last - 1).unwrap();
        rec(&p);
        assert!(p.advance().unwrap());
        rec(&p);
        assert!(!p.advance().unwrap());
        rec(&p);
        out
    };
    let (a, b) = (work(&short), work(&long));
    assert_eq!(a, b);
    // And verify's op count is the ops of the file (spawn, marker, XFORM, event).
    assert_eq!(a[0].0, 4);
    // The CLI, which seeks to the last tick and around each keyframe, as well.
    for (name, bytes) in [("tail-1.rply", &short), ("tail-max.rply", &long)] {
        let f = write_temp(name, bytes);
        let (ok, out, err) = statepack(&[std::ffi::OsStr::new("verify"), f.as_os_str()]);
        assert!(ok, "{name}: {err}");
        assert!(out.contains("4 ops"), "{name}: {out}");
    }
}

/// A keyframe index entry in the idle tail, at tick 4,294,967,295, points at the end of the
/// op stream (where that tick's ops would start): accepted, the entity holding its
/// transform there (a keyframe without its XFORM, counted), and seeking to it or around it
/// (the CLI's `verify` seeks to each keyframe tick and the ticks either side), twice in a
/// row included, equals playing.
#[test]
fn keyframe_in_the_idle_tail() {
    let mut o = Ops::default();
    o.spawn(1);
    o.keyframe(1)
        .next()
        .xform(1, Some([1.0, 2.0, 3.0]), None, YAW0);
    o.keyframe(u32::MAX);
    let b = o.file(u32::MAX);
    let mut p = Player::open(&b).unwrap();
    assert_eq!(p.verify_all().unwrap(), 3);
    assert_eq!(p.keyframe_holds(), 1);
    let at1 = fresh_seek(&b, 1);
    for t in [u32::MAX, u32::MAX, u32::MAX - 1, 2, u32::MAX] {
        p.seek(t).unwrap();
        assert_eq!(p.state().tick, Some(t));
        assert_eq!(p.state().entities, at1.entities, "tick {t}");
        assert_eq!(
            fresh_seek(&b, t).entities,
            at1.entities,
            "fresh seek to {t}"
        );
    }
    let f = write_temp("keyframe-max.rply", &b);
    let (ok, out, err) = statepack(&[std::ffi::OsStr::new("verify"), f.as_os_str()]);
    assert!(ok && out.contains("2 keyframes"), "{out}{err}");
}

/// A recording of entity 1 moving every tick (a position delta each tick, full XFORMs at
/// the keyframes, ticks 1 and 5) and entity 2 spawned without a transform, then edited
/// through the raw types: the position delta of entity 1 at tick `bad` given to entity 2,
/// a position delta with no base. Returns the recording and the edited file.
fn recording_with_bad_delta(bad: u32) -> (Vec<u8>, Vec<u8>) {
    let mut rec = Recorder::new(RecorderOptions {
        keyframe_every: 4,
        ..RecorderOptions::default()
    });
    let a = rec.spawn("part:Block", None).unwrap();
    let b = rec.spawn("part:Ball", None).unwrap();
    for t in 1..=8 {
        rec.begin_tick().unwrap();
        rec.transform(a, DVec3::new(f64::from(t) * 0.5, 0.0, 0.0), DQuat::IDENTITY)
            .unwrap();
    }
    let good = rec.finish().unwrap();
    let mut file = rply::RplyV3::decode(&good).unwrap();
    let (mut tick, mut edited) = (0, 0);
    for op in &mut file.ops.ops {
        match &mut op.body {
            OpBody::OpTick(t) => tick = t.tick,
            OpBody::OpTickNext(_) => tick += 1,
            OpBody::OpXformD(x) if tick == bad && u16::from(x.id_byte) == a => {
                x.id_byte = u8::try_from(b).unwrap();
                edited += 1;
            }
            _ => {}
        }
    }
    assert_eq!(edited, 1, "one delta of entity {a} at tick {bad}");
    (good, file.encode().unwrap())
}

/// The state a fresh player reaches by seeking to `tick`.
fn fresh_seek(bytes: &[u8], tick: u32) -> State {
    let mut p = Player::open(bytes).unwrap();
    p.seek(tick).unwrap();
    p.state().clone()
}

/// A failed seek leaves the player as it was: seeking to tick 0 afterwards gives tick 0's
/// state (not the state the failed seek had played into), and the same seek fails again
/// with the same error (it does not go on past the bad op), from a fresh player and from
/// one at tick 2, through the keyframe whose saved state the seek was building.
#[test]
fn a_failed_seek_leaves_the_player_unchanged() {
    let (good, bad) = recording_with_bad_delta(3);
    rply::verify(&good).unwrap();
    let e = play_all(&bad).unwrap_err().to_string();
    assert!(e.contains("position delta"), "{e}");
    let mut p = Player::open(&bad).unwrap();
    assert_eq!(p.seek(3).unwrap_err().to_string(), e);
    assert_eq!(p.state(), &State::default(), "as opened");
    assert_eq!(p.seek(3).unwrap_err().to_string(), e, "fails again");
    p.seek(0).unwrap();
    assert_eq!(p.state(), &fresh_seek(&bad, 0));
    p.seek(2).unwrap();
    let at2 = fresh_seek(&bad, 2);
    assert_eq!(p.state(), &at2);
    for target in [5, 5, 3, 8, 4] {
        assert_eq!(p.seek(target).unwrap_err().to_string(), e, "seek({target})");
        assert_eq!(p.state(), &at2, "after seek({target})");
    }
    p.seek(1).unwrap();
    assert_eq!(p.state(), &fresh_seek(&bad, 1));
    // A fresh player whose failed seek saved the state of the keyframe at tick 1 on its way.
    let mut p = Player::open(&bad).unwrap();
    assert_eq!(p.seek(6).unwrap_err().to_string(), e);
    assert_eq!(p.state(), &State::default());
    p.seek(2).unwrap();
    assert_eq!(p.state(), &at2);
}

/// A failed `advance` leaves the player at its tick: the next `advance` fails again with
/// the same error (it does not skip the bad op), and `verify_all`, which fails on the same
/// op, leaves it there too.
#[test]
fn a_failed_advance_leaves_the_player_unchanged() {
    let (_, bad) = recording_with_bad_delta(3);
    let mut p = Player::open(&bad).unwrap();
    for _ in 0..3 {
        assert!(p.advance().unwrap());
    }
    let at2 = p.state().clone();
    assert_eq!(at2, fresh_seek(&bad, 2));
    let e = p.advance().unwrap_err().to_string();
    assert!(e.contains("position delta"), "{e}");
    assert_eq!(p.state(), &at2);
    assert_eq!(p.advance().unwrap_err().to_string(), e, "fails again");
    assert_eq!(p.state(), &at2);
    assert_eq!(p.verify_all().unwrap_err().to_string(), e);
    assert_eq!(p.state(), &at2);
    assert_eq!(p.keyframe_holds(), 0);
    assert_eq!(p.advance().unwrap_err().to_string(), e);
    p.seek(1).unwrap();
    assert!(p.advance().unwrap());
    assert_eq!(p.state(), &at2);
    // At tick 0 of a file whose first delta has no base.
    let (_, bad) = recording_with_bad_delta(2);
    let mut p = Player::open(&bad).unwrap();
    assert!(p.advance().unwrap());
    assert!(p.advance().unwrap());
    let at1 = p.state().clone();
    let e = p.advance().unwrap_err().to_string();
    assert_eq!(p.state(), &at1);
    assert_eq!(p.advance().unwrap_err().to_string(), e);
}

fn write_temp(name: &str, b: &[u8]) -> std::path::PathBuf {
    // Cargo's scratch folder for integration tests, inside the target dir: nothing is left
    // behind in the system temp dir, and a rerun overwrites the same files.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("rply-rules");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, b).unwrap();
    p
}

fn statepack(args: &[&std::ffi::OsStr]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_statepack"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `verify FILE.rply --against MOTION` checks every tick of the walker against the motion
/// it was imported from, printing the worst errors, and exits non-zero when they are over
/// the bounds (here: another studs-per-metre than at import) or when the file holds no
/// walker.
#[test]
fn verify_against_the_source_motion() {
    let Some(bvh) = statepack_fixtures::fixture_for_test("motion/cmu-131-01-walk.bvh") else {
        return;
    };
    let dir = write_temp("unused", b"").parent().unwrap().to_path_buf();
    let rply = dir.join("walk.rply");
    let (ok, _, err) = statepack(&[
        "import".as_ref(),
        bvh.as_os_str(),
        "--format".as_ref(),
        "rply".as_ref(),
        "-o".as_ref(),
        rply.as_os_str(),
    ]);
    assert!(ok, "{err}");
    let (ok, out, err) = statepack(&[
        "verify".as_ref(),
        rply.as_os_str(),
        "--against".as_ref(),
        bvh.as_os_str(),
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("1 character(s), ticks 1..=124"), "{out}");
    let worst = out.lines().find(|l| l.starts_with("worst:")).expect(&out);
    let studs: f64 = worst.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(studs > 0.0 && studs <= 0.05, "{worst}");
    let (ok, _, err) = statepack(&[
        "verify".as_ref(),
        rply.as_os_str(),
        "--against".as_ref(),
        bvh.as_os_str(),
        "--studs-per-metre".as_ref(),
        "3".as_ref(),
    ]);
    assert!(!ok);
    assert!(
        err.contains("entity-tick(s) are further from the motion"),
        "{err}"
    );
    // An idle tail of 4,294,967,295 - 124 ticks (tick_count, byte offset 18, patched): the
    // file is valid, and --against refuses it at once instead of comparing every tick.
    let mut tail = std::fs::read(&rply).unwrap();
    tail[18..22].copy_from_slice(&u32::MAX.to_le_bytes());
    let tailed = write_temp("walk-idle-tail.rply", &tail);
    let (ok, _, err) = statepack(&["verify".as_ref(), tailed.as_os_str()]);
    assert!(ok, "{err}");
    let (ok, _, err) = statepack(&[
        "verify".as_ref(),
        tailed.as_os_str(),
        "--against".as_ref(),
        bvh.as_os_str(),
    ]);
    assert!(!ok);
    assert!(
        err.contains("the op stream ends at tick 124 and tick_count is 4294967295"),
        "{err}"
    );
    // No walker in the file.
    let mut o = Ops::default();
    o.spawn(1);
    o.keyframe(1).next().xform(1, Some([0.0; 3]), None, YAW0);
    let other = write_temp("block.rply", &o.file(1));
    let (ok, _, err) = statepack(&[
        "verify".as_ref(),
        other.as_os_str(),
        "--against".as_ref(),
        bvh.as_os_str(),
    ]);
    assert!(!ok);
    assert!(err.contains("holds no walker crowd"), "{err}");
}

/// `verify` accepts a keyframe that omits a live entity and says so.
#[test]
fn verify_reports_keyframe_holds() {
    let mut o = Ops::default();
    o.spawn(1).spawn(2);
    o.keyframe(1).next().xform(1, Some([0.0; 3]), None, YAW0);
    o.xform(2, Some([1.0; 3]), None, YAW0);
    o.keyframe(2).next().xform(2, Some([2.0; 3]), None, YAW0);
    let f = write_temp("holds.rply", &o.file(2));
    let (ok, out, err) = statepack(&["verify".as_ref(), f.as_os_str()]);
    assert!(ok, "{err}");
    assert!(
        out.contains("1 time(s) a keyframe has no full XFORM"),
        "{out}"
    );
}

/// Random hand-built streams (not the recorder's): XFORMs of every mask, deltas of every
/// kind with or without their bases, keyframes that give a full XFORM to a random subset of
/// the live entities (or none), spawns and despawns. Seeking to any tick, fresh or from any
/// other state, equals playing there, and fails with the same error exactly when playing
/// fails on the way.
#[test]
fn seek_equals_play_on_random_hand_built_streams() {
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    let mut rnd = move |n: u64| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s % n
    };
    let mut failing = 0;
    for _ in 0..400 {
        let mut o = Ops::default();
        let mut live = [false; 4];
        let ticks = 3 + rnd(10) as u32;
        for t in 1..=ticks {
            let key = rnd(3) == 0;
            if key {
                o.keyframe(t);
            }
            o.next();
            for id in 1..4u16 {
                let i = usize::from(id);
                match rnd(8) {
                    0 if !live[i] => {
                        o.spawn(id);
                        live[i] = true;
                    }
                    1 if live[i] && rnd(3) == 0 => {
                        o.bytes.extend_from_slice(&[2, id as u8, 0]);
                        live[i] = false;
                    }
                    _ => {}
                }
                if !live[i] {
                    continue;
                }
                if key && rnd(4) != 0 {
                    let tilted = rnd(2) == 0;
                    o.xform(
                        id,
                        Some([t as f32, 1.0, id as f32]),
                        tilted.then_some([100 * t as i16, 0, 50]),
                        (!tilted).then_some(300 * t as i16),
                    );
                }
                match rnd(6) {
                    0 => {
                        let m = [1u8, 2, 3, 4, 5][rnd(5) as usize];
                        o.xform(
                            id,
                            (m & 1 != 0).then_some([0.5, t as f32, 2.0]),
                            (m & 2 != 0).then_some([0, 200, 7 * t as i16]),
                            (m & 4 != 0).then_some(-100 * t as i16),
                        );
                    }
                    1 | 2 => {
                        let pos = (rnd(3) != 0).then_some([3, -2, 1]);
                        let rot = (rnd(3) == 0).then_some([2, 0, -1]);
                        o.delta(id as u8, pos, rot);
                    }
                    3 => {
                        // A yaw delta.
                        o.bytes.extend_from_slice(&[11, id as u8, 4, 5]);
                    }
                    _ => {}
                }
            }
        }
        let b = o.file(ticks);
        let played: Vec<Result<State, String>> = {
            let mut p = Player::open(&b).unwrap();
            let mut v = Vec::new();
            loop {
                match p.advance() {
                    Ok(true) => v.push(Ok(p.state().clone())),
                    Ok(false) => break,
                    Err(e) => {
                        let e = e.to_string();
                        while v.len() <= ticks as usize {
                            v.push(Err(e.clone()));
                        }
                        break;
                    }
                }
            }
            v
        };
        if played.iter().any(|r| r.is_err()) {
            failing += 1;
        }
        let norm = |r: Result<(), rply::RplyError>, p: &Player| {
            r.map(|()| p.state().clone()).map_err(|e| e.to_string())
        };
        for t in 0..=ticks {
            let mut fresh = Player::open(&b).unwrap();
            let got = norm(fresh.seek(t), &fresh);
            assert_eq!(got, played[t as usize], "fresh seek to {t}");
            let from = rnd(u64::from(ticks) + 1) as u32;
            let mut other = Player::open(&b).unwrap();
            if other.seek(from).is_ok() {
                let got = norm(other.seek(t), &other);
                assert_eq!(got, played[t as usize], "seek to {t} after {from}");
            }
        }
        if played.iter().all(|r| r.is_ok()) {
            rply::verify(&b).unwrap();
        }
    }
    assert!(
        failing > 20 && failing < 380,
        "{failing} of 400 streams fail"
    );
}
