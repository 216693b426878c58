//! `statepack decode` of a track, written one chunk at a time: the raw layer's JSON (the
//! schema's root type [`CbtrackV1`] as serde writes it, in [`crate::formats::json`]'s layout),
//! made from each chunk inflated and read in place ([`ColumnChunk::in_place`]) rather than from
//! the whole file decoded at once. Byte for byte what serializing the decoded root type gives
//! (the CLI's golden tests compare them); memory is the header and index and one inflated
//! chunk.

use super::*;
use serde::ser::{Serialize, SerializeSeq, SerializeStruct, Serializer};

/// Writes the raw layer's JSON of a valid track to `out`, one chunk at a time (see the
/// [module docs](self)). The file is checked in full first ([`decode_all`], which keeps
/// nothing), so nothing is written for an invalid file.
///
/// Errors: an invalid file (`InvalidData`, before anything is written), or the writer's.
pub fn write_json(bytes: &[u8], out: &mut dyn std::io::Write) -> std::io::Result<()> {
    decode_all(bytes).map_err(crate::formats::invalid)?;
    let t = Track::open(bytes).map_err(crate::formats::invalid)?;
    crate::formats::json::write_pretty(out, &TrackJson(&t))
}

/// A serde error from a decode error (a chunk that read in the check and not here).
fn ser_err<E: serde::ser::Error>(e: impl std::fmt::Display) -> E {
    E::custom(e)
}

/// Bytes as the raw layer's JSON writes them: one string of two lowercase hex digits per
/// byte, written as it is formatted.
struct Hex<'a>(&'a [u8]);

impl std::fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl Serialize for Hex<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The root type: header and index, the info and features chunks, the windows, and the
/// bytes after the index (`__beyond`, which for a valid track run to its end).
struct TrackJson<'t, 'a>(&'t Track<'a>);

impl Serialize for TrackJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let h = &t.raw;
        let mut st = s.serialize_struct("CbtrackV1", 7)?;
        st.serialize_field("head", h)?;
        for (name, stored_name, block, len) in [
            ("info", "__stored_info", h.info_block, h.info_len),
            (
                "features",
                "__stored_features",
                h.features_block,
                h.features_len,
            ),
        ] {
            let z = t.stored(block, len).map_err(ser_err)?;
            st.serialize_field(name, &ChunkJson(z))?;
            st.serialize_field(stored_name, &Hex(z))?;
        }
        st.serialize_field("windows", &WindowsJson(t))?;
        let beyond = t.bytes().get(h.encoded_len()..).unwrap_or_default();
        if !beyond.is_empty() {
            st.serialize_field("__beyond", &Hex(beyond))?;
        }
        st.end()
    }
}

/// The windows, each read when it is written.
struct WindowsJson<'t, 'a>(&'t Track<'a>);

impl Serialize for WindowsJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let mut seq = s.serialize_seq(Some(t.num_windows()))?;
        for e in &t.raw.index {
            seq.serialize_element(&WindowJson(t, e))?;
        }
        seq.end()
    }
}

/// One window: its index entry, its main chunk and, when it has one, its terrain chunk.
struct WindowJson<'t, 'a>(&'t Track<'a>, &'t WindowEntry);

impl Serialize for WindowJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (t, e) = (self.0, self.1);
        let mut st = s.serialize_struct("Window", 5)?;
        st.serialize_field("entry", e)?;
        let z = t.stored(e.main_block, e.main_len).map_err(ser_err)?;
        st.serialize_field("main", &ChunkJson(z))?;
        st.serialize_field("__stored_main", &Hex(z))?;
        if e.terrain_len == 0 {
            st.serialize_field("terrain", &None::<()>)?;
        } else {
            let z = t.stored(e.terrain_block, e.terrain_len).map_err(ser_err)?;
            st.serialize_field("terrain", &Some(ChunkJson(z)))?;
            st.serialize_field("__stored_terrain", &Hex(z))?;
        }
        st.end()
    }
}

/// A chunk body from its stored bytes: inflated when it is written, its directory with
/// each column's values read in place. Nothing else: the writer lays the columns out from
/// their values (the reader checked that the chunk is laid out so).
struct ChunkJson<'a>(&'a [u8]);

