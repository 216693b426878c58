//! Rig snapshots built in code (parts and Motor6D joints).

use super::*;
use glam::{DQuat, DVec3};

/// Builds version-10 snapshots of rigs: parts (each with its offset from the root, size,
/// colour), Motor6D joints. Everything else (meshes, effects, decals) is left empty.
#[derive(Debug, Clone)]
pub struct RigBuilder {
    snap: raw::Snapshot,
}

fn s16(s: &str) -> raw::Str16 {
    raw::Str16 {
        value: s.to_owned(),
    }
}

fn v3(v: DVec3) -> raw::Vec3 {
    raw::Vec3 {
        x: v.x as f32,
        y: v.y as f32,
        z: v.z as f32,
    }
}

impl RigBuilder {
    /// A model snapshot named `name` (source key `Workspace.<name>`) with a humanoid rig
    /// block (R15, no clothing, body colours all `color`).
    pub fn new(name: &str, root_name: &str, color: [u8; 3]) -> Self {
        let c = raw::Color3 {
            r: color[0],
            g: color[1],
            b: color[2],
        };
        Self {
            snap: raw::Snapshot {
                version: SNAPSHOT_VERSION,
                is_model: 1,
                name: s16(name),
                source_key: s16(&format!("Workspace.{name}")),
                root_path: s16(root_name),
                union_keys: Vec::new(),
                mesh_ids: Vec::new(),
                rig: Some(raw::Rig {
                    has_humanoid: 1,
                    humanoid: Some(raw::Humanoid {
                        rig_type: 1,
                        shirt: s16(""),
                        pants: s16(""),
                        shirt_graphic: s16(""),
                        has_body_colors: 1,
                        body_colors: Some(vec![c; 6]),
                        char_meshes: Vec::new(),
                    }),
                }),
                parts: Vec::new(),
                joints: Vec::new(),
            },
        }
    }

    /// Adds a plain part (offset from the root in studs, rotation from the root, size in
    /// studs); returns its 1-based index. The first part added is the root.
    pub fn part(
        &mut self,
        name: &str,
        offset: DVec3,
        rot: DQuat,
        size: DVec3,
        color: [u8; 3],
    ) -> u16 {
        self.snap.parts.push(raw::Part {
            kind: raw::PartKind::Part,
            union_key_index: None,
            name: s16(name),
            parent_path: s16(""),
            offset: v3(offset),
            rot: statepack_codecs::rply_xform::quantize_axis_angle(rot),
            size: v3(size),
            color: raw::Color3 {
                r: color[0],
                g: color[1],
                b: color[2],
            },
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
        });
        self.snap.parts.len() as u16
    }

    /// Adds a Motor6D held by part1 joining parts `part0` and `part1` (1-based) with the
    /// given C0 and C1 (position in studs, rotation).
    pub fn motor(
        &mut self,
        name: &str,
        part0: u16,
        part1: u16,
        c0: (DVec3, DQuat),
        c1: (DVec3, DQuat),
    ) {
        let cf = |(p, q): (DVec3, DQuat)| raw::Cframe {
            pos: v3(p),
            rot: statepack_codecs::rply_xform::quantize_axis_angle(q),
        };
        self.snap.joints.push(raw::Joint {
            kind: raw::JointKind::Motor6d,
            name: s16(name),
            holder_index: part1,
            body: raw::JointBody::JointCframes(raw::JointCframes {
                part0_index: part0,
                part1_index: part1,
                c0: cf(c0),
                c1: cf(c1),
            }),
        });
    }

    /// The snapshot.
    pub fn build(self) -> raw::Snapshot {
        self.snap
    }
}
