//! Sampling the study's keyframe tracks a frame or a window at a time
//! (`DecodedTracks::sample_frame`, `sample_window`) gives exactly the frames `to_frames`
//! builds all at once, for every layout (raw, float32 and quantised keys, linear and cubic),
//! and the key lookups name the key at or before the frame.

use statepack::formats::study_tracks::{self, DecodedTracks};
use statepack_codecs::keyframe::{plan, PlanOptions, ScalarKind};

/// The study's walk (40 frames, built in code) in every layout.
fn files() -> Vec<(String, DecodedTracks)> {
    let mut clip = statepack_codecs::motion::walk::study_walk_clip();
    clip.frames.truncate(40);
    let mut out = vec![(
        "raw".to_owned(),
        study_tracks::read(&study_tracks::encode_raw(&clip).unwrap()).unwrap(),
    )];
    for cubic in [false, true] {
        for quant in [false, true] {
            let b = study_tracks::encode_plan(&plan(&clip, PlanOptions::at_mm(1.0, cubic, quant)))
                .unwrap();
            out.push((
                format!("cubic {cubic} quantized {quant}"),
                study_tracks::read(&b).unwrap(),
            ));
        }
    }
    out
}

#[test]
fn windows_match_the_frames_built_at_once() {
    for (name, t) in files() {
        let all = t.to_frames();
        assert_eq!(all.len(), t.num_frames, "{name}");
        for (f, frame) in all.iter().enumerate() {
            assert_eq!(t.sample_frame(f).as_ref(), Some(frame), "{name} frame {f}");
        }
        assert_eq!(t.sample_frame(t.num_frames), None, "{name}");
        assert_eq!(t.bone_at(t.num_bones, 0), None, "{name}");
        for &bone in &t.stored_bones() {
            assert_eq!(t.bone_at(bone, 7), Some(all[7][bone]), "{name} bone {bone}");
        }
        assert!(!t.stored_bones().is_empty(), "{name}");
        for (from, count) in [(0, 1), (3, 7), (30, 100), (39, 5), (40, 3), (1000, 2)] {
            let w = t.sample_window(from, count);
            let lo = from.min(all.len());
            let hi = from.saturating_add(count).min(all.len());
            assert_eq!(w, all[lo..hi], "{name} window {from}+{count}");
        }
    }
}

#[test]
fn key_lookups_name_the_key_at_or_before_the_frame() {
    let mut checked = 0;
    for (name, t) in files() {
        if t.raw_values.is_some() {
            assert_eq!(
                t.rotation_key_at(0, 0),
                None,
                "{name}: a raw file has no records"
            );
            continue;
        }
        for (i, r) in t.rotations.iter().enumerate() {
            for f in 0..t.num_frames {
                let (ri, k) = t.rotation_key_at(r.bone, f).expect("a record");
                assert_eq!(ri, i, "{name}");
                match k {
                    None => assert_eq!(r.frames.len(), 1, "{name}"),
                    Some(k) => {
                        assert!(r.frames[k] <= f, "{name}");
                        assert!(r.frames.get(k + 1).is_none_or(|&n| n > f), "{name}");
                        checked += 1;
                    }
                }
            }
        }
        for (i, s) in t.scalars.iter().enumerate() {
            let (si, k) = t
                .scalar_key_at(s.kind, s.bone, s.axis, t.num_frames - 1)
                .expect("a record");
            assert_eq!(si, i, "{name}");
            if let Some(k) = k {
                assert_eq!(
                    k,
                    s.frames.len() - 1,
                    "{name}: the last frame is the last key"
                );
            }
        }
        assert_eq!(
            t.scalar_key_at(ScalarKind::Scale, t.num_bones, 0, 0),
            None,
            "{name}: no record past the last bone"
        );
    }
    assert!(checked > 0, "no keyed rotation checked");
}

/// A header that claims many bones stores records for a few: only those are listed as
/// stored, so a caller drawing them stays in proportion to the file.
#[test]
fn stored_bones_are_the_bones_records_name() {
    let mut clip = statepack_codecs::motion::walk::study_walk_clip();
    clip.frames.truncate(10);
    let b = study_tracks::encode_plan(&plan(&clip, PlanOptions::at_mm(1.0, false, false))).unwrap();
    let t = study_tracks::read(&b).unwrap();
    let mut want: Vec<usize> = t.scalars.iter().map(|s| s.bone).collect();
    want.extend(t.rotations.iter().map(|r| r.bone));
    want.sort_unstable();
    want.dedup();
    assert_eq!(t.stored_bones(), want);
}
