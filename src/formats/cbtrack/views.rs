//! The column sets of `schema/cbtrack_v1.ksy` as views that borrow their columns: from a
//! chunk read in place ([`ColumnChunk::in_place`], nothing copied) or from the generated
//! column sets ([`raw::UnitsColumns`] and the others). The readers of this module take views,
//! so a chunk's values are held once, in the inflated chunk. Each view lists the same column
//! ids, types and names as its generated set (pinned by a test).

use super::*;
#[cfg(test)]
use statepack_runtime::cbtk_columns::ColumnValue;
use std::borrow::Cow;

/// A view of a column set: one borrowed (or, where the target cannot borrow, copied) list
/// per column, named as in the generated set; a missing column is an empty list.
macro_rules! column_view {
    ($(#[$doc:meta])* $view:ident of $raw:ident, $set:literal { $($field:ident: $t:ty = $id:literal,)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Default)]
        pub(crate) struct $view<'a> {
            $(pub(crate) $field: Cow<'a, [$t]>,)*
        }

        #[allow(dead_code)]
        impl<'a> $view<'a> {
            /// Column id, type code and name of every column, as the generated set lists them.
            #[cfg(test)]
            pub(crate) const COLUMNS: &'static [(u16, u8, &'static str)] =
                &[$(($id, <$t as ColumnValue>::CODE as u8, stringify!($field)),)*];

            /// The set read out of a checked chunk, each column where it lies.
            ///
            /// Errors: a column of another known type than the set declares, named by set
            /// and column (as the generated set's `from_chunk` names it).
            pub(crate) fn from_chunk(c: &ColumnChunk<'a>) -> Result<Self, DecodeError> {
                Ok(Self {
                    $($field: c.column_ref($id, concat!($set, ".", stringify!($field)))?,)*
                })
            }

            /// A view of the generated set's lists.
            pub(crate) fn of(c: &'a raw::$raw) -> Self {
                Self {
                    $($field: Cow::Borrowed(&c.$field[..]),)*
                }
            }
        }
    };
}

column_view!(
    /// The column set `info` ([`raw::InfoColumns`]) read in place.
    InfoView of InfoColumns, "info" {
        text_lens: u16 = 160,
        text_bytes: u8 = 161,
        unit_def_lens: u16 = 162,
        unit_def_bytes: u8 = 163,
        weapon_def_lens: u16 = 164,
        weapon_def_bytes: u8 = 165,
        feature_def_lens: u16 = 166,
        feature_def_bytes: u8 = 167,
        posed_defs: u16 = 168,
        posed_counts: u16 = 169,
        piece_lens: u16 = 170,
        piece_bytes: u8 = 171,
        team_ids: u8 = 172,
        team_allies: u8 = 173,
        team_flags: u8 = 174,
        team_colours: u8 = 175,
        side_lens: u16 = 176,
        side_bytes: u8 = 177,
        leader_lens: u16 = 178,
        leader_bytes: u8 = 179,
        map_size: u32 = 180,
        footprint_x: u16 = 181,
        footprint_z: u16 = 182,
        team_param_lens: u16 = 183,
        team_param_bytes: u8 = 184,
        game_param_lens: u16 = 185,
        game_param_bytes: u8 = 186,
    }
);

column_view!(
    /// The column set `features` ([`raw::FeaturesColumns`]) read in place.
    FeaturesView of FeaturesColumns, "features" {
        feature_id: u16 = 128,
        def: u16 = 129,
        team: u8 = 130,
        flags: u8 = 131,
        first_frame: u32 = 132,
        last_frame: u32 = 133,
        x: i32 = 134,
        y: i32 = 135,
        z: i32 = 136,
        rot_dropped: u8 = 137,
        rot_a: u16 = 138,
        rot_b: u16 = 139,
        rot_c: u16 = 140,
    }
);

column_view!(
    /// The column set `units` ([`raw::UnitsColumns`]) read in place.
    UnitsView of UnitsColumns, "units" {
        unit_id: u16 = 1,
        serial: u32 = 2,
        def: u16 = 3,
        team: u8 = 4,
        flags: u8 = 5,
        first: u16 = 6,
        last: u16 = 7,
        transform_count: u16 = 8,
        status_count: u16 = 9,
        target_track_count: u8 = 10,
        pose_track_count: u16 = 11,
        queue_count: u16 = 12,
    }
);

column_view!(
    /// The column set `transform_keys` ([`raw::TransformKeysColumns`]) read in place.
    TransformKeysView of TransformKeysColumns, "transform_keys" {
        time: u16 = 16,
        x: i16 = 17,
        y: i16 = 18,
        z: i16 = 19,
        x_wide: i32 = 20,
        y_wide: i32 = 21,
        z_wide: i32 = 22,
        rot_dropped: u8 = 23,
        rot_a: u16 = 24,
        rot_b: u16 = 25,
        rot_c: u16 = 26,
    }
);

