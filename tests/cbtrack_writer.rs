//! CBTK v1 writer rules, each pinned: thinning within tolerance on the rounded values a reader
//! sees, window-edge keys, middle-of-three-equal keys dropped, whole-turn angle shifts, terrain
//! rows, team numbers, errors for values that do not fit, and a failed check naming the sample.

use glam::{DQuat, DVec3};
use statepack::formats::cbtrack::writer::*;
use statepack::formats::cbtrack::*;
use statepack::sim::cbtrack_match::MatchSpec;

fn write(spec: &MatchSpec) -> (Vec<u8>, Stats, SectionBytes) {
    let mut out = std::io::Cursor::new(Vec::new());
    let (_, st, sb) = spec.write(&mut out, |_, _| {}).unwrap();
    (out.into_inner(), st, sb)
}

#[test]
fn small_match_writes_reads_and_is_within_tolerance() {
    let spec = MatchSpec::small();
    let (bytes, st, _) = write(&spec);
    decode_all(&bytes).unwrap();
    let v = spec.verify(&bytes).unwrap();
    assert!(v.worst_unit <= 0.5, "{v:?}");
    assert!(v.worst_piece <= 0.5, "{v:?}");
    assert!(v.worst_projectile <= 0.5, "{v:?}");
    assert!(
        st.transform_keys > 0 && st.pose_keys > 0 && st.projectile_keys > 0 && st.team_keys > 0
    );
    assert!(st.terrain_rows > 0);
    let t = Track::open(&bytes).unwrap();
    assert_eq!(t.num_windows(), 3);
    // every window stands alone: each unit has a transform key on its first offset
    for k in 0..t.num_windows() {
        let w = t.window(k).unwrap().decode().unwrap();
        for u in &w.units {
            assert_eq!(
                u.transforms[0].offset, u.first as u32,
                "window {k} unit {}",
                u.serial
            );
            assert!(!u.status.is_empty());
            for p in &u.poses {
                for a in 0..3 {
                    assert!((-32768..=32767).contains(&p.keys[0].angles[a]));
                }
            }
        }
        for p in &w.projectiles {
            assert_eq!(p.keys[0].offset, p.first as u32);
            assert_eq!(p.keys.last().unwrap().offset, p.last as u32);
        }
    }
}

#[test]
fn window_edge_frames_read_the_same_from_both_windows() {
    let spec = MatchSpec::small();
    let (bytes, _, _) = write(&spec);
    let t = Track::open(&bytes).unwrap();
    let h = t.header();
    let w0 = t.window(0).unwrap().decode().unwrap();
    let w1 = t.window(1).unwrap().decode().unwrap();
    let edge = h.window_span(1).0 as f64;
    let a = w0.sample(&h, edge);
    let b = w1.sample(&h, edge);
    assert_eq!(a.units.len(), b.units.len());
    for (x, y) in a.units.iter().zip(&b.units) {
        assert_eq!(x.serial, y.serial);
        for i in 0..3 {
            assert!((x.pos_elmos[i] - y.pos_elmos[i]).abs() < 1e-9);
        }
    }
}

#[test]
fn player_seeks_reading_only_terrain_chunks_in_between() {
    let spec = MatchSpec::small();
    let (bytes, _, _) = write(&spec);
    let mut p = Player::new(&bytes).unwrap();
    let start = p.sample(0.0).unwrap();
    let end = p.sample(180.0).unwrap();
    assert_eq!(
        p.reads.main, 2,
        "only the first and the last window's main chunks"
    );
    assert!(!end.terrain.is_empty());
    // backward lands where forward started
    let back = p.sample(0.0).unwrap();
    for &(x, z, hgt) in &back.terrain {
        let orig = start
            .terrain
            .iter()
            .find(|t| t.0 == x && t.1 == z)
            .map(|t| t.2);
        assert_eq!(orig.unwrap_or(30.0), hgt, "point {x},{z}");
    }
}

