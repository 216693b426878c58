//! RPLY v3: exact bytes of a small replay, the spec's sizes, every op shape in the raw layer,
//! the recorder's conventions, and the refusals (each with its field path and offset).

use glam::{DQuat, DVec3};
use statepack::formats::rply::samples::{every_op_file, full_snapshot};
use statepack::formats::rply::{
    self, Player, PropValue, Recorder, RecorderOptions, RplyError, RplyV3,
};
use statepack::generated::rply_v3 as raw;

fn tiny() -> Vec<u8> {
    let mut rec = Recorder::new(RecorderOptions {
        place_version: 7,
        ..RecorderOptions::default()
    });
    let id = rec.spawn("part:Block", None).unwrap();
    assert_eq!(id, 1);
    rec.begin_tick().unwrap();
    let yaw90 = DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2);
    rec.transform(id, DVec3::new(1.0, 2.0, 3.0), yaw90).unwrap();
    rec.begin_tick().unwrap();
    rec.transform(id, DVec3::new(1.25, 2.0, 3.0), yaw90)
        .unwrap();
    rec.begin_tick().unwrap();
    rec.transform(id, DVec3::new(1.26, 2.0, 3.0), yaw90)
        .unwrap(); // under 0.05 studs: skipped
    rec.begin_tick().unwrap();
    let yaw95 = DQuat::from_rotation_y(95f64.to_radians());
    rec.transform(id, DVec3::new(1.25, 2.0, 3.0), yaw95)
        .unwrap();
    rec.finish().unwrap()
}

#[test]
fn tiny_replay_exact_bytes() {
    let b = tiny();
    #[rustfmt::skip]
    let expected: Vec<u8> = [
        // Header, 30 bytes: magic, version 3, tick rate 15, place version 7, start 0.0,
        // tick count 4, 1 string, 1 keyframe, 42 op bytes.
        &b"RPLY"[..], &[3, 15], &[7, 0, 0, 0], &[0; 8], &[4, 0, 0, 0], &[1, 0], &[1, 0], &[42, 0, 0, 0],
        // String 1.
        &[10, 0], b"part:Block",
        // Keyframe: tick 1 at op offset 7 (its TICK_NEXT marker).
        &[1, 0, 0, 0, 7, 0, 0, 0],
        // Tick 0 (no marker): SPAWN entity 1, descriptor 1, no parent.
        &[1, 1, 0, 1, 0, 0, 0],
        // Tick 1: TICK_NEXT, XFORM entity 1 mask 5, (1, 2, 3), yaw 16384 (π/2).
        &[10, 3, 1, 0, 5], &1f32.to_le_bytes(), &2f32.to_le_bytes(), &3f32.to_le_bytes(), &16384i16.to_le_bytes(),
        // Tick 2: TICK_NEXT, XFORM_D entity 1 mask 1, +8/32 stud on x.
        &[10, 11, 1, 1, 8, 0, 0],
        // Tick 3 wrote nothing; tick 4 needs an absolute TICK, then a yaw delta of 6/64 rad.
        &[0, 4, 0, 0, 0], &[11, 1, 4, 6],
    ]
    .concat();
    assert_eq!(b, expected);
    assert_eq!(rply::HEADER_LEN, 30);
    // XFORM with position and full rotation is 1 + 2 + 1 + 12 + 6 = 22 bytes (the spec's budget).
    let op = raw::Op {
        opcode: raw::Opcode::Xform,
        body: raw::OpBody::OpXform(raw::OpXform {
            entity_id: 1,
            mask: 3,
            pos: Some([0.0; 3]),
            rot: Some([1, 2, 3]),
            yaw: None,
        }),
    };
    assert_eq!(1 + op.body.encoded_len(), 22);
    // Raw decode -> encode is the identity, and the whole file verifies.
    assert_eq!(RplyV3::decode(&b).unwrap().encode().unwrap(), b);
    rply::verify(&b).unwrap();
}

