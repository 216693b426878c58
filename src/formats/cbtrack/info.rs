//! Info and features chunks: names, teams, the map, the features of the match.

use super::*;

/// The info chunk: names, teams and the map.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Info {
    /// Track text: engine version, game, map, writing program.
    pub texts: Vec<String>,
    /// Unit definition names.
    pub unit_defs: Vec<String>,
    /// Weapon definition names.
    pub weapon_defs: Vec<String>,
    /// Feature definition names.
    pub feature_defs: Vec<String>,
    /// For each unit definition with posed pieces: its index and its posed piece names.
    pub posed: Vec<(u16, Vec<String>)>,
    /// Teams.
    pub teams: Vec<TeamInfo>,
    /// Map size along x and z in elmos (empty when not given).
    pub map_size: Vec<u32>,
    /// Footprint across each unit definition, elmos (empty before recorder version 3).
    pub footprint_x: Vec<u16>,
    /// Footprint along each unit definition's facing, elmos.
    pub footprint_z: Vec<u16>,
    /// Team rules parameter names.
    pub team_params: Vec<String>,
    /// Game rules parameter names.
    pub game_params: Vec<String>,
}

/// The most teams an info chunk may list: team ids are u8 (column 172), so 256.
pub const MAX_TEAMS: usize = 256;

/// One team of the info chunk.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TeamInfo {
    /// Team id.
    pub id: u8,
    /// Ally team.
    pub ally: u8,
    /// Flags; bit 0 set for an AI team.
    pub flags: u8,
    /// Red, green, blue.
    pub colour: [u8; 3],
    /// Side name.
    pub side: String,
    /// Leader name.
    pub leader: String,
}

fn strings(lens: &[u16], bytes: &[u8], what: &'static str) -> Result<Vec<String>, DecodeError> {
    // One string per length value: the lengths are a column already in memory (2 bytes
    // each), so the list is sized by them once rather than grown.
    let mut out = Vec::with_capacity(lens.len());
    each_string(lens, bytes, what, |s| out.push(s.to_owned()))?;
    Ok(out)
}

/// The first `n` strings of a length column and its bytes column that `check_view` has
/// checked (lossy where it has not, so never a panic on a column it passed).
fn first_strings(lens: &[u16], bytes: &[u8], n: usize) -> Vec<String> {
    let mut out = Vec::with_capacity(n.min(lens.len()));
    let mut at = 0usize;
    for &l in lens.iter().take(n) {
        let end = at + l as usize;
        out.push(String::from_utf8_lossy(&bytes[at..end]).into_owned());
        at = end;
    }
    out
}