impl Serialize for ChunkJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let body = inflate_chunk_exact(self.0).map_err(ser_err)?;
        let c = parse_chunk(&body).map_err(ser_err)?;
        let mut st = s.serialize_struct("ChunkBody", 1)?;
        st.serialize_field("directory", &DirectoryJson(&c))?;
        st.end()
    }
}

/// A chunk's directory: its entries, each with its values.
struct DirectoryJson<'c, 'a>(&'c ColumnChunk<'a>);

impl Serialize for DirectoryJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("ColumnDirectory", 1)?;
        st.serialize_field("columns", &EntriesJson(self.0))?;
        st.end()
    }
}

struct EntriesJson<'c, 'a>(&'c ColumnChunk<'a>);

impl Serialize for EntriesJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let c = self.0;
        let mut seq = s.serialize_seq(Some(c.entries().len()))?;
        for e in c.entries() {
            seq.serialize_element(&EntryJson(c, e))?;
        }
        seq.end()
    }
}

/// One directory entry: the values of its column under the member its type code selects
/// (`u1_values` ... `f4_values`), the others `null`.
struct EntryJson<'c, 'a>(&'c ColumnChunk<'a>, &'c DirEntry);

impl Serialize for EntryJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (c, e) = (self.0, self.1);
        let mut st = s.serialize_struct("ColumnEntry", 10)?;
        st.serialize_field("id", &e.id)?;
        st.serialize_field("type_code", &e.code)?;
        st.serialize_field("offset", &e.offset)?;
        st.serialize_field("count", &e.count)?;
        fn values<'c, T: statepack_runtime::cbtk_columns::ColumnValue + Serialize, E>(
            c: &ColumnChunk<'c>,
            e: &DirEntry,
            code: u16,
        ) -> Result<Option<std::borrow::Cow<'c, [T]>>, E>
        where
            E: serde::ser::Error,
        {
            if e.code != code {
                return Ok(None);
            }
            c.column_ref::<T>(e.id, "column").map(Some).map_err(ser_err)
        }
        st.serialize_field("u1_values", &values::<u8, S::Error>(c, e, 1)?)?;
        st.serialize_field("u2_values", &values::<u16, S::Error>(c, e, 2)?)?;
        st.serialize_field("s2_values", &values::<i16, S::Error>(c, e, 3)?)?;
        st.serialize_field("u4_values", &values::<u32, S::Error>(c, e, 4)?)?;
        st.serialize_field("s4_values", &values::<i32, S::Error>(c, e, 5)?)?;
        let f4 = values::<f32, S::Error>(c, e, 6)?;
        st.serialize_field("f4_values", &f4.as_deref().map(F32s))?;
        st.end()
    }
}

/// `f32` values as the raw layer writes them ([`statepack_runtime::io::float_json`]: a
/// finite value as the `f64` it widens to, others by name), one at a time.
struct F32s<'v>(&'v [f32]);

impl Serialize for F32s<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct One(f32);
        impl Serialize for One {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                statepack_runtime::io::float_json::serialize(&self.0, s)
            }
        }
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for &v in self.0 {
            seq.serialize_element(&One(v))?;
        }
        seq.end()
    }
}

/// Writes the full state at `frame` as `statepack sample` prints it (serde_json's pretty
/// form of [`FrameState`], then a newline), the same text as [`Player::sample`]'s state
/// gives, read one entry at a time: the window's units, projectiles and team number tracks
/// are each decoded, written and dropped ([`Track::visit_window`], one pass per list), the
/// features listed from the features chunk's frame columns where they lie, and the terrain
/// points the rows up to `frame` changed kept in a map (one entry per point). Nothing is
/// checked here that [`decode_all`] does not check first.
///
/// Errors: an invalid track or a frame outside it (`InvalidData`, before anything is
/// written), or the writer's.
pub fn write_sample(bytes: &[u8], frame: f64, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    use crate::formats::invalid;
    decode_all(bytes).map_err(invalid)?;
    let t = Track::open(bytes).map_err(invalid)?;
    let k = t.window_of(frame).map_err(invalid)?;
    let mut ser = serde_json::Serializer::pretty(&mut *out);
    SampleJson {
        t: &t,
        h: t.header(),
        k,
        frame,
    }
    .serialize(&mut ser)
    .map_err(std::io::Error::other)?;
    out.write_all(b"\n")
}