#[test]
fn tiny_replay_plays_back() {
    let b = tiny();
    let mut p = Player::open(&b).unwrap();
    assert_eq!(p.header().tick_count, 4);
    assert_eq!(&*p.strings()[0], "part:Block");
    p.seek(2).unwrap();
    let e = &p.state().entities[&1];
    assert_eq!(&*e.descriptor, "part:Block");
    assert_eq!(e.xform.pos, Some(DVec3::new(1.25, 2.0, 3.0)));
    p.seek(4).unwrap();
    let yaw = statepack_codecs::rply_xform::yaw_of(p.state().entities[&1].xform.shown_rot.unwrap());
    assert!((yaw - (16384.0 * std::f64::consts::PI / 32767.0 + 6.0 / 64.0)).abs() < 1e-9);
}

#[test]
fn compact_entity_id() {
    assert_eq!(rply::compact_id(1), (1, None));
    assert_eq!(rply::compact_id(254), (254, None));
    assert_eq!(rply::compact_id(255), (255, Some(255)));
    assert_eq!(rply::compact_id(260), (255, Some(260)));
    // 0xFF then u16 on the wire.
    let op = raw::Op {
        opcode: raw::Opcode::XformD,
        body: raw::OpBody::OpXformD(raw::OpXformD {
            id_byte: 255,
            id_wide: Some(300),
            mask: 4,
            pos8: None,
            pos16: None,
            yaw: Some(-2),
            rot: None,
        }),
    };
    let mut w = statepack_runtime::io::ByteWriter::new();
    op.write_to(&mut w).unwrap();
    assert_eq!(w.as_bytes(), [11, 255, 44, 1, 4, 254]);
}

/// Every opcode, every XFORM_D mask bit, both XFORM rotation forms, the wide id, every PROP
/// tag and every SNAPSHOT block appear in the sample, and it round-trips.
#[test]
fn every_op_sample_covers_the_format() {
    let b = every_op_file().unwrap();
    let file = RplyV3::decode(&b).unwrap();
    assert_eq!(file.encode().unwrap(), b);
    let ops = &file.ops.ops;
    let mut seen = std::collections::BTreeSet::new();
    let mut masks = std::collections::BTreeSet::new();
    let mut prop_tags = std::collections::BTreeSet::new();
    let mut wide = false;
    for op in ops {
        seen.insert(op.opcode.to_i());
        match &op.body {
            raw::OpBody::OpXform(x) => {
                masks.insert(("xform", x.mask));
            }
            raw::OpBody::OpXformD(x) => {
                for bit in [1, 2, 4, 8] {
                    if x.mask & bit != 0 {
                        masks.insert(("delta", bit));
                    }
                }
                wide |= x.id_wide.is_some();
            }
            raw::OpBody::OpProp(p) => {
                prop_tags.insert(p.type_tag.to_i());
            }
            _ => {}
        }
    }
    assert_eq!(
        seen.into_iter().collect::<Vec<_>>(),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14]
    );
    for m in [
        ("xform", 3),
        ("xform", 5),
        ("delta", 1),
        ("delta", 2),
        ("delta", 4),
        ("delta", 8),
    ] {
        assert!(masks.contains(&m), "{m:?}");
    }
    assert!(wide);
    assert_eq!(
        prop_tags.into_iter().collect::<Vec<_>>(),
        [0, 1, 2, 3, 4, 5]
    );
    assert_eq!(rply::verify(&b).unwrap(), ops.len() as u64);
    // The snapshot survives byte for byte and the player keeps it.
    let mut p = Player::open(&b).unwrap();
    p.seek(5).unwrap();
    assert_eq!(
        p.state().entities[&2].snapshot.as_deref(),
        Some(&full_snapshot())
    );
    assert_eq!(p.state().entities[&2].parent, 1);
    // The car and its driver went away together at tick 36.
    p.seek(36).unwrap();
    assert!(!p.state().entities.contains_key(&1) && !p.state().entities.contains_key(&2));
}