/// The reads that hand items over one at a time (`WindowChunk::visit` and `sample_each`,
/// `Track::visit_info`, `visit_features`, `visit_terrain`, `Player::sample_each`) give
/// exactly what the collectors return.
#[test]
fn one_at_a_time_reads_give_what_the_collectors_return() {
    let (bytes, _, _) = write(&MatchSpec::small());
    let t = Track::open(&bytes).unwrap();
    let h = t.header();
    let mut info = Info::default();
    let mut starts = Vec::new();
    t.visit_info(|p| match p {
        InfoPart::Name(l, _, s) => {
            let s = s.to_owned();
            match l {
                InfoList::Texts => info.texts.push(s),
                InfoList::UnitDefs => info.unit_defs.push(s),
                InfoList::WeaponDefs => info.weapon_defs.push(s),
                InfoList::FeatureDefs => info.feature_defs.push(s),
                InfoList::PieceNames => info.posed.last_mut().unwrap().1.push(s),
                InfoList::TeamParams => info.team_params.push(s),
                InfoList::GameParams => info.game_params.push(s),
                InfoList::Posed | InfoList::Teams => unreachable!("no names"),
            }
        }
        InfoPart::Start(l, n) => starts.push((l, n)),
        InfoPart::Posed { def, .. } => info.posed.push((def, Vec::new())),
        InfoPart::Team(x) => info.teams.push(x.clone()),
        InfoPart::MapSize(m) => info.map_size = m.to_vec(),
        InfoPart::Footprints { x, z } => {
            info.footprint_x = x.to_vec();
            info.footprint_z = z.to_vec();
        }
    })
    .unwrap();
    let want = t.info().unwrap();
    assert!(!want.posed.is_empty() && !want.teams.is_empty() && !want.unit_defs.is_empty());
    assert_eq!(info, want);
    use InfoList as L;
    assert_eq!(
        starts,
        [
            (L::Texts, want.texts.len()),
            (L::UnitDefs, want.unit_defs.len()),
            (L::WeaponDefs, want.weapon_defs.len()),
            (L::FeatureDefs, want.feature_defs.len()),
            (L::Posed, want.posed.len()),
            (L::Teams, want.teams.len()),
            (L::TeamParams, want.team_params.len()),
            (L::GameParams, want.game_params.len()),
        ]
    );
    let mut features = Vec::new();
    let n = t
        .visit_features(|i, f| {
            assert_eq!(i, features.len());
            features.push(f.clone());
        })
        .unwrap();
    assert_eq!(n, features.len());
    assert_eq!(features, t.features().unwrap());
    let mut p = Player::new(&bytes).unwrap();
    let mut rows_seen = 0;
    for k in 0..t.num_windows() {
        let mut rows = Vec::new();
        let n = t.visit_terrain(k, |r| rows.push(*r)).unwrap();
        assert_eq!((n, &rows), (rows.len(), &t.terrain(k).unwrap()));
        rows_seen += rows.len();
        let chunk = t.window(k).unwrap();
        let w = chunk.decode().unwrap();
        let mut visited = MainWindow {
            index: chunk.index(),
            start: chunk.start(),
            end: chunk.end(),
            ..MainWindow::default()
        };
        chunk
            .visit(|part| match part {
                WindowPart::Counts { .. } => {}
                WindowPart::Unit(u) => visited.units.push(u.clone()),
                WindowPart::Projectile(x) => visited.projectiles.push(x.clone()),
                WindowPart::Team(n) => visited.teams.push(n.clone()),
            })
            .unwrap();
        assert_eq!(visited, w);
        let (start, end) = h.window_span(k);
        // (a window's last frame is the next window's first: the player reads it there)
        for frame in [start as f64, (start + end) as f64 / 2.0 + 0.25] {
            let want = w.sample(&h, frame);
            assert!(!want.units.is_empty());
            assert_eq!(chunk.sample(&h, frame).unwrap(), want);
            let got = p.sample(frame).unwrap();
            assert_eq!(
                (&got.units, &got.projectiles, &got.teams, got.window),
                (&want.units, &want.projectiles, &want.teams, k)
            );
            let alive: Vec<usize> = (0..features.len())
                .filter(|&i| features[i].exists_at(frame))
                .collect();
            assert_eq!(got.features, alive);
            let row = w.units[0].serial;
            assert_eq!(chunk.transform_row(row, frame), w.transform_row(row, frame));
        }
    }
    assert!(rows_seen > 0 && !features.is_empty());
}

