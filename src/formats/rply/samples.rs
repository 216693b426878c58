//! RPLY v3 sample files built in code: every op and payload shape, a snapshot with every
//! block, and a small crowd of walkers. They seed the registry's sweeps, fuzz corpora and
//! oracle runs, and the golden tests.

use super::{PropValue, Recorder, RecorderOptions, RplyError, SNAPSHOT_VERSION};
use crate::generated::rply_v3 as raw;
use glam::{DQuat, DVec3};

fn s16(s: &str) -> raw::Str16 {
    raw::Str16 {
        value: s.to_owned(),
    }
}

fn c3(r: u8, g: u8, b: u8) -> raw::Color3 {
    raw::Color3 { r, g, b }
}

fn v3(x: f32, y: f32, z: f32) -> raw::Vec3 {
    raw::Vec3 { x, y, z }
}

fn prop(prop_index: u8, tag: raw::ValueTag, value: raw::EffectPropValue) -> raw::EffectProp {
    raw::EffectProp {
        prop_index,
        tag,
        value,
    }
}

fn str_v(s: &str) -> raw::EffectPropValue {
    raw::EffectPropValue::Str16(s16(s))
}

fn num(x: f32) -> raw::EffectPropValue {
    raw::EffectPropValue::F32Value(raw::F32Value { value: x })
}

fn boolean(b: bool) -> raw::EffectPropValue {
    raw::EffectPropValue::PropBool(raw::PropBool { value: u8::from(b) })
}

fn effect(
    class: raw::EffectClass,
    parent_index: u8,
    name: &str,
    props: Vec<raw::EffectProp>,
) -> raw::Effect {
    raw::Effect {
        class,
        parent_index,
        name: s16(name),
        props,
    }
}

fn part(kind: raw::PartKind, name: &str) -> raw::Part {
    raw::Part {
        kind,
        union_key_index: None,
        name: s16(name),
        parent_path: s16(""),
        offset: v3(0.0, 0.0, 0.0),
        rot: [0; 3],
        size: v3(2.0, 1.0, 4.0),
        color: c3(163, 162, 165),
        material: 256,
        transparency: 0,
        reflectance: 0,
        shape: 1,
        surfaces: [0; 6],
        mesh: None,
        has_special_mesh: 0,
        special_mesh: None,
        has_surface_appearance: 0,
        surface_appearance: None,
        decals: Vec::new(),
        effects: Vec::new(),
    }
}