/// Strings are 1-based in first-use order; keyframe offsets point at their tick's marker.
#[test]
fn recorder_conventions() {
    let b = every_op_file().unwrap();
    let file = RplyV3::decode(&b).unwrap();
    let mut first_use = Vec::new();
    let mut note = |id: u16| {
        if !first_use.contains(&id) {
            first_use.push(id);
        }
    };
    let mut offset = 0u32;
    let mut offsets = std::collections::BTreeMap::new();
    let mut tick = 0u32;
    for op in &file.ops.ops {
        match &op.body {
            raw::OpBody::OpTick(t) => {
                tick = t.tick;
                offsets.insert(tick, offset);
            }
            raw::OpBody::OpTickNext(_) => {
                tick += 1;
                offsets.insert(tick, offset);
            }
            raw::OpBody::OpSpawn(s) => note(s.descriptor_str),
            raw::OpBody::OpProp(p) => {
                note(p.name_str);
                if let raw::OpPropValue::PropStrRef(s) = &p.value {
                    note(s.str_id);
                }
            }
            raw::OpBody::OpAnimPlay(a) => note(a.anim_id_str),
            raw::OpBody::OpEvent(e) => {
                note(e.name_str);
                note(e.payload_str);
            }
            raw::OpBody::OpCustom(c) => note(c.channel_str),
            _ => {}
        }
        offset += 1 + op.body.encoded_len() as u32;
    }
    let n = file.head.strings.len() as u16;
    assert_eq!(first_use, (1..=n).collect::<Vec<_>>());
    assert_eq!(
        file.head
            .keyframes
            .iter()
            .map(|k| k.tick)
            .collect::<Vec<_>>(),
        [1, 11, 21, 31]
    );
    for k in &file.head.keyframes {
        // Tick 21 falls in the gap (ticks 20-24 write nothing): its entry points at the
        // absolute TICK 25 that follows.
        let want = offsets.range(k.tick..).next().map(|(_, &o)| o).unwrap();
        assert_eq!(k.offset, want, "keyframe at tick {}", k.tick);
    }
    assert_eq!(file.head.tick_count, 40);
    assert_eq!(file.head.place_version, 7);
}