column_view!(
    /// The column set `status_keys` ([`raw::StatusKeysColumns`]) read in place.
    StatusKeysView of StatusKeysColumns, "status_keys" {
        time: u16 = 32,
        health: u16 = 33,
        build: u16 = 34,
        flags: u8 = 35,
    }
);

column_view!(
    /// The column set `target_tracks` ([`raw::TargetTracksColumns`]) read in place.
    TargetTracksView of TargetTracksColumns, "target_tracks" {
        weapon: u8 = 40,
        key_count: u16 = 41,
        time: u16 = 42,
        kind: u8 = 43,
        reference: u32 = 44,
        power: u8 = 45,
        x: i32 = 46,
        y: i32 = 47,
        z: i32 = 48,
    }
);

column_view!(
    /// The column set `pose_tracks` ([`raw::PoseTracksColumns`]) read in place.
    PoseTracksView of PoseTracksColumns, "pose_tracks" {
        piece: u16 = 56,
        key_count: u16 = 57,
        time: u16 = 58,
        ax: i16 = 59,
        ay: i16 = 60,
        az: i16 = 61,
        ax_wide: i32 = 62,
        ay_wide: i32 = 63,
        az_wide: i32 = 64,
        ox: i16 = 65,
        oy: i16 = 66,
        oz: i16 = 67,
        ox_wide: i32 = 68,
        oy_wide: i32 = 69,
        oz_wide: i32 = 70,
    }
);

column_view!(
    /// The column set `build_queue` ([`raw::BuildQueueColumns`]) read in place.
    BuildQueueView of BuildQueueColumns, "build_queue" {
        time: u16 = 72,
        item_count: u8 = 73,
        def: u16 = 74,
        x: i32 = 75,
        z: i32 = 76,
        facing: u8 = 77,
    }
);

column_view!(
    /// The column set `projectiles` ([`raw::ProjectilesColumns`]) read in place.
    ProjectilesView of ProjectilesColumns, "projectiles" {
        serial: u32 = 80,
        weapon: u16 = 81,
        team: u8 = 82,
        flags: u8 = 83,
        owner: u16 = 84,
        first: u16 = 85,
        last: u16 = 86,
        key_count: u16 = 87,
        time: u16 = 88,
        x: i16 = 89,
        y: i16 = 90,
        z: i16 = 91,
        x_wide: i32 = 92,
        y_wide: i32 = 93,
        z_wide: i32 = 94,
        vx: i16 = 95,
        vy: i16 = 96,
        vz: i16 = 97,
        vx_wide: i32 = 98,
        vy_wide: i32 = 99,
        vz_wide: i32 = 100,
    }
);

column_view!(
    /// The column set `team_numbers` ([`raw::TeamNumbersColumns`]) read in place.
    TeamNumbersView of TeamNumbersColumns, "team_numbers" {
        team: u8 = 104,
        code: u16 = 105,
        key_count: u16 = 106,
        time: u16 = 107,
        value: f32 = 108,
    }
);

column_view!(
    /// The column set `terrain_rows` ([`raw::TerrainRowsColumns`]) read in place.
    TerrainRowsView of TerrainRowsColumns, "terrain_rows" {
        time: u16 = 112,
        x: u16 = 113,
        z: u16 = 114,
        before: i32 = 115,
        change: i32 = 116,
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Every view lists the columns of its generated set: same ids, types and names.
    #[test]
    fn views_match_the_generated_sets() {
        let pairs: [(&[(u16, u8, &str)], &[(u16, u8, &str)]); 11] = [
            (InfoView::COLUMNS, raw::InfoColumns::COLUMNS),
            (FeaturesView::COLUMNS, raw::FeaturesColumns::COLUMNS),
            (UnitsView::COLUMNS, raw::UnitsColumns::COLUMNS),
            (
                TransformKeysView::COLUMNS,
                raw::TransformKeysColumns::COLUMNS,
            ),
            (StatusKeysView::COLUMNS, raw::StatusKeysColumns::COLUMNS),
            (TargetTracksView::COLUMNS, raw::TargetTracksColumns::COLUMNS),
            (PoseTracksView::COLUMNS, raw::PoseTracksColumns::COLUMNS),
            (BuildQueueView::COLUMNS, raw::BuildQueueColumns::COLUMNS),
            (ProjectilesView::COLUMNS, raw::ProjectilesColumns::COLUMNS),
            (TeamNumbersView::COLUMNS, raw::TeamNumbersColumns::COLUMNS),
            (TerrainRowsView::COLUMNS, raw::TerrainRowsColumns::COLUMNS),
        ];
        for (view, generated) in pairs {
            assert_eq!(view, generated);
        }
    }
}