#[test]
fn middle_of_three_equal_keys_is_dropped_and_a_standing_unit_has_one_key() {
    let mut out = std::io::Cursor::new(Vec::new());
    let params = FileParams {
        first_frame: 0,
        last_frame: 100,
        window_length: 100,
        ..FileParams::default()
    };
    let mut w = ThinningWriter::new(&mut out, params, &Info::default(), &[]).unwrap();
    let rot = DQuat::IDENTITY;
    let u = UnitInput {
        unit_id: 1,
        serial: 0,
        radius: 10.0,
        first_frame: 0,
        last_frame: 100,
        samples: (0..=100)
            .map(|f| UnitSample {
                frame: f,
                pos: DVec3::new(10.0, 0.0, 5.0),
                rot,
            })
            .collect(),
        status: vec![StatusSample {
            frame: 0,
            health: 1.0,
            build: 1.0,
            flags: 1,
        }],
        ..Default::default()
    };
    w.push(&WindowInput {
        units: vec![u],
        ..Default::default()
    })
    .unwrap();
    w.finish().unwrap();
    let bytes = out.into_inner();
    let win = Track::open(&bytes)
        .unwrap()
        .window(0)
        .unwrap()
        .decode()
        .unwrap();
    assert_eq!(win.units[0].transforms.len(), 1);
}

#[test]
fn health_is_clamped_and_status_within_one_step() {
    let mut out = std::io::Cursor::new(Vec::new());
    let params = FileParams {
        first_frame: 0,
        last_frame: 10,
        window_length: 10,
        ..FileParams::default()
    };
    let mut w = ThinningWriter::new(&mut out, params, &Info::default(), &[]).unwrap();
    let u = UnitInput {
        serial: 0,
        radius: 10.0,
        first_frame: 0,
        last_frame: 10,
        samples: vec![UnitSample {
            frame: 0,
            pos: DVec3::ZERO,
            rot: DQuat::IDENTITY,
        }],
        status: vec![
            StatusSample {
                frame: 0,
                health: 1.3,
                build: 1.0,
                flags: 1,
            },
            StatusSample {
                frame: 10,
                health: -0.2,
                build: 1.0,
                flags: 1,
            },
        ],
        ..Default::default()
    };
    w.push(&WindowInput {
        units: vec![u],
        ..Default::default()
    })
    .unwrap();
    w.finish().unwrap();
    let win = Track::open(out.get_ref())
        .unwrap()
        .window(0)
        .unwrap()
        .decode()
        .unwrap();
    let s = &win.units[0].status;
    assert_eq!((s[0].health, s[1].health), (65535, 0));
}

#[test]
fn a_value_that_does_not_fit_is_an_error_not_a_wrap() {
    let mut out = std::io::Cursor::new(Vec::new());
    let params = FileParams {
        first_frame: 0,
        last_frame: 10,
        window_length: 10,
        ..FileParams::default()
    };
    let mut w = ThinningWriter::new(&mut out, params, &Info::default(), &[]).unwrap();
    // 2,097,152 elmos is 16,777,216 steps of 1/8
    let u = UnitInput {
        serial: 0,
        radius: 10.0,
        first_frame: 0,
        last_frame: 10,
        samples: vec![UnitSample {
            frame: 0,
            pos: DVec3::new(2_097_152.0, 0.0, 0.0),
            rot: DQuat::IDENTITY,
        }],
        ..Default::default()
    };
    let e = w
        .push(&WindowInput {
            units: vec![u],
            ..Default::default()
        })
        .unwrap_err();
    assert!(e.to_string().contains("beyond 16,777,215"), "{e}");
}