/// A version-10 snapshot using every block and tag: a humanoid rig block with clothing,
/// body colours and character meshes; one part of each kind (Part, MeshPart, Wedge,
/// CornerWedge, other, Union); a SpecialMesh, a SurfaceAppearance, a Decal and a Texture;
/// every effect class with every value tag; and one joint of each kind.
pub fn full_snapshot() -> raw::Snapshot {
    use raw::EffectClass as C;
    use raw::ValueTag as T;
    let mut root = part(raw::PartKind::Part, "HumanoidRootPart");
    root.effects = vec![
        effect(
            C::Attachment,
            0,
            "RootAttachment",
            vec![
                prop(1, T::Vector3, raw::EffectPropValue::Vec3(v3(0.0, 1.0, 0.0))),
                prop(
                    2,
                    T::Vector3,
                    raw::EffectPropValue::Vec3(v3(0.0, 90.0, 0.0)),
                ),
            ],
        ),
        effect(
            C::Sound,
            0,
            "Footsteps",
            vec![
                prop(1, T::String, str_v("rbxassetid://9114")),
                prop(2, T::Number, num(0.5)),
                prop(4, T::Bool, boolean(true)),
                prop(9, T::EnumName, str_v("InverseTapered")),
            ],
        ),
        effect(
            C::ParticleEmitter,
            1,
            "Dust",
            vec![
                prop(2, T::Bool, boolean(false)),
                prop(
                    4,
                    T::NumberRange,
                    raw::EffectPropValue::Vec2(raw::Vec2 { x: 0.5, y: 1.5 }),
                ),
                prop(
                    6,
                    T::NumberSequence,
                    raw::EffectPropValue::NumberSequence(raw::NumberSequence {
                        keys: vec![
                            raw::NumberKey {
                                time: 0.0,
                                value: 1.0,
                                envelope: 0.0,
                            },
                            raw::NumberKey {
                                time: 1.0,
                                value: 0.0,
                                envelope: 0.25,
                            },
                        ],
                    }),
                ),
                prop(
                    8,
                    T::ColorSequence,
                    raw::EffectPropValue::ColorSequence(raw::ColorSequence {
                        keys: vec![
                            raw::ColorKey {
                                time: 0.0,
                                color: c3(255, 255, 255),
                            },
                            raw::ColorKey {
                                time: 1.0,
                                color: c3(90, 70, 40),
                            },
                        ],
                    }),
                ),
                prop(
                    25,
                    T::Vector2,
                    raw::EffectPropValue::Vec2(raw::Vec2 { x: 2.0, y: 3.0 }),
                ),
            ],
        ),
        effect(
            C::Beam,
            0,
            "Tether",
            vec![
                prop(1, T::AttachmentRef, str_v("RootAttachment")),
                prop(
                    7,
                    T::ColorSequence,
                    raw::EffectPropValue::ColorSequence(raw::ColorSequence { keys: vec![] }),
                ),
            ],
        ),
        effect(C::Trail, 0, "Trail", vec![prop(15, T::Bool, boolean(true))]),
        effect(
            C::Fire,
            0,
            "Fire",
            vec![prop(
                4,
                T::Color3,
                raw::EffectPropValue::Color3(c3(236, 139, 70)),
            )],
        ),
        effect(C::Smoke, 0, "Smoke", vec![prop(3, T::Number, num(0.3))]),
        effect(C::Sparkles, 0, "Sparkles", vec![]),
        effect(
            C::PointLight,
            0,
            "Glow",
            vec![prop(4, T::Number, num(12.0))],
        ),
        effect(
            C::SpotLight,
            0,
            "Torch",
            vec![prop(7, T::EnumName, str_v("Front"))],
        ),
        effect(
            C::SurfaceLight,
            0,
            "Panel",
            vec![prop(5, T::Bool, boolean(true))],
        ),
    ];
    let mut mesh = part(raw::PartKind::MeshPart, "Head");
    mesh.parent_path = s16("Accessory#2/Handle");
    mesh.offset = v3(0.0, 1.5, 0.0);
    mesh.rot = [0, 16384, 0];
    mesh.mesh = Some(raw::MeshPartInfo {
        mesh_id: s16("rbxassetid://746"),
        texture_id: s16("rbxassetid://747"),
        mesh_size: v3(1.2, 1.2, 1.2),
    });
    mesh.has_surface_appearance = 1;
    mesh.surface_appearance = Some(raw::SurfaceAppearance {
        color_map: s16("rbxassetid://1"),
        normal_map: s16("rbxassetid://2"),
        metalness_map: s16(""),
        roughness_map: s16("rbxassetid://3"),
        alpha_mode: 1,
        color: c3(255, 255, 255),
    });
    let mut wedge = part(raw::PartKind::Wedge, "Ramp");
    wedge.has_special_mesh = 1;
    wedge.special_mesh = Some(raw::SpecialMesh {
        mesh_type: 5,
        mesh_id: s16("rbxassetid://12"),
        texture_id: s16(""),
        scale: v3(1.0, 2.0, 1.0),
        offset: v3(0.0, 0.0, 0.0),
        vertex_color: v3(1.0, 1.0, 1.0),
    });
    wedge.decals = vec![
        raw::Decal {
            is_texture: 0,
            face: 5,
            texture: s16("rbxassetid://100"),
            transparency: 51,
            color: c3(255, 0, 0),
            z_index: 1,
            tiling: None,
        },
        raw::Decal {
            is_texture: 1,
            face: 1,
            texture: s16("rbxassetid://101"),
            transparency: 0,
            color: c3(255, 255, 255),
            z_index: 2,
            tiling: Some([2.0, 2.0, 0.5, 0.0]),
        },
    ];
    let corner = part(raw::PartKind::CornerWedge, "Corner");
    let other = part(raw::PartKind::Other, "Seat");
    let mut union = part(raw::PartKind::Union, "Union");
    union.union_key_index = Some(1);
    let cf = |x: f32| raw::Cframe {
        pos: v3(0.0, x, 0.0),
        rot: [0, 0, 0],
    };
    raw::Snapshot {
        version: SNAPSHOT_VERSION,
        is_model: 1,
        name: s16("Rig"),
        source_key: s16("Workspace.Rig"),
        root_path: s16("HumanoidRootPart"),
        union_keys: vec![s16("Workspace.Rig.Union")],
        mesh_ids: vec![s16("rbxassetid://746")],
        rig: Some(raw::Rig {
            has_humanoid: 1,
            humanoid: Some(raw::Humanoid {
                rig_type: 1,
                shirt: s16("rbxassetid://200"),
                pants: s16("rbxassetid://201"),
                shirt_graphic: s16(""),
                has_body_colors: 1,
                body_colors: Some((0..6u8).map(|i| c3(i * 40, 100, 200)).collect()),
                char_meshes: vec![raw::CharacterMesh {
                    body_part: 1,
                    mesh_id: 27111419.0,
                    base_texture_id: 0.0,
                    overlay_texture_id: 0.0,
                }],
            }),
        }),
        parts: vec![root, mesh, wedge, corner, other, union],
        joints: vec![
            raw::Joint {
                kind: raw::JointKind::Weld,
                name: s16("RampWeld"),
                holder_index: 3,
                body: raw::JointBody::JointCframes(raw::JointCframes {
                    part0_index: 1,
                    part1_index: 3,
                    c0: cf(1.0),
                    c1: cf(0.0),
                }),
            },
            raw::Joint {
                kind: raw::JointKind::Motor6d,
                name: s16("Neck"),
                holder_index: 2,
                body: raw::JointBody::JointCframes(raw::JointCframes {
                    part0_index: 1,
                    part1_index: 2,
                    c0: cf(1.5),
                    c1: cf(-0.5),
                }),
            },
            raw::Joint {
                kind: raw::JointKind::AnimationConstraint,
                name: s16("SeatJoint"),
                holder_index: 5,
                body: raw::JointBody::JointAttachments(raw::JointAttachments {
                    part0_index: 1,
                    attachment0_name: s16("RootAttachment"),
                    part1_index: 5,
                    attachment1_name: s16("SeatAttachment"),
                }),
            },
            raw::Joint {
                kind: raw::JointKind::RigidConstraint,
                name: s16("UnionLock"),
                holder_index: 6,
                body: raw::JointBody::JointAttachments(raw::JointAttachments {
                    part0_index: 4,
                    attachment0_name: s16("A"),
                    part1_index: 6,
                    attachment1_name: s16("B"),
                }),
            },
        ],
    }
}