/// [`FrameState`] of one frame, each list read when it is written.
struct SampleJson<'t, 'a> {
    t: &'t Track<'a>,
    h: Header,
    k: usize,
    frame: f64,
}

/// Which list of a window [`WindowList`] writes.
#[derive(Clone, Copy)]
enum List {
    Units,
    Projectiles,
    Teams,
}

impl Serialize for SampleJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("FrameState", 7)?;
        st.serialize_field("frame", &self.frame)?;
        st.serialize_field("window", &self.k)?;
        for (name, list) in [
            ("units", List::Units),
            ("projectiles", List::Projectiles),
            ("teams", List::Teams),
        ] {
            st.serialize_field(name, &WindowList(self, list))?;
        }
        st.serialize_field("features", &FeaturesAt(self))?;
        st.serialize_field("terrain", &self.terrain().map_err(ser_err)?)?;
        st.end()
    }
}

impl SampleJson<'_, '_> {
    /// The heightmap points the rows up to the frame changed, with their height in elmos
    /// (what a [`Player`] shows there after moving from the first frame).
    fn terrain(&self) -> Result<Vec<(u16, u16, f64)>, DecodeError> {
        let mut heights = std::collections::BTreeMap::new();
        for k in 0..=self.k {
            if self.t.raw.index[k].terrain_len == 0 {
                continue;
            }
            self.t.visit_terrain(k, |r| {
                if r.frame as f64 <= self.frame {
                    heights.insert((r.x, r.z), r.after);
                }
            })?;
        }
        let ps = self.h.pos_step();
        Ok(heights
            .into_iter()
            .map(|((x, z), h)| (x, z, h as f64 * ps))
            .collect())
    }
}

/// The units or projectiles alive at the frame, or the team numbers, of the frame's window.
struct WindowList<'s, 't, 'a>(&'s SampleJson<'t, 'a>, List);

impl Serialize for WindowList<'_, '_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (sj, list) = (self.0, self.1);
        let (start, _) = sj.h.window_span(sj.k);
        let at = sj.frame - start as f64;
        let mut seq = s.serialize_seq(None)?;
        let mut res = Ok(());
        let visited = sj.t.visit_window(sj.k, |part| {
            if res.is_err() {
                return;
            }
            res = match (list, part) {
                (List::Units, WindowPart::Unit(u)) if u.exists_at(at) => {
                    seq.serialize_element(&u.state_at(&sj.h, at))
                }
                (List::Projectiles, WindowPart::Projectile(p)) if p.exists_at(at) => {
                    seq.serialize_element(&p.state_at(&sj.h, at))
                }
                (List::Teams, WindowPart::Team(n)) => seq.serialize_element(&n.value_at(at)),
                _ => Ok(()),
            };
        });
        res?;
        visited.map_err(ser_err)?;
        seq.end()
    }
}

/// The indices of the features that exist at the frame, from the features chunk's first and
/// last frame columns where they lie.
struct FeaturesAt<'s, 't, 'a>(&'s SampleJson<'t, 'a>);

impl Serialize for FeaturesAt<'_, '_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (t, frame) = (self.0.t, self.0.frame);
        let z = t
            .stored(t.raw.features_block, t.raw.features_len)
            .map_err(ser_err)?;
        let body = inflate_chunk_exact(z).map_err(ser_err)?;
        let c = parse_chunk(&body).map_err(ser_err)?;
        let v = FeaturesView::from_chunk(&c).map_err(ser_err)?;
        let mut seq = s.serialize_seq(None)?;
        for (i, (&first, &last)) in v.first_frame.iter().zip(v.last_frame.iter()).enumerate() {
            if first as f64 <= frame && frame <= last as f64 {
                seq.serialize_element(&i)?;
            }
        }
        seq.end()
    }
}