#[test]
fn a_target_outside_the_window_is_refused() {
    let mut out = std::io::Cursor::new(Vec::new());
    let params = FileParams {
        first_frame: 0,
        last_frame: 10,
        window_length: 10,
        ..FileParams::default()
    };
    let mut w = ThinningWriter::new(&mut out, params, &Info::default(), &[]).unwrap();
    let u = UnitInput {
        serial: 0,
        radius: 10.0,
        first_frame: 0,
        last_frame: 10,
        samples: vec![UnitSample {
            frame: 0,
            pos: DVec3::ZERO,
            rot: DQuat::IDENTITY,
        }],
        status: vec![StatusSample {
            frame: 0,
            health: 1.0,
            build: 1.0,
            flags: 0,
        }],
        targets: vec![(
            1,
            vec![TargetInputKey {
                frame: 2,
                kind: 1,
                reference: 99,
                power15: 0,
                pos: None,
            }],
        )],
        ..Default::default()
    };
    let e = w
        .push(&WindowInput {
            units: vec![u],
            ..Default::default()
        })
        .unwrap_err();
    assert!(e.to_string().contains("not in window 0"), "{e}");
}

#[test]
fn a_failed_tolerance_check_names_the_sample() {
    // a position tolerance so small that the 1/8 elmo rounding of the file cannot meet it
    let mut out = std::io::Cursor::new(Vec::new());
    let params = FileParams {
        first_frame: 0,
        last_frame: 10,
        window_length: 10,
        tolerance: 0.01,
        ..FileParams::default()
    };
    let mut w = ThinningWriter::new(&mut out, params, &Info::default(), &[]).unwrap();
    let u = UnitInput {
        unit_id: 42,
        serial: 3,
        radius: 10.0,
        first_frame: 0,
        last_frame: 10,
        samples: vec![UnitSample {
            frame: 0,
            pos: DVec3::new(0.06, 0.0, 0.0),
            rot: DQuat::IDENTITY,
        }],
        status: vec![StatusSample {
            frame: 0,
            health: 1.0,
            build: 1.0,
            flags: 0,
        }],
        ..Default::default()
    };
    let e = w
        .push(&WindowInput {
            units: vec![u],
            ..Default::default()
        })
        .unwrap_err();
    assert!(matches!(e, WriteError::Tolerance(_)));
    assert!(
        e.to_string().contains("unit 42 (serial 3) at frame 0"),
        "{e}"
    );
}

#[test]
fn team_numbers_exact_thinned_and_rules_parameter_not_set() {
    let mut out = std::io::Cursor::new(Vec::new());
    let params = FileParams {
        first_frame: 0,
        last_frame: 100,
        window_length: 50,
        ..FileParams::default()
    };
    let mut w = ThinningWriter::new(&mut out, params.clone(), &Info::default(), &[]).unwrap();
    let metal = TeamInput {
        team: 0,
        code: 0,
        samples: (0..=50)
            .map(|f| (f, f as f32 * 2.0 + 0.1 * (f % 2) as f32))
            .collect(),
    };
    let storage = TeamInput {
        team: 0,
        code: 1,
        samples: (0..=50)
            .map(|f| (f, if f < 20 { 100.0 } else { 150.0 }))
            .collect(),
    };
    let param = TeamInput {
        team: 0,
        code: 256,
        samples: (10..=50).map(|f| (f, 3.0)).collect(),
    };
    let zero = TeamInput {
        team: 1,
        code: 16,
        samples: (0..=50).map(|f| (f, 0.0)).collect(),
    };
    w.push(&WindowInput {
        teams: vec![metal, storage, param.clone(), zero.clone()],
        ..Default::default()
    })
    .unwrap();
    let param2 = TeamInput {
        team: 0,
        code: 256,
        samples: (50..=100).map(|f| (f, 3.0)).collect(),
    };
    w.push(&WindowInput {
        teams: vec![param2],
        ..Default::default()
    })
    .unwrap();
    w.finish().unwrap();
    let t = Track::open(out.get_ref()).unwrap();
    let w0 = t.window(0).unwrap().decode().unwrap();
    // a resource that is 0 for the whole window has no track
    assert!(w0.teams.iter().all(|x| x.team != 1));
    let storage = w0.teams.iter().find(|x| x.code == 1).unwrap();
    assert_eq!(storage.at(19.0), Some(100.0));
    assert_eq!(storage.at(20.0), Some(150.0));
    let metal = w0.teams.iter().find(|x| x.code == 0).unwrap();
    assert!(metal.keys.len() < 10, "thinned: {}", metal.keys.len());
    let p = w0.teams.iter().find(|x| x.code == 256).unwrap();
    assert_eq!(p.at(9.0), None);
    assert_eq!(p.at(10.0), Some(3.0));
    // set before window 1: a key on its first frame
    let w1 = t.window(1).unwrap().decode().unwrap();
    let p = w1.teams.iter().find(|x| x.code == 256).unwrap();
    assert_eq!(p.keys[0].0, 0);
    assert_eq!(p.at(0.0), Some(3.0));
}