/// A replay with every op and payload shape: tick-0 spawns before the first marker, TICK_NEXT
/// and absolute TICK after a gap, full XFORMs (yaw-only and tilted), every XFORM_D mask bit,
/// the compact id's wide form (260 entities), every PROP type tag, animation play, speed and
/// stop, events, custom bytes, a snapshot with every block, a child entity despawned with
/// its parent, and keyframes every 10 ticks.
pub fn every_op_file() -> Result<Vec<u8>, RplyError> {
    let mut rec = Recorder::new(RecorderOptions {
        place_version: 7,
        start_unix: 1_764_500_000.0,
        keyframe_every: 10,
        ..RecorderOptions::default()
    });
    let car = rec.spawn("model:Car", None)?;
    let driver = rec.spawn("char:1234", Some(car))?;
    let crate_ = rec.spawn("part:Block", None)?;
    rec.snapshot(driver, &full_snapshot())?;
    let mut crowd = Vec::new();
    for i in 0..257 {
        crowd.push(rec.spawn(
            if i % 2 == 0 {
                "part:Ball"
            } else {
                "part:Block"
            },
            None,
        )?);
    }
    for t in 1..=40u32 {
        rec.begin_tick()?;
        if (20..25).contains(&t) {
            continue; // a gap: the next marker is an absolute TICK
        }
        let ft = f64::from(t);
        if t <= 36 {
            rec.transform(
                car,
                DVec3::new(ft * 0.5, 2.0, -ft),
                DQuat::from_rotation_y(ft * 0.05),
            )?;
            // Tilted driver: axis-angle deltas.
            rec.transform(
                driver,
                DVec3::new(ft * 0.5, 4.0, -ft),
                DQuat::from_rotation_x(0.3 + ft * 0.02),
            )?;
        }
        // A fast mover (i16 deltas) and one that jumps (full XFORM).
        let x = if t == 30 { 5000.0 } else { ft * 5.0 };
        rec.transform(crate_, DVec3::new(x, 1.0, 0.0), DQuat::IDENTITY)?;
        for (i, &id) in crowd.iter().enumerate() {
            if t % 3 == 0 || i % 50 == 0 {
                rec.transform(
                    id,
                    DVec3::new(i as f64 * 3.0, 1.0, ft * 0.1),
                    DQuat::from_rotation_y(ft * 0.1),
                )?;
            }
        }
        match t {
            2 => {
                rec.prop(car, "Body/Exhaust/Enabled", PropValue::Bool(true))?;
                rec.prop(car, "@Fuel", PropValue::Number(0.75))?;
                rec.prop(car, "Name", PropValue::String("Sedan".into()))?;
                rec.prop(car, "Body/Paint/Color", PropValue::color3(1.0, 0.5, 0.0)?)?;
                rec.prop(car, "Body/Size", PropValue::Vector3([4.0, 2.0, 8.0]))?;
                rec.prop(
                    car,
                    "Body/Material",
                    PropValue::Enum("SmoothPlastic".into()),
                )?;
                rec.prop(car, "Scale", PropValue::Number(1.25))?;
            }
            3 => {
                let h = rec.anim_play(driver, "rbxassetid://507777826", 0.1, 1.0)?;
                rec.anim_speed(driver, h, 1.5)?;
                rec.event("Horn", &serde_json::json!({ "car": car, "loud": true }))?;
                rec.custom("telemetry", &[1, 2, 3, 4, 5])?;
            }
            9 => {
                rec.anim_play(driver, "rbxassetid://507777827", 0.2, -0.5)?;
                rec.anim_stop(driver, 1, 0.1)?;
                rec.prop(car, "Body/Exhaust/Enabled", PropValue::Bool(false))?;
            }
            33 => rec.event("Crash", &serde_json::json!({ "at": [1.5, 2, 3] }))?,
            36 => rec.despawn(car)?,
            _ => {}
        }
    }
    rec.finish()
}

/// Sample files: every op shape, and a small crowd (4 walkers × 200 ticks of the study walk,
/// generated in code, keyframes every 60 ticks).
pub fn sample_files() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    if let Ok(b) = every_op_file() {
        out.push(("every-op".to_owned(), b));
    }
    let clip = statepack_codecs::motion::walk::study_walk_clip();
    let opts = crate::sim::rply_crowd::CrowdOptions {
        characters: 4,
        ticks: 200,
        keyframe_every: 60,
        ..crate::sim::rply_crowd::CrowdOptions::default()
    };
    if let Ok(c) = crate::sim::rply_crowd::record_crowd(&clip, &opts) {
        out.push(("study-walk-crowd".to_owned(), c.bytes));
    }
    out
}