fn err_text(b: &[u8]) -> String {
    match rply::verify(b) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn refusals_name_the_value_field_and_offset() {
    let good = tiny();
    let mut b = good.clone();
    b[4] = 4;
    let e = err_text(&b);
    assert!(
        e.contains("version") && e.contains('4') && e.contains("offset 4"),
        "{e}"
    );
    let e = Player::open(&b).unwrap_err().to_string();
    assert!(
        e.contains("head.version (byte offset 4)") && e.contains("must equal 3"),
        "{e}"
    );

    // Place version.
    match Player::open_for_place(&good, 8) {
        Err(RplyError::PlaceVersion {
            expected: 8,
            found: 7,
        }) => {}
        other => panic!("{other:?}"),
    }
    assert!(Player::open_for_place(&good, 7).is_ok());

    // op_bytes one short / one long.
    for delta in [-1i32, 1] {
        let mut b = good.clone();
        let n = u32::from_le_bytes(b[26..30].try_into().unwrap()) as i32 + delta;
        b[26..30].copy_from_slice(&(n as u32).to_le_bytes());
        let e = Player::open(&b).unwrap_err().to_string();
        assert!(e.contains("op_bytes"), "{e}");
        assert!(rply::verify(&b).is_err());
    }
    // A string count the file cannot hold is refused before allocating.
    let mut b = good.clone();
    b[22..24].copy_from_slice(&60000u16.to_le_bytes());
    let e = Player::open(&b).unwrap_err().to_string();
    assert!(e.contains("head.strings") && e.contains("60000"), "{e}");
    // Unknown opcode 12.
    let mut b = good.clone();
    let at = b.len() - 9;
    b[at] = 12;
    let e = err_text(&b);
    assert!(e.contains("not a known opcode"), "{e}");
    // A keyframe offset that does not point at its tick's marker.
    let mut b = good.clone();
    let kf = 30 + 12 + 4;
    b[kf..kf + 4].copy_from_slice(&8u32.to_le_bytes());
    let e = err_text(&b);
    assert!(
        e.contains("keyframes[0].offset") && e.contains("start at offset 7"),
        "{e}"
    );
    // A string id of 0 (invalid) as the descriptor.
    let mut b = good.clone();
    let spawn = 30 + 12 + 8;
    b[spawn + 3] = 0;
    let e = err_text(&b);
    assert!(e.contains("string id 0"), "{e}");
}

/// The keyframe rules the schema declares (`schema/rply_v3.ksy`, type `keyframe`) are
/// checked by the generated head reader that `Player::open` calls, naming the entry.
#[test]
fn keyframe_rules_come_from_the_schema() {
    let good = tiny();
    let kf = 30 + 12;
    // Tick 5 is past tick_count 4.
    let mut b = good.clone();
    b[kf..kf + 4].copy_from_slice(&5u32.to_le_bytes());
    let e = Player::open(&b).unwrap_err().to_string();
    assert!(
        e.contains("head.keyframes[0].tick (byte offset 42)") && e.contains("value 5"),
        "{e}"
    );
    let e = RplyV3::decode(&b).unwrap_err().to_string();
    assert!(e.contains("head.keyframes[0].tick (byte offset 42)"), "{e}");
    // Offset 43 is past the 42 op bytes.
    let mut b = good.clone();
    b[kf + 4..kf + 8].copy_from_slice(&43u32.to_le_bytes());
    let e = Player::open(&b).unwrap_err().to_string();
    assert!(
        e.contains("head.keyframes[0].offset (byte offset 46)") && e.contains("value 43"),
        "{e}"
    );
    // A keyframe at tick 0 must point at offset 0.
    let mut b = good.clone();
    b[kf..kf + 4].copy_from_slice(&0u32.to_le_bytes());
    let e = Player::open(&b).unwrap_err().to_string();
    assert!(
        e.contains("head.keyframes[0].offset (byte offset 46)"),
        "{e}"
    );
    b[kf + 4..kf + 8].copy_from_slice(&0u32.to_le_bytes());
    Player::open(&b).unwrap();
}

/// The reference player decodes a delta with no base against zero; here it is an error.
#[test]
fn delta_without_base_is_an_error() {
    let mut rec = Recorder::new(RecorderOptions::default());
    let id = rec.spawn("part:Ball", None).unwrap();
    rec.begin_tick().unwrap();
    let mut b = rec.finish().unwrap();
    // The recorder ends the stream with tick 1's marker: append an XFORM_D to tick 1.
    assert_eq!(b.last(), Some(&10));
    let extra = [11u8, id as u8, 1, 1, 0, 0];
    b.extend_from_slice(&extra);
    let n = u32::from_le_bytes(b[26..30].try_into().unwrap()) + extra.len() as u32;
    b[26..30].copy_from_slice(&n.to_le_bytes());
    RplyV3::decode(&b).unwrap();
    let e = err_text(&b);
    assert!(
        e.contains("position delta with no position in the entity's last XFORM"),
        "{e}"
    );
}

#[test]
fn writer_refusals() {
    let mut rec = Recorder::new(RecorderOptions::default());
    assert!(
        PropValue::color3(1.2, 0.0, 0.0).is_err(),
        "colours above 1 wrap in the reference"
    );
    assert!(PropValue::color3(f64::NAN, 0.0, 0.0).is_err());
    let id = rec.spawn("part:Ball", None).unwrap();
    assert!(
        rec.anim_play(id, "a", 0.1, 200.0).is_err(),
        "speed past i16"
    );
    assert!(
        rec.anim_play(id, "a", 3.0, 1.0).is_err(),
        "fade past 2.55 s"
    );
    assert!(rec.custom("c", &vec![0u8; 70_000]).is_err());
    assert!(rec.spawn("x", Some(99)).is_err(), "unknown parent");
    assert!(rec
        .transform(id, DVec3::new(f64::NAN, 0.0, 0.0), DQuat::IDENTITY)
        .is_err());
    assert!(rec
        .transform(id, DVec3::new(1e40, 0.0, 0.0), DQuat::IDENTITY)
        .is_err());
    // String table overflow: unique event payloads exhaust 65,535 ids.
    let mut rec = Recorder::new(RecorderOptions::default());
    let mut err = None;
    for i in 0..70_000u32 {
        if let Err(e) = rec.event("Hit", &serde_json::json!({ "n": i })) {
            err = Some((i, e));
            break;
        }
    }
    let (i, e) = err.expect("overflow");
    assert_eq!(i, 65_534, "1 name + 65,534 payloads fill the table");
    assert!(matches!(e, RplyError::StringTableFull(_)));
    assert!(e.to_string().contains("65,535"), "{e}");
    // The file so far is still valid.
    let b = rec.finish().unwrap();
    assert_eq!(Player::open(&b).unwrap().strings().len(), 65_535);
}

#[test]
fn chunked_storage_round_trip() {
    let b = every_op_file().unwrap();
    let (chunks, meta) = rply::save_chunks("match/42", &b, 4096).unwrap();
    assert_eq!(chunks.len(), b.len().div_ceil(4096));
    assert_eq!(chunks[0].0, "match/42/1");
    assert_eq!(meta["bytes"], b.len());
    assert_eq!(meta["tickCount"], 40);
    let store: std::collections::HashMap<_, _> = chunks.into_iter().collect();
    let back = rply::load_chunks("match/42", &meta, |k| store.get(k).cloned()).unwrap();
    assert_eq!(back, b);
    let mut bad = store.clone();
    bad.get_mut("match/42/2").unwrap()[0] ^= 0x40;
    let e = rply::load_chunks("match/42", &meta, |k| bad.get(k).cloned()).unwrap_err();
    assert!(e.to_string().contains("CRC-32"), "{e}");
    // Default chunk size: 3 MiB.
    assert_eq!(
        statepack_codecs::chunk::DEFAULT_CHUNK_BYTES,
        3 * 1024 * 1024
    );
}

#[test]
fn effect_property_lists() {
    use raw::EffectClass as C;
    assert_eq!(rply::effect_property_name(C::Sound, 9), Some("RollOffMode"));
    assert_eq!(
        rply::effect_property_name(C::Attachment, 1),
        Some("Position")
    );
    assert_eq!(
        rply::effect_property_name(C::ParticleEmitter, 31),
        Some("FlipbookStartRandom")
    );
    assert_eq!(rply::effect_property_name(C::SurfaceLight, 7), Some("Face"));
    assert_eq!(rply::effect_property_name(C::Beam, 0), None);
    assert_eq!(rply::effect_property_name(C::Sparkles, 4), None);
    let lens: Vec<usize> = rply::EFFECT_PROPERTIES.iter().map(|l| l.len()).collect();
    assert_eq!(lens, [2, 9, 31, 19, 16, 6, 6, 3, 5, 7, 7]);
}

/// Masks the reference player would read ambiguously are refused by the raw layer: XFORM
/// with both rotations (2 and 4), XFORM_D with both position sizes (1 and 2) or both
/// rotation kinds (4 and 8), and unknown bits.
#[test]
fn ambiguous_masks_are_refused() {
    let good = tiny();
    // The XFORM of tick 1 starts at op offset 8: opcode, id (2), mask.
    let xform_mask = 30 + 12 + 8 + 8 + 3;
    assert_eq!(good[xform_mask], 5);
    for m in [6u8, 7, 8, 0x85] {
        let mut b = good.clone();
        b[xform_mask] = m;
        let e = RplyV3::decode(&b).unwrap_err().to_string();
        assert!(e.contains("mask") && e.contains("not valid"), "{m}: {e}");
    }
    let delta_mask = 30 + 12 + 8 + 7 + 1 + 18 + 1 + 2;
    assert_eq!(good[delta_mask], 1);
    for m in [3u8, 12, 16] {
        let mut b = good.clone();
        b[delta_mask] = m;
        let e = RplyV3::decode(&b).unwrap_err().to_string();
        assert!(e.contains("mask") && e.contains("not valid"), "{m}: {e}");
    }
}

/// Where the reference implementation wraps a u16 silently, the recorder refuses.
#[test]
fn u16_limits_are_errors() {
    let mut rec = Recorder::new(RecorderOptions::default());
    for _ in 0..65_535 {
        rec.spawn("part:Ball", None).unwrap();
    }
    let e = rec.spawn("part:Ball", None).unwrap_err().to_string();
    assert!(e.contains("entity ids exhausted"), "{e}");
    let mut rec = Recorder::new(RecorderOptions {
        keyframe_every: 1,
        ..RecorderOptions::default()
    });
    for _ in 0..65_536 {
        rec.begin_tick().unwrap();
    }
    let e = rec.finish().unwrap_err().to_string();
    assert!(e.contains("65536 keyframes"), "{e}");
}

/// Half turns keep their codes. A half turn has two codes that read as the same rotation
/// (about an axis and about its opposite, or, for axes off the coordinate axes, codes that
/// round past π), and the quantizer writes the one a decoded rotation came from: a file
/// holding full XFORMs with half-turn codes of each sign (about x, about a diagonal, about
/// a space diagonal, and yaw ±π), decoded (played) and encoded again (recorded from the
/// played transforms), gives the same bytes; so does the raw layer, which keeps the codes
/// read.
#[test]
fn half_turn_codes_of_each_sign_survive_decode_and_encode() {
    use statepack_codecs::rply_xform::{dequantize_axis_angle, dequantize_yaw, yaw_rotation};
    let codes: [[i16; 3]; 6] = [
        [32767, 0, 0],
        [-32767, 0, 0],
        [23170, 23170, 0],
        [-23170, -23170, 0],
        [18918, -18918, 18918],
        [-18918, 18918, -18918],
    ];
    let yaws: [i16; 2] = [32767, -32767];
    let mut rotations: Vec<DQuat> = codes.iter().map(|&c| dequantize_axis_angle(c)).collect();
    rotations.extend(yaws.map(|y| yaw_rotation(dequantize_yaw(y))));
    // Every tick a keyframe: every transform is a full XFORM. Entity i takes rotation
    // i + tick, so each code is written by several entities and after other codes.
    let record = |turns: &dyn Fn(u32, usize) -> (DVec3, DQuat)| {
        let mut rec = Recorder::new(RecorderOptions {
            keyframe_every: 1,
            ..RecorderOptions::default()
        });
        let ids: Vec<u16> = (0..rotations.len())
            .map(|_| rec.spawn("part:Block", None).unwrap())
            .collect();
        for t in 1..=8 {
            rec.begin_tick().unwrap();
            for (i, &id) in ids.iter().enumerate() {
                let (pos, rot) = turns(t, i);
                rec.transform(id, pos, rot).unwrap();
            }
        }
        rec.finish().unwrap()
    };
    let n = rotations.len();
    let original = record(&|t, i| {
        (
            DVec3::new(i as f64, 0.0, 0.0),
            rotations[(i + t as usize) % n],
        )
    });
    // Each rotation is written with the code it was decoded from.
    let file = RplyV3::decode(&original).unwrap();
    let written: Vec<(Option<[i16; 3]>, Option<i16>)> = file
        .ops
        .ops
        .iter()
        .filter_map(|op| match &op.body {
            raw::OpBody::OpXform(x) => Some((x.rot, x.yaw)),
            _ => None,
        })
        .collect();
    assert_eq!(written.len(), 8 * n);
    for (k, w) in written.iter().enumerate() {
        // Ticks 1..=8 in order, entities in order within a tick.
        let r = (k % n + 1 + k / n) % n;
        let want = match r.checked_sub(codes.len()) {
            None => (Some(codes[r]), None),
            Some(y) => (None, Some(yaws[y])),
        };
        assert_eq!(*w, want, "XFORM {k}");
    }
    assert_eq!(file.encode().unwrap(), original, "raw decode then encode");
    // Decode: every tick's played transforms; encode: record them again.
    let mut p = Player::open(&original).unwrap();
    let mut played = Vec::new();
    while p.advance().unwrap() {
        played.push(p.state().clone());
    }
    let again = record(&|t, i| {
        let x = &played[t as usize].entities[&(i as u16 + 1)].xform;
        (x.pos.unwrap(), x.shown_rot.unwrap())
    });
    assert_eq!(again, original, "played then recorded again");
}