#[test]
fn piece_angles_follow_the_engine_order_and_stay_continuous() {
    let a = [0.3, -1.2, 2.0];
    let q = angles_rotation(a);
    let b = piece_angles(q, None);
    assert!(statepack_codecs::smallest3::angle_between(angles_rotation(b), q) < 1e-9);
    // a spin keeps counting turns
    let mut prev = None;
    let mut last = 0.0;
    for i in 0..200 {
        let y = i as f64 * 0.2;
        let r = piece_angles(DQuat::from_rotation_y(y), prev);
        prev = Some(r);
        last = r[1];
    }
    assert!((last - 199.0 * 0.2).abs() < 1e-6, "{last}");
}

#[test]
fn terrain_rules_one_row_per_point_rounding_and_height_before() {
    let mut out = std::io::Cursor::new(Vec::new());
    let params = FileParams {
        first_frame: 0,
        last_frame: 20,
        window_length: 10,
        ..FileParams::default()
    };
    let mut w = ThinningWriter::new(&mut out, params, &Info::default(), &[]).unwrap();
    let c = |frame, after| TerrainChange {
        frame,
        x: 5,
        z: 6,
        map_height: 10.0,
        after,
    };
    // two rows at frame 3 (the last wins), one that rounds to nothing
    w.push(&WindowInput {
        terrain: vec![c(3, 9.0), c(3, 8.0), c(4, 8.01)],
        ..Default::default()
    })
    .unwrap();
    // the recorder's own height before is not used: rule 3 takes 8.0 from the row before
    w.push(&WindowInput {
        terrain: vec![c(10, 7.0), c(15, 6.5)],
        ..Default::default()
    })
    .unwrap();
    w.finish().unwrap();
    let t = Track::open(out.get_ref()).unwrap();
    let r0 = t.terrain(0).unwrap();
    assert_eq!(r0.len(), 1);
    assert_eq!((r0[0].frame, r0[0].before, r0[0].after), (3, 80, 64));
    let r1 = t.terrain(1).unwrap();
    // frame 10 is window 0's last frame: window 1 holds rows after its first frame only
    assert_eq!(r1.len(), 1);
    assert_eq!((r1[0].frame, r1[0].before, r1[0].after), (15, 64, 52));
}

#[test]
fn values_at_the_limit_are_written_and_read_back() {
    // 16,777,215 steps of 1/8 elmo is the largest position a column may hold.
    let edge = 16_777_215.0 / 8.0;
    let mut out = std::io::Cursor::new(Vec::new());
    let params = FileParams {
        first_frame: 0,
        last_frame: 10,
        window_length: 10,
        ..FileParams::default()
    };
    let mut w = ThinningWriter::new(&mut out, params, &Info::default(), &[]).unwrap();
    let u = UnitInput {
        // serial 16,777,214 makes 16,777,215 units, the most the header may count
        serial: 16_777_214,
        radius: 10.0,
        first_frame: 0,
        last_frame: 10,
        samples: vec![
            UnitSample {
                frame: 0,
                pos: DVec3::new(edge, -edge, 0.0),
                rot: DQuat::IDENTITY,
            },
            UnitSample {
                frame: 10,
                pos: DVec3::new(-edge, edge, 0.0),
                rot: DQuat::IDENTITY,
            },
        ],
        status: vec![StatusSample {
            frame: 0,
            health: 1.0,
            build: 1.0,
            flags: 1,
        }],
        ..Default::default()
    };
    w.push(&WindowInput {
        units: vec![u],
        ..Default::default()
    })
    .unwrap();
    w.finish().unwrap();
    let win = Track::open(out.get_ref())
        .unwrap()
        .window(0)
        .unwrap()
        .decode()
        .unwrap();
    let k = &win.units[0].transforms;
    assert_eq!(k[0].pos[..2], [16_777_215, -16_777_215]);
    assert_eq!(k[1].pos[..2], [-16_777_215, 16_777_215]);
    assert_eq!(win.units[0].serial, 16_777_214);
    assert_eq!(
        Track::open(out.get_ref()).unwrap().raw.num_units,
        16_777_215
    );
}