/// Hands list `l` to `f`: its length, then each of its strings with its index.
fn visit_list(
    f: &mut impl FnMut(InfoPart<'_>),
    (lens, bytes, what): (&[u16], &[u8], &'static str),
    l: InfoList,
) -> Result<(), DecodeError> {
    f(InfoPart::Start(l, lens.len()));
    let mut i = 0;
    each_string(lens, bytes, what, |s| {
        f(InfoPart::Name(l, i, s));
        i += 1;
    })
}

/// Checks each string of a length column and its bytes column, and hands it to `f`.
fn each_string<'b>(
    lens: &[u16],
    bytes: &'b [u8],
    what: &'static str,
    mut f: impl FnMut(&'b str),
) -> Result<(), DecodeError> {
    let mut at = 0usize;
    for (i, &l) in lens.iter().enumerate() {
        let end = at + l as usize;
        let Some(b) = bytes.get(at..end) else {
            return Err(semantic(
                fpath(&[PathSeg::Field(what), PathSeg::Index(i)]),
                0,
                format!(
                    "string {i} needs bytes {at}..{end}, the bytes column has {}",
                    bytes.len()
                ),
            ));
        };
        f(std::str::from_utf8(b).map_err(|e| {
            semantic(
                fpath(&[PathSeg::Field(what), PathSeg::Index(i)]),
                0,
                format!("not UTF-8: {e}"),
            )
        })?);
        at = end;
    }
    Ok(())
}

/// The string lists of the info chunk, as [`InfoPart::Name`] names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum InfoList {
    /// Track texts ([`Info::texts`]).
    Texts,
    /// Unit definition names.
    UnitDefs,
    /// Weapon definition names.
    WeaponDefs,
    /// Feature definition names.
    FeatureDefs,
    /// Posed unit definitions ([`InfoPart::Posed`] entries; only in [`InfoPart::Start`]).
    Posed,
    /// The posed piece names of the [`InfoPart::Posed`] entry just before.
    PieceNames,
    /// Teams ([`InfoPart::Team`] entries; only in [`InfoPart::Start`]).
    Teams,
    /// Team rules parameter names.
    TeamParams,
    /// Game rules parameter names.
    GameParams,
}

/// One item of the info chunk as [`Track::visit_info`] hands it over, borrowed for the call,
/// in the order of [`Info`]'s fields.
#[derive(Debug, Clone, Copy)]
pub enum InfoPart<'a> {
    /// The start of a list, with its length: before the strings of each string list (but
    /// the piece names, whose number [`InfoPart::Posed`] gives), the posed entries and the
    /// teams.
    Start(InfoList, usize),
    /// One string of a list: the list, its index there (from 0 in each list, and in each
    /// posed entry's piece names) and the text.
    Name(InfoList, usize, &'a str),
    /// A unit definition with posed pieces: its index among the posed entries, the unit
    /// definition and the number of its piece names, which follow as
    /// [`InfoList::PieceNames`] names.
    Posed {
        /// Index among the posed entries.
        entry: usize,
        /// Unit definition.
        def: u16,
        /// Number of piece names that follow.
        pieces: usize,
    },
    /// One team.
    Team(&'a TeamInfo),
    /// Map size along x and z in elmos (empty when not given).
    MapSize(&'a [u32]),
    /// Footprints across and along each unit definition, elmos.
    Footprints {
        /// Across.
        x: &'a [u16],
        /// Along the facing.
        z: &'a [u16],
    },
}

/// The full lengths of the lists of an [`Info`] read cut ([`Track::info_first`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InfoLens {
    /// Track texts.
    pub texts: usize,
    /// Unit definition names.
    pub unit_defs: usize,
    /// Weapon definition names.
    pub weapon_defs: usize,
    /// Feature definition names.
    pub feature_defs: usize,
    /// Posed unit definitions.
    pub posed: usize,
    /// Piece names of each posed entry kept.
    pub posed_names: Vec<usize>,
    /// Map size values.
    pub map_size: usize,
    /// Footprint x values.
    pub footprint_x: usize,
    /// Footprint z values.
    pub footprint_z: usize,
    /// Team parameters.
    pub team_params: usize,
    /// Game parameters.
    pub game_params: usize,
}

fn posed_past(i: usize) -> DecodeError {
    semantic(
        fpath(&[PathSeg::Field("posed_counts"), PathSeg::Index(i)]),
        0,
        "posed piece counts run past the piece names",
    )
}

/// The teams of an info view, one per team id: a missing ally, flags or colour component
/// is 0, a missing side or leader name empty.
fn team_infos(c: &InfoView, sides: &[String], leaders: &[String]) -> Vec<TeamInfo> {
    c.team_ids
        .iter()
        .enumerate()
        .map(|(i, &id)| TeamInfo {
            id,
            ally: c.team_allies.get(i).copied().unwrap_or(0),
            flags: c.team_flags.get(i).copied().unwrap_or(0),
            colour: [0, 1, 2].map(|j| c.team_colours.get(3 * i + j).copied().unwrap_or(0)),
            side: sides.get(i).cloned().unwrap_or_default(),
            leader: leaders.get(i).cloned().unwrap_or_default(),
        })
        .collect()
}

fn check_teams(n: usize) -> Result<(), DecodeError> {
    if n > MAX_TEAMS {
        return Err(semantic(
            fpath(&[PathSeg::Field("team_ids")]),
            0,
            format!("{n} teams; team ids are u8, so a track has at most {MAX_TEAMS}"),
        ));
    }
    Ok(())
}

fn put_strings(v: &[String]) -> Result<(Vec<u16>, Vec<u8>), EncodeError> {
    let mut lens = Vec::with_capacity(v.len());
    let mut bytes = Vec::new();
    for s in v {
        lens.push(
            u16::try_from(s.len())
                .map_err(|_| enc(format!("string of {} bytes does not fit u16", s.len())))?,
        );
        bytes.extend_from_slice(s.as_bytes());
    }
    Ok((lens, bytes))
}

impl Info {
    /// Reads the info chunk's column set.
    ///
    /// Errors: more than [`MAX_TEAMS`] teams, a string list whose lengths run past its
    /// bytes, text that is not UTF-8, or posed piece counts that run past the names.
    pub fn from_columns(c: &raw::InfoColumns) -> Result<Self, DecodeError> {
        Self::from_view(&InfoView::of(c))
    }

    /// Checks the info chunk's column set as [`Info::from_columns`] reads it, with the same
    /// errors, keeping no string.
    pub(crate) fn check_view(c: &InfoView) -> Result<(), DecodeError> {
        each_string(&c.piece_lens, &c.piece_bytes, "piece_names", drop)?;
        let pieces = c.piece_lens.len();
        let mut at = 0usize;
        for i in 0..c.posed_defs.len() {
            let n = c.posed_counts.get(i).copied().unwrap_or(0) as usize;
            if at + n > pieces {
                return Err(posed_past(i));
            }
            at += n;
        }
        check_teams(c.team_ids.len())?;
        for (lens, bytes, what) in [
            (&c.side_lens, &c.side_bytes, "side_names"),
            (&c.leader_lens, &c.leader_bytes, "leader_names"),
            (&c.text_lens, &c.text_bytes, "texts"),
            (&c.unit_def_lens, &c.unit_def_bytes, "unit_defs"),
            (&c.weapon_def_lens, &c.weapon_def_bytes, "weapon_defs"),
            (&c.feature_def_lens, &c.feature_def_bytes, "feature_defs"),
            (&c.team_param_lens, &c.team_param_bytes, "team_params"),
            (&c.game_param_lens, &c.game_param_bytes, "game_params"),
        ] {
            each_string(lens, bytes, what, drop)?;
        }
        Ok(())
    }

    /// The info chunk's lists as far as a listing shows them: every column checked as
    /// [`Info::from_columns`] checks it, then each list cut to its first `max` entries (all
    /// when `max` is 0; a posed entry's piece names too), with the full lengths beside.
    pub(crate) fn from_view_first(
        c: &InfoView,
        max: usize,
    ) -> Result<(Self, InfoLens), DecodeError> {
        Self::check_view(c)?;
        let cut = |n: usize| if max == 0 { n } else { n.min(max) };
        let list = |lens: &[u16], bytes: &[u8]| first_strings(lens, bytes, cut(lens.len()));
        // The piece names of the posed entries shown, each cut: the names are read in order
        // of the entries, so one pass over the lengths finds them.
        let mut posed = Vec::new();
        let mut posed_names = Vec::new();
        let (mut piece, mut byte) = (0usize, 0usize);
        for i in 0..cut(c.posed_defs.len()) {
            let n = c.posed_counts.get(i).copied().unwrap_or(0) as usize;
            let mut names = Vec::with_capacity(cut(n));
            for k in 0..n {
                let l = c.piece_lens[piece] as usize;
                if k < cut(n) {
                    names
                        .push(String::from_utf8_lossy(&c.piece_bytes[byte..byte + l]).into_owned());
                }
                piece += 1;
                byte += l;
            }
            posed.push((c.posed_defs[i], names));
            posed_names.push(n);
        }
        let teams = c.team_ids.len();
        let sides = first_strings(&c.side_lens, &c.side_bytes, c.side_lens.len().min(teams));
        let leaders = first_strings(
            &c.leader_lens,
            &c.leader_bytes,
            c.leader_lens.len().min(teams),
        );
        let lens = InfoLens {
            texts: c.text_lens.len(),
            unit_defs: c.unit_def_lens.len(),
            weapon_defs: c.weapon_def_lens.len(),
            feature_defs: c.feature_def_lens.len(),
            posed: c.posed_defs.len(),
            posed_names,
            map_size: c.map_size.len(),
            footprint_x: c.footprint_x.len(),
            footprint_z: c.footprint_z.len(),
            team_params: c.team_param_lens.len(),
            game_params: c.game_param_lens.len(),
        };
        let info = Self {
            texts: list(&c.text_lens, &c.text_bytes),
            unit_defs: list(&c.unit_def_lens, &c.unit_def_bytes),
            weapon_defs: list(&c.weapon_def_lens, &c.weapon_def_bytes),
            feature_defs: list(&c.feature_def_lens, &c.feature_def_bytes),
            posed,
            teams: team_infos(c, &sides, &leaders),
            map_size: c.map_size[..cut(c.map_size.len())].to_vec(),
            footprint_x: c.footprint_x[..cut(c.footprint_x.len())].to_vec(),
            footprint_z: c.footprint_z[..cut(c.footprint_z.len())].to_vec(),
            team_params: list(&c.team_param_lens, &c.team_param_bytes),
            game_params: list(&c.game_param_lens, &c.game_param_bytes),
        };
        Ok((info, lens))
    }

    /// Checks a view as [`Info::from_columns`] does, then hands each item to `f` in the
    /// order of [`Info`]'s fields, keeping none (the teams' side and leader names, at most
    /// [`MAX_TEAMS`] of each, are found first).
    pub(crate) fn visit_view(
        c: &InfoView,
        mut f: impl FnMut(InfoPart<'_>),
    ) -> Result<(), DecodeError> {
        Self::check_view(c)?;
        visit_list(
            &mut f,
            (&c.text_lens, &c.text_bytes, "texts"),
            InfoList::Texts,
        )?;
        visit_list(
            &mut f,
            (&c.unit_def_lens, &c.unit_def_bytes, "unit_defs"),
            InfoList::UnitDefs,
        )?;
        visit_list(
            &mut f,
            (&c.weapon_def_lens, &c.weapon_def_bytes, "weapon_defs"),
            InfoList::WeaponDefs,
        )?;
        visit_list(
            &mut f,
            (&c.feature_def_lens, &c.feature_def_bytes, "feature_defs"),
            InfoList::FeatureDefs,
        )?;
        f(InfoPart::Start(InfoList::Posed, c.posed_defs.len()));
        let (mut piece, mut byte) = (0usize, 0usize);
        for (i, &def) in c.posed_defs.iter().enumerate() {
            let n = c.posed_counts.get(i).copied().unwrap_or(0) as usize;
            f(InfoPart::Posed {
                entry: i,
                def,
                pieces: n,
            });
            for k in 0..n {
                let l = c.piece_lens[piece] as usize;
                let b = &c.piece_bytes[byte..byte + l];
                // Checked as UTF-8 by `check_view`.
                f(InfoPart::Name(
                    InfoList::PieceNames,
                    k,
                    std::str::from_utf8(b).unwrap_or_default(),
                ));
                piece += 1;
                byte += l;
            }
        }
        let teams = c.team_ids.len();
        let sides = first_strings(&c.side_lens, &c.side_bytes, teams);
        let leaders = first_strings(&c.leader_lens, &c.leader_bytes, teams);
        f(InfoPart::Start(InfoList::Teams, teams));
        for t in team_infos(c, &sides, &leaders) {
            f(InfoPart::Team(&t));
        }
        f(InfoPart::MapSize(&c.map_size));
        f(InfoPart::Footprints {
            x: &c.footprint_x,
            z: &c.footprint_z,
        });
        visit_list(
            &mut f,
            (&c.team_param_lens, &c.team_param_bytes, "team_params"),
            InfoList::TeamParams,
        )?;
        visit_list(
            &mut f,
            (&c.game_param_lens, &c.game_param_bytes, "game_params"),
            InfoList::GameParams,
        )?;
        Ok(())
    }

    /// [`Info::from_columns`] from a view.
    pub(crate) fn from_view(c: &InfoView) -> Result<Self, DecodeError> {
        let pieces = strings(&c.piece_lens, &c.piece_bytes, "piece_names")?;
        let mut posed = Vec::new();
        let mut at = 0usize;
        for (i, &d) in c.posed_defs.iter().enumerate() {
            let n = c.posed_counts.get(i).copied().unwrap_or(0) as usize;
            let Some(names) = pieces.get(at..at + n) else {
                return Err(posed_past(i));
            };
            posed.push((d, names.to_vec()));
            at += n;
        }
        check_teams(c.team_ids.len())?;
        let sides = strings(&c.side_lens, &c.side_bytes, "side_names")?;
        let leaders = strings(&c.leader_lens, &c.leader_bytes, "leader_names")?;
        let teams = team_infos(c, &sides, &leaders);
        Ok(Self {
            texts: strings(&c.text_lens, &c.text_bytes, "texts")?,
            unit_defs: strings(&c.unit_def_lens, &c.unit_def_bytes, "unit_defs")?,
            weapon_defs: strings(&c.weapon_def_lens, &c.weapon_def_bytes, "weapon_defs")?,
            feature_defs: strings(&c.feature_def_lens, &c.feature_def_bytes, "feature_defs")?,
            posed,
            teams,
            map_size: c.map_size.to_vec(),
            footprint_x: c.footprint_x.to_vec(),
            footprint_z: c.footprint_z.to_vec(),
            team_params: strings(&c.team_param_lens, &c.team_param_bytes, "team_params")?,
            game_params: strings(&c.game_param_lens, &c.game_param_bytes, "game_params")?,
        })
    }

    /// The info chunk's column set.
    ///
    /// Errors: more than [`MAX_TEAMS`] teams, a string longer than 65,535 bytes, a count above
    /// 65,535 or a value above 16,777,215.
    pub fn to_columns(&self) -> Result<raw::InfoColumns, EncodeError> {
        if self.teams.len() > MAX_TEAMS {
            return Err(enc(format!(
                "{} teams; team ids are u8, so a track has at most {MAX_TEAMS}",
                self.teams.len()
            )));
        }
        let mut c = raw::InfoColumns::default();
        (c.text_lens, c.text_bytes) = put_strings(&self.texts)?;
        (c.unit_def_lens, c.unit_def_bytes) = put_strings(&self.unit_defs)?;
        (c.weapon_def_lens, c.weapon_def_bytes) = put_strings(&self.weapon_defs)?;
        (c.feature_def_lens, c.feature_def_bytes) = put_strings(&self.feature_defs)?;
        let mut pieces = Vec::new();
        for (d, names) in &self.posed {
            c.posed_defs.push(*d);
            c.posed_counts.push(
                u16::try_from(names.len()).map_err(|_| enc("more than 65,535 posed pieces"))?,
            );
            pieces.extend(names.iter().cloned());
        }
        (c.piece_lens, c.piece_bytes) = put_strings(&pieces)?;
        let sides: Vec<String> = self.teams.iter().map(|t| t.side.clone()).collect();
        let leaders: Vec<String> = self.teams.iter().map(|t| t.leader.clone()).collect();
        for t in &self.teams {
            c.team_ids.push(t.id);
            c.team_allies.push(t.ally);
            c.team_flags.push(t.flags);
            c.team_colours.extend_from_slice(&t.colour);
        }
        (c.side_lens, c.side_bytes) = put_strings(&sides)?;
        (c.leader_lens, c.leader_bytes) = put_strings(&leaders)?;
        if let Some(v) = self.map_size.iter().find(|&&v| v > LUA_MAX) {
            return Err(enc(format!("map size {v} is above 16,777,215")));
        }
        c.map_size = self.map_size.clone();
        c.footprint_x = self.footprint_x.clone();
        c.footprint_z = self.footprint_z.clone();
        (c.team_param_lens, c.team_param_bytes) = put_strings(&self.team_params)?;
        (c.game_param_lens, c.game_param_bytes) = put_strings(&self.game_params)?;
        Ok(c)
    }
}

/// One feature of the features chunk.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Feature {
    /// The engine's feature id.
    pub feature_id: u16,
    /// Feature definition.
    pub def: u16,
    /// Team, 255 for none.
    pub team: u8,
    /// Bit 0: there before the first frame; bit 1: still there after the last.
    pub flags: u8,
    /// First frame it exists.
    pub first_frame: u32,
    /// Last frame it exists.
    pub last_frame: u32,
    /// Position in position steps.
    pub pos: [i32; 3],
    /// Rotation: dropped component (0..=3).
    pub rot_dropped: u8,
    /// Rotation: the three kept codes.
    pub rot: [i16; 3],
}

pub(super) fn at_or<T: Copy + Default>(v: &[T], i: usize) -> T {
    v.get(i).copied().unwrap_or_default()
}

pub(super) fn check_lens(
    what: &'static str,
    n: usize,
    cols: &[(&'static str, usize)],
) -> Result<(), DecodeError> {
    for &(name, len) in cols {
        if len != 0 && len != n {
            return Err(semantic(
                fpath(&[PathSeg::Field(what), PathSeg::Field(name)]),
                0,
                format!("column has {len} values where the set has {n} entries (or none)"),
            ));
        }
    }
    Ok(())
}

impl Feature {
    /// Reads the features chunk's column set.
    ///
    /// Errors: columns of one entry each that disagree in length, or features without their
    /// first and last frame columns.
    pub fn from_columns(c: &raw::FeaturesColumns) -> Result<Vec<Self>, DecodeError> {
        Self::from_view(&FeaturesView::of(c), usize::MAX, None).map(|(_, f)| f)
    }

    /// [`Feature::from_columns`] from a view: every column checked, the number of features
    /// and the first `take` of them built (none with `take` 0); with `visit`, every feature
    /// is handed to it in order instead and none is kept.
    pub(crate) fn from_view(
        c: &FeaturesView,
        take: usize,
        mut visit: Option<&mut dyn FnMut(usize, &Feature)>,
    ) -> Result<(usize, Vec<Self>), DecodeError> {
        let lens = [
            ("feature_id", c.feature_id.len()),
            ("def", c.def.len()),
            ("team", c.team.len()),
            ("flags", c.flags.len()),
            ("first_frame", c.first_frame.len()),
            ("last_frame", c.last_frame.len()),
            ("x", c.x.len()),
            ("y", c.y.len()),
            ("z", c.z.len()),
            ("rot_dropped", c.rot_dropped.len()),
            ("rot_a", c.rot_a.len()),
            ("rot_b", c.rot_b.len()),
            ("rot_c", c.rot_c.len()),
        ];
        let n = lens.iter().map(|l| l.1).max().unwrap_or(0);
        check_lens("features", n, &lens)?;
        // A feature is the frames it exists on (`first <= f <= last`), and a writer lists
        // every column that has values: without them a count could claim a 36-byte
        // feature per byte of a u8 column.
        for (name, len) in [
            ("first_frame", c.first_frame.len()),
            ("last_frame", c.last_frame.len()),
        ] {
            if len != n {
                return Err(semantic(
                    fpath(&[PathSeg::Field("features"), PathSeg::Field(name)]),
                    0,
                    format!(
                        "{n} features without their `{name}` column (a feature needs its first and last frame)"
                    ),
                ));
            }
        }
        let mut kept = Vec::with_capacity(n.min(take));
        for i in 0..n {
            if let Some(f) = visit.as_deref_mut() {
                f(i, &Self::at(c, i));
            } else if i < take {
                kept.push(Self::at(c, i));
            } else {
                break;
            }
        }
        Ok((n, kept))
    }

    /// Feature `i` of a checked view.
    fn at(c: &FeaturesView, i: usize) -> Self {
        Feature {
            feature_id: at_or(&c.feature_id, i),
            def: at_or(&c.def, i),
            team: at_or(&c.team, i),
            flags: at_or(&c.flags, i),
            first_frame: at_or(&c.first_frame, i),
            last_frame: at_or(&c.last_frame, i),
            pos: [at_or(&c.x, i), at_or(&c.y, i), at_or(&c.z, i)],
            rot_dropped: at_or(&c.rot_dropped, i),
            rot: [
                at_or(&c.rot_a, i) as i16,
                at_or(&c.rot_b, i) as i16,
                at_or(&c.rot_c, i) as i16,
            ],
        }
    }

    /// The features chunk's column set.
    ///
    /// Errors: a frame or a position beyond 16,777,215 (in size).
    pub fn to_columns(f: &[Self]) -> Result<raw::FeaturesColumns, EncodeError> {
        let mut c = raw::FeaturesColumns::default();
        for x in f {
            if x.first_frame > LUA_MAX
                || x.last_frame > LUA_MAX
                || x.pos.iter().any(|p| p.unsigned_abs() > LUA_MAX)
            {
                return Err(enc(format!(
                    "feature {}: a frame or position is beyond 16,777,215",
                    x.feature_id
                )));
            }
            c.feature_id.push(x.feature_id);
            c.def.push(x.def);
            c.team.push(x.team);
            c.flags.push(x.flags);
            c.first_frame.push(x.first_frame);
            c.last_frame.push(x.last_frame);
            c.x.push(x.pos[0]);
            c.y.push(x.pos[1]);
            c.z.push(x.pos[2]);
            c.rot_dropped.push(x.rot_dropped);
            c.rot_a.push(x.rot[0] as u16);
            c.rot_b.push(x.rot[1] as u16);
            c.rot_c.push(x.rot[2] as u16);
        }
        Ok(c)
    }

    /// True when the feature exists at `frame` (first <= f <= last).
    pub fn exists_at(&self, frame: f64) -> bool {
        self.first_frame as f64 <= frame && frame <= self.last_frame as f64
    }
}