/// A NaN, infinite or zero-length rotation (of a unit or a piece), and a non-finite position,
/// piece offset or projectile velocity, is an error naming the sample; it is never stored as
/// the identity or a saturated code. A finite non-unit rotation is normalised and written.
#[test]
fn non_finite_or_zero_length_samples_are_refused() {
    let params = FileParams {
        first_frame: 0,
        last_frame: 10,
        window_length: 10,
        ..FileParams::default()
    };
    let unit = |pos: DVec3, rot: DQuat, piece_rot: DQuat, offset: DVec3| UnitInput {
        serial: 5,
        radius: 10.0,
        first_frame: 0,
        last_frame: 10,
        samples: vec![UnitSample { frame: 3, pos, rot }],
        status: vec![StatusSample {
            frame: 0,
            health: 1.0,
            build: 1.0,
            flags: 0,
        }],
        pieces: vec![PieceInput {
            piece: 0,
            reach: 4.0,
            samples: vec![PieceSample {
                frame: 3,
                rot: piece_rot,
                offset,
            }],
        }],
        ..Default::default()
    };
    let push = |input: WindowInput| {
        let mut out = std::io::Cursor::new(Vec::new());
        let mut w = ThinningWriter::new(&mut out, params.clone(), &Info::default(), &[]).unwrap();
        w.push(&input)
    };
    let units = |u: UnitInput| WindowInput {
        units: vec![u],
        ..Default::default()
    };
    let id = DQuat::IDENTITY;
    let nan = f64::NAN;
    for (rot, what) in [
        (DQuat::from_xyzw(nan, 0.0, 0.0, 1.0), "NaN"),
        (DQuat::from_xyzw(0.0, f64::INFINITY, 0.0, 1.0), "infinite"),
        (DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0), "zero-length"),
    ] {
        let e = push(units(unit(DVec3::ZERO, rot, id, DVec3::ZERO))).unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("unit serial 5 at frame 3: rotation") && m.contains("non-zero length"),
            "{what} unit rotation: {m}"
        );
        let e = push(units(unit(DVec3::ZERO, id, rot, DVec3::ZERO))).unwrap_err();
        assert!(
            e.to_string()
                .contains("unit serial 5 piece 0 at frame 3: rotation"),
            "{what} piece rotation: {e}"
        );
    }
    let e = push(units(unit(DVec3::new(nan, 0.0, 0.0), id, id, DVec3::ZERO))).unwrap_err();
    assert!(e.to_string().contains("position"), "{e}");
    let e = push(units(unit(
        DVec3::ZERO,
        id,
        id,
        DVec3::splat(f64::INFINITY),
    )))
    .unwrap_err();
    assert!(e.to_string().contains("offset"), "{e}");
    let e = push(WindowInput {
        projectiles: vec![ProjectileInput {
            serial: 9,
            weapon: 0,
            team: 0,
            owner: None,
            first_frame: 2,
            last_frame: 4,
            samples: vec![ProjectileSample {
                frame: 2,
                pos: DVec3::ZERO,
                vel: DVec3::new(0.0, nan, 0.0),
            }],
        }],
        ..Default::default()
    })
    .unwrap_err();
    assert!(
        e.to_string().contains("projectile serial 9 at frame 2"),
        "{e}"
    );
    // A finite rotation of length 2 is a direction: normalised and written.
    push(units(unit(DVec3::ZERO, id * 2.0, id * 2.0, DVec3::ZERO))).unwrap();
}
