//! The opened track: header and window index, chunk placement and inflating, the header's values.

use super::*;

/// Which chunk of the file a chunk error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ChunkKind {
    /// The info chunk.
    Info,
    /// The features chunk.
    Features,
    /// A window's main chunk.
    Main,
    /// A window's terrain chunk.
    Terrain,
}

/// An opened track: the raw header and index, and the bytes chunks are read from.
///
/// The schema's root type [`CbtrackV1`] reads every chunk of the file (its positional
/// instances `info`, `features` and `windows[k].main` / `.terrain`), which is what
/// `statepack decode` and `inspect` show. A track opened here reads only the schema's
/// `cbtk_head` (header and index) and reads a chunk when asked, with the same generated
/// [`raw::ChunkBody`] reader, so a seek touches one window.
#[derive(Debug, Clone)]
pub struct Track<'a> {
    /// The raw header and index (the schema's `head`; error paths start with `head.`).
    pub raw: CbtkHead,
    bytes: &'a [u8],
    chunk_area: usize,
}

impl<'a> Track<'a> {
    /// Reads the header and the index (no chunk is touched). The magic and the format version
    /// are checked by the raw layer and named with the value found; the index is found at the
    /// stated header size; the number of windows must follow from the frame span and the
    /// window length, and the last frame may not come before the first.
    ///
    /// Errors: [`DecodeError`] with the field path and byte offset.
    pub fn open(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let raw =
            CbtkHead::read_from(&mut ByteReader::new(bytes)).map_err(|e| e.in_field("head"))?;
        if raw.last_frame < raw.first_frame {
            return Err(semantic(
                fpath(&[PathSeg::Field("head"), PathSeg::Field("last_frame")]),
                16,
                format!(
                    "last frame {} is before the first frame {}",
                    raw.last_frame, raw.first_frame
                ),
            ));
        }
        let want = windows_for(raw.first_frame, raw.last_frame, raw.window_length);
        if raw.index.len() as u64 != want {
            return Err(semantic(
                fpath(&[PathSeg::Field("head"), PathSeg::Field("num_windows")]),
                24,
                format!(
                    "{} windows stated, the frame span {}..={} in windows of {} needs {want}",
                    raw.index.len(),
                    raw.first_frame,
                    raw.last_frame,
                    raw.window_length
                ),
            ));
        }
        if raw.position_shift > 24 || raw.velocity_shift > 24 {
            return Err(semantic(
                fpath(&[PathSeg::Field("head"), PathSeg::Field("position_shift")]),
                32,
                "a shift above 24 leaves no whole step a reader can hold",
            ));
        }
        let chunk_area = raw.header_size as usize + 16 * raw.index.len();
        check_chunk_ranges(&raw, chunk_area as u64, bytes.len() as u64)?;
        Ok(Self {
            raw,
            bytes,
            chunk_area,
        })
    }

    /// The header's values as a [`Header`].
    pub fn header(&self) -> Header {
        Header::from_raw(&self.raw)
    }

    /// Number of windows.
    pub fn num_windows(&self) -> usize {
        self.raw.index.len()
    }

    /// The compressed bytes of the chunk at `block` with `len` bytes, checked to lie in the
    /// chunk area. `field` names the header or index field in errors.
    fn chunk_bytes(
        &self,
        block: u32,
        len: u32,
        path: FieldPath,
        at: u64,
    ) -> Result<&'a [u8], DecodeError> {
        let start = block as u64 * 64;
        let end = start + len as u64;
        if start < self.chunk_area as u64 || end > self.bytes.len() as u64 {
            return Err(semantic(
                path,
                at,
                format!(
                    "chunk at block {block} ({start}..{end}) is outside the chunk area {}..{}",
                    self.chunk_area,
                    self.bytes.len()
                ),
            ));
        }
        Ok(&self.bytes[start as usize..end as usize])
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The stored (compressed) bytes of the chunk at `block` with `len` bytes.
    ///
    /// Errors: the chunk is outside the chunk area.
    pub fn stored(&self, block: u32, len: u32) -> Result<&'a [u8], DecodeError> {
        self.chunk_bytes(
            block,
            len,
            fpath(&[PathSeg::Field("head"), PathSeg::Field("index")]),
            self.raw.header_size as u64,
        )
    }

    /// Inflates a chunk and checks its directory. Offsets in errors are file offsets of the
    /// chunk's first byte (a chunk's own offsets are given in the message).
    fn inflate(
        &self,
        block: u32,
        len: u32,
        path: FieldPath,
        at: u64,
    ) -> Result<Vec<u8>, DecodeError> {
        let z = self.chunk_bytes(block, len, path.clone(), at)?;
        inflate_chunk_exact(z).map_err(|m| semantic(path, block as u64 * 64, m))
    }

    /// The decompressed bytes of the info chunk.
    ///
    /// Errors: the chunk is outside the file or does not decompress.
    pub fn info_bytes(&self) -> Result<Vec<u8>, DecodeError> {
        self.inflate(
            self.raw.info_block,
            self.raw.info_len,
            fpath(&[PathSeg::Field("head"), PathSeg::Field("info_block")]),
            36,
        )
    }

    /// The info chunk, every list collected. Allocates per string kept (24 bytes and its
    /// text each: up to 12 bytes per inflated byte for a list of empty names); a track
    /// one does not trust is read within its own size by [`Track::visit_info`].
    ///
    /// Errors: the chunk is missing, outside the file, does not decompress, or breaks a rule.
    pub fn info(&self) -> Result<Info, DecodeError> {
        let b = self.info_bytes()?;
        let c = parse_chunk(&b).map_err(|e| in_chunk(e, "info"))?;
        Info::from_view(&InfoView::from_chunk(&c).map_err(|e| in_chunk(e, "info"))?)
            .map_err(|e| in_chunk(e, "info"))
    }

    /// Reads the info chunk as [`Track::info`] does, with the same errors (all found before
    /// the first item is handed over), handing each string, posed entry, team and list of
    /// numbers to `f` in the order of [`Info`]'s fields ([`InfoPart`]) and keeping none:
    /// memory is the inflated chunk and the teams (at most [`MAX_TEAMS`]).
    ///
    /// Errors: as for [`Track::info`].
    pub fn visit_info(&self, f: impl FnMut(InfoPart<'_>)) -> Result<(), DecodeError> {
        let b = self.info_bytes()?;
        let c = parse_chunk(&b).map_err(|e| in_chunk(e, "info"))?;
        Info::visit_view(
            &InfoView::from_chunk(&c).map_err(|e| in_chunk(e, "info"))?,
            f,
        )
        .map_err(|e| in_chunk(e, "info"))
    }

    /// Checks the info chunk as [`Track::info`] reads it, with the same errors, keeping
    /// nothing: memory is the inflated chunk.
    ///
    /// Errors: as for [`Track::info`].
    pub fn check_info(&self) -> Result<(), DecodeError> {
        let b = self.info_bytes()?;
        let c = parse_chunk(&b).map_err(|e| in_chunk(e, "info"))?;
        Info::check_view(&InfoView::from_chunk(&c).map_err(|e| in_chunk(e, "info"))?)
            .map_err(|e| in_chunk(e, "info"))?;
        cbtk_columns::check_laid_out(&b).map_err(|e| in_chunk(e, "info"))
    }

    /// The features chunk, every feature collected. Allocates 36 bytes per feature (at
    /// most 4.5 bytes per inflated byte: a feature has at least its two 4-byte frame
    /// columns); [`Track::visit_features`] reads it within the chunk's own size.
    ///
    /// Errors: as for [`Track::info`].
    pub fn features(&self) -> Result<Vec<Feature>, DecodeError> {
        self.read_features(usize::MAX, None).map(|(_, f)| f)
    }

    /// Reads the features chunk as [`Track::features`] does, with the same errors (all
    /// found before the first feature is handed over), handing each feature and its index
    /// to `f` in stored order and keeping none: memory is the inflated chunk. Gives the
    /// number of features.
    ///
    /// Errors: as for [`Track::features`].
    pub fn visit_features(&self, mut f: impl FnMut(usize, &Feature)) -> Result<usize, DecodeError> {
        self.read_features(0, Some(&mut f)).map(|(n, _)| n)
    }

    /// Checks the features chunk as [`Track::features`] reads it, with the same errors,
    /// keeping nothing: memory is the inflated chunk.
    ///
    /// Errors: as for [`Track::features`].
    pub fn check_features(&self) -> Result<(), DecodeError> {
        let b = self.features_bytes()?;
        read_features_of(&b, 0, None)?;
        cbtk_columns::check_laid_out(&b).map_err(|e| in_chunk(e, "features"))
    }

    /// The features chunk checked as [`Track::features`] reads it, with the same errors: the
    /// number of features and the first `max` of them (all when `max` is 0), for a listing.
    /// Memory: the inflated chunk and the features kept.
    ///
    /// Errors: as for [`Track::features`].
    pub fn features_first(&self, max: usize) -> Result<(usize, Vec<Feature>), DecodeError> {
        self.read_features(if max == 0 { usize::MAX } else { max }, None)
    }

    /// The info chunk checked as [`Track::info`] reads it, with the same errors, each list cut
    /// to its first `max` entries (all when `max` is 0), and the lists' full lengths.
    /// Memory: the inflated chunk and the entries kept.
    ///
    /// Errors: as for [`Track::info`].
    pub fn info_first(&self, max: usize) -> Result<(Info, InfoLens), DecodeError> {
        let b = self.info_bytes()?;
        let c = parse_chunk(&b).map_err(|e| in_chunk(e, "info"))?;
        Info::from_view_first(
            &InfoView::from_chunk(&c).map_err(|e| in_chunk(e, "info"))?,
            max,
        )
        .map_err(|e| in_chunk(e, "info"))
    }

    /// The decompressed bytes of the features chunk.
    ///
    /// Errors: the chunk is outside the file or does not decompress.
    pub fn features_bytes(&self) -> Result<Vec<u8>, DecodeError> {
        self.inflate(
            self.raw.features_block,
            self.raw.features_len,
            fpath(&[PathSeg::Field("head"), PathSeg::Field("features_block")]),
            44,
        )
    }

    fn read_features(
        &self,
        take: usize,
        visit: Option<&mut dyn FnMut(usize, &Feature)>,
    ) -> Result<(usize, Vec<Feature>), DecodeError> {
        read_features_of(&self.features_bytes()?, take, visit)
    }

    fn index_path(k: usize, field: &'static str) -> FieldPath {
        fpath(&[
            PathSeg::Field("head"),
            PathSeg::Field("index"),
            PathSeg::Index(k),
            PathSeg::Field(field),
        ])
    }

    fn index_at(&self, k: usize) -> u64 {
        (self.raw.header_size as usize + 16 * k) as u64
    }

    /// The decompressed main chunk of window `k`. A chunk that fails is an error for that
    /// window only.
    ///
    /// Errors: `k` out of range, the chunk outside the file, or not decompressing.
    pub fn main_bytes(&self, k: usize) -> Result<Vec<u8>, DecodeError> {
        let e = self.window_entry(k)?;
        self.inflate(
            e.main_block,
            e.main_len,
            Self::index_path(k, "main_block"),
            self.index_at(k),
        )
    }

    fn window_entry(&self, k: usize) -> Result<&WindowEntry, DecodeError> {
        self.raw.index.get(k).ok_or_else(|| {
            semantic(
                fpath(&[PathSeg::Field("head"), PathSeg::Field("index")]),
                self.index_at(k),
                format!("window {k} does not exist ({} windows)", self.num_windows()),
            )
        })
    }

    /// Window `k`'s main chunk, inflated and checked ([`WindowChunk::new`]): its entries
    /// are read from the inflated bytes one at a time when asked ([`WindowChunk::visit`],
    /// [`WindowChunk::sample_each`]), so memory is the inflated chunk, at most
    /// [`MAX_CHUNK_RATIO`] bytes per stored byte. [`WindowChunk::decode`] gives the owned
    /// [`MainWindow`].
    ///
    /// Errors: as for [`Track::main_bytes`], or a column rule broken.
    pub fn window(&self, k: usize) -> Result<WindowChunk, DecodeError> {
        let b = self.main_bytes(k)?;
        let (start, end) = self.header().window_span(k);
        WindowChunk::new(b, k, start, end).map_err(|e| e.in_index(k).in_field("windows"))
    }

    /// Reads window `k`'s main chunk as [`WindowChunk::visit`] of [`Track::window`] does, with
    /// the same errors, handing each entry to `f` as it is decoded
    /// ([`MainWindow::visit_chunk`]) and keeping none: memory is the inflated chunk and one
    /// entry (the chunk is read once, not checked first).
    ///
    /// Errors: as for [`Track::window`].
    pub fn visit_window(&self, k: usize, f: impl FnMut(WindowPart<'_>)) -> Result<(), DecodeError> {
        let b = self.main_bytes(k)?;
        let (start, end) = self.header().window_span(k);
        MainWindow::visit_chunk(&b, k, start, end, f).map_err(|e| e.in_index(k).in_field("windows"))
    }

    /// Checks window `k`'s main chunk as [`Track::window`] reads it, with the same errors,
    /// keeping nothing ([`MainWindow::check_chunk`]): memory is the inflated chunk and one
    /// curve.
    ///
    /// Errors: as for [`Track::window`].
    pub fn check_window(&self, k: usize) -> Result<(), DecodeError> {
        let b = self.main_bytes(k)?;
        let (start, end) = self.header().window_span(k);
        MainWindow::check_chunk(&b, k, start, end)
            .and_then(|()| cbtk_columns::check_laid_out(&b).map_err(|e| in_chunk(e, "main")))
            .map_err(|e| e.in_index(k).in_field("windows"))
    }

    /// Window `k`'s terrain rows (empty when the window has no terrain chunk), collected.
    /// Frames in the rows are absolute. Allocates 16 bytes per row (up to 8 per inflated
    /// byte: a row may be stored as one 2-byte value); [`Track::visit_terrain`] reads it
    /// within the chunk's own size.
    ///
    /// Errors: as for [`Track::window`].
    pub fn terrain(&self, k: usize) -> Result<Vec<TerrainRow>, DecodeError> {
        let mut rows = Vec::new();
        self.read_terrain(k, Some(&mut |r: &TerrainRow| rows.push(*r)))?;
        Ok(rows)
    }

    /// Reads window `k`'s terrain chunk as [`Track::terrain`] does, with the same errors (all
    /// found before the first row is handed over), handing each row to `f` in stored order
    /// (by frame, then z, then x) and keeping none: memory is the inflated chunk. Gives the
    /// number of rows (0 when the window has no terrain chunk).
    ///
    /// Errors: as for [`Track::terrain`].
    pub fn visit_terrain(
        &self,
        k: usize,
        mut f: impl FnMut(&TerrainRow),
    ) -> Result<usize, DecodeError> {
        self.read_terrain(k, Some(&mut f))
    }

    /// Checks window `k`'s terrain chunk as [`Track::terrain`] reads it, with the same
    /// errors, keeping nothing: memory is the inflated chunk.
    ///
    /// Errors: as for [`Track::terrain`].
    pub fn check_terrain(&self, k: usize) -> Result<(), DecodeError> {
        self.read_terrain(k, None)?;
        let e = self.window_entry(k)?;
        if e.terrain_len == 0 {
            return Ok(());
        }
        let b = self.inflate(
            e.terrain_block,
            e.terrain_len,
            Self::index_path(k, "terrain_block"),
            self.index_at(k) + 8,
        )?;
        cbtk_columns::check_laid_out(&b)
            .map_err(|e| in_chunk(e, "terrain").in_index(k).in_field("windows"))
    }

    fn read_terrain(
        &self,
        k: usize,
        visit: Option<&mut dyn FnMut(&TerrainRow)>,
    ) -> Result<usize, DecodeError> {
        let e = self.window_entry(k)?;
        if e.terrain_len == 0 {
            return Ok(0);
        }
        let b = self.inflate(
            e.terrain_block,
            e.terrain_len,
            Self::index_path(k, "terrain_block"),
            self.index_at(k) + 8,
        )?;
        let (start, _) = self.header().window_span(k);
        let c = parse_chunk(&b).map_err(|e| in_chunk(e, "terrain"))?;
        let cols = TerrainRowsView::from_chunk(&c).map_err(|e| in_chunk(e, "terrain"))?;
        let rows = match visit {
            Some(f) => TerrainRow::visit_view(&cols, start, f),
            None => TerrainRow::check_view(&cols),
        };
        rows.map_err(|e| in_chunk(e, "terrain").in_index(k).in_field("terrain"))
    }

    /// The window holding `frame` (the spec's step 1: `floor((f - first) / length)`, the last
    /// window when past the end).
    ///
    /// Errors: `frame` is before the first frame or after the last, or not finite.
    pub fn window_of(&self, frame: f64) -> Result<usize, DecodeError> {
        self.header().window_of(frame).ok_or_else(|| {
            semantic(
                fpath(&[PathSeg::Field("frame")]),
                0,
                format!(
                    "frame {frame} is outside the track's frames {}..={}",
                    self.raw.first_frame, self.raw.last_frame
                ),
            )
        })
    }
}

/// Reads an inflated features chunk as [`Track::features`] does: the number of features and
/// the first `take` of them, or each handed to `visit`.
pub(crate) fn read_features_of(
    b: &[u8],
    take: usize,
    visit: Option<&mut dyn FnMut(usize, &Feature)>,
) -> Result<(usize, Vec<Feature>), DecodeError> {
    let c = parse_chunk(b).map_err(|e| in_chunk(e, "features"))?;
    Feature::from_view(
        &FeaturesView::from_chunk(&c).map_err(|e| in_chunk(e, "features"))?,
        take,
        visit,
    )
    .map_err(|e| in_chunk(e, "features"))
}

/// The most a chunk may inflate to per stored byte: 64. The largest ratio of a chunk of a
/// real track measured is 41.0 (a main chunk of the glTF fox imported as a crowd: a walk in
/// place whose pose offsets are all zero; the CMU walk's chunks reach 15.8, Cesium Man's
/// 25.2); the spec's recordings average 3.6 and 8.5 over their main chunks. A writer whose
/// chunk would pass it stores that chunk less compressed ([`writer::FileWriter`] falls back
/// to zlib level 1, then to stored blocks), so every chunk can meet it.
pub const MAX_CHUNK_RATIO: usize = 64;

/// The most a chunk of `stored_len` bytes may inflate to: [`MAX_CHUNK_RATIO`] times its
/// length, and never more than the spec's 16,777,215 bytes.
pub fn chunk_limit(stored_len: usize) -> usize {
    MAX_CHUNK_RATIO
        .saturating_mul(stored_len)
        .min(LUA_MAX as usize)
}

/// Inflates one chunk's stored bytes within [`chunk_limit`], stopping before more memory
/// is taken.
///
/// Errors: a message saying which limit the chunk passes, or why it does not decompress.
pub fn inflate_chunk(z: &[u8]) -> Result<Vec<u8>, String> {
    let limit = chunk_limit(z.len());
    cbtk_columns::inflate(z, limit).map_err(|m| {
        if m.starts_with("decompresses to more than") {
            if limit < LUA_MAX as usize {
                format!(
                    "chunk inflates to more than {limit} bytes, {MAX_CHUNK_RATIO} times its {} stored bytes (a chunk may inflate to at most {MAX_CHUNK_RATIO} times its length)",
                    z.len()
                )
            } else {
                format!("chunk inflates to more than {limit} bytes, the spec's limit")
            }
        } else {
            format!("chunk does not decompress: {m}")
        }
    })
}

/// [`inflate_chunk`] into a buffer of exactly the inflated length: the stream is inflated
/// once to count its length (32 KiB at a time, nothing kept), then into a buffer of that
/// size, so no buffer grows past what the chunk holds. A stream that fails either way is
/// inflated by [`inflate_chunk`], whose error names what is wrong.
///
/// Errors: as for [`inflate_chunk`].
pub fn inflate_chunk_exact(z: &[u8]) -> Result<Vec<u8>, String> {
    use flate2::{Decompress, FlushDecompress, Status};
    let limit = chunk_limit(z.len());
    let mut d = Decompress::new(true);
    let mut buf = vec![0u8; 32 << 10];
    let Ok((n, _)) = directory_of(z, limit, &mut d, &mut buf) else {
        return inflate_chunk(z);
    };
    drop(buf);
    if d.total_in() as usize != z.len() {
        return inflate_chunk(z);
    }
    d.reset(true);
    let mut out = Vec::with_capacity(n);
    match d.decompress_vec(z, &mut out, FlushDecompress::Finish) {
        Ok(Status::StreamEnd) if out.len() == n && d.total_in() as usize == z.len() => Ok(out),
        _ => {
            drop(out);
            inflate_chunk(z)
        }
    }
}

/// The limits the schema's root type ([`CbtrackV1`], the raw layer) is read within: checked
/// on the file's bytes before the raw layer reads them, since that layer keeps every
/// chunk's bytes, inflated bytes and column values at once.
///
/// - every chunk the root type reads (`info`, `features`, `windows[k].main` and `.terrain`)
///   inflates to at most [`chunk_limit`] of its stored bytes;
/// - all of them together, counted once per window that names them, to at most
///   [`MAX_CHUNK_RATIO`] times the file's length (chunks that do not share bytes always do;
///   windows that share a chunk would inflate it once each);
/// - in each, the columns of known types do not share bytes ([`check_columns_apart`]).
///
/// Anything else that is wrong (a header that does not read, a chunk outside the file or
/// not decompressing, a directory past the chunk) is left to the raw layer, which names it.
/// Memory: one inflate state, a 32 KiB buffer, one chunk's directory and 12 bytes per
/// directory entry; the chunks' other bytes are counted, not kept.
///
/// Errors: the chunk (its path in the raw layer, its file offset) and the limit it passes.
pub fn check_raw_limits(bytes: &[u8]) -> Result<(), DecodeError> {
    let Ok(head) = CbtkHead::read_from(&mut ByteReader::new(bytes)) else {
        return Ok(());
    };
    let mut refs: Vec<(u32, u32, FieldPath)> = vec![
        (
            head.info_block,
            head.info_len,
            fpath(&[PathSeg::Field("info")]),
        ),
        (
            head.features_block,
            head.features_len,
            fpath(&[PathSeg::Field("features")]),
        ),
    ];
    for (k, e) in head.index.iter().enumerate() {
        let w = |f| {
            fpath(&[
                PathSeg::Field("windows"),
                PathSeg::Index(k),
                PathSeg::Field(f),
            ])
        };
        refs.push((e.main_block, e.main_len, w("main")));
        if e.terrain_len != 0 {
            refs.push((e.terrain_block, e.terrain_len, w("terrain")));
        }
    }
    let total = (MAX_CHUNK_RATIO as u64).saturating_mul(bytes.len() as u64);
    let mut used = 0u64;
    let mut d = flate2::Decompress::new(true);
    let mut buf = vec![0u8; 32 << 10];
    for (block, len, path) in refs {
        let start = block as u64 * 64;
        let Some(z) = usize::try_from(start)
            .ok()
            .and_then(|s| bytes.get(s..s.checked_add(len as usize)?))
        else {
            continue;
        };
        let limit = chunk_limit(z.len());
        let left = usize::try_from(total - used).unwrap_or(usize::MAX);
        let (n, dir) = match directory_of(z, limit.min(left), &mut d, &mut buf) {
            Ok(x) => x,
            Err(false) => continue,
            Err(true) if limit <= left => {
                return Err(semantic(
                    path,
                    start,
                    format!(
                        "chunk inflates to more than {limit} bytes from {} stored bytes (a chunk may inflate to at most {MAX_CHUNK_RATIO} times its length, and to 16,777,215 bytes)",
                        z.len()
                    ),
                ))
            }
            Err(true) => {
                return Err(semantic(
                    path,
                    start,
                    format!(
                        "the chunks, as the windows name them, inflate to more than {total} bytes, {MAX_CHUNK_RATIO} times the file's {} bytes (do windows share a chunk?)",
                        bytes.len()
                    ),
                ))
            }
        };
        used += n as u64;
        check_entries_apart(&dir, n).map_err(|e| located(e, &path))?;
    }
    Ok(())
}

/// Inflates a chunk without keeping it, 32 KiB at a time, stopping past `limit` bytes:
/// `Ok` with the inflated length and the directory's bytes (its count and entries, as far as
/// the chunk has them), `Err(true)` past `limit`, `Err(false)` for a stream that does not
/// decompress (the reader that keeps the bytes says why).
fn directory_of(
    z: &[u8],
    limit: usize,
    d: &mut flate2::Decompress,
    buf: &mut [u8],
) -> Result<(usize, Vec<u8>), bool> {
    use flate2::{FlushDecompress, Status};
    d.reset(true);
    let mut dir = Vec::new();
    let mut want = 4usize;
    loop {
        let (i0, o0) = (d.total_in(), d.total_out());
        let st = d
            .decompress(&z[i0 as usize..], buf, FlushDecompress::Finish)
            .map_err(|_| false)?;
        let got = (d.total_out() - o0) as usize;
        let out = d.total_out() as usize;
        if out > limit {
            return Err(true);
        }
        let mut from = 0;
        while dir.len() < want && from < got {
            let take = (want - dir.len()).min(got - from);
            dir.extend_from_slice(&buf[from..from + take]);
            from += take;
            if dir.len() == 4 && want == 4 {
                let n = u32::from_le_bytes([dir[0], dir[1], dir[2], dir[3]]) as usize;
                // Entries past the chunk's end are the reader's to name: keep what fits.
                want = 4usize.saturating_add(n.saturating_mul(12)).min(limit);
            }
        }
        match st {
            Status::StreamEnd => return Ok((out, dir)),
            _ if d.total_in() == i0 && d.total_out() == o0 => return Err(false),
            _ => {}
        }
    }
}

/// `e` (from inside a chunk) under the chunk's path `path` (`windows[2].main`).
fn located(e: DecodeError, path: &FieldPath) -> DecodeError {
    let segs: Vec<PathSeg> = path.segments().cloned().collect();
    segs.into_iter().rev().fold(e, |e, s| match s {
        PathSeg::Field(f) => e.in_field(f),
        PathSeg::Index(i) => e.in_index(i),
    })
}

/// The columns of known types (1 to 6) listed in a decompressed chunk's directory do not
/// share bytes: a writer lays each column out on its own, and a directory whose entries
/// point at the same bytes would make a reader hold them once per entry. Entries whose
/// columns do not fit the chunk, and a directory that does not, are left to the reader that
/// reads them (it names them).
///
/// Errors: the later entry of the first two found to share bytes, at its directory offset.
pub fn check_columns_apart(body: &[u8]) -> Result<(), DecodeError> {
    check_entries_apart(body, body.len())
}

/// [`check_columns_apart`] on a chunk's directory bytes `dir` (its count, then as many of
/// its entries as the chunk holds) for a chunk of `len` bytes.
fn check_entries_apart(dir: &[u8], len: usize) -> Result<(), DecodeError> {
    let Some(n) = dir
        .get(0..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    else {
        return Ok(());
    };
    let n = n as usize;
    if n > (len - 4) / 12 || dir.len() < 4 + 12 * n {
        return Ok(());
    }
    let mut ranges: Vec<(u32, u32, u32)> = Vec::with_capacity(n);
    for i in 0..n {
        let e = &dir[4 + 12 * i..16 + 12 * i];
        let code = u16::from_le_bytes([e[2], e[3]]);
        let width: u64 = match code {
            1 => 1,
            2 | 3 => 2,
            4..=6 => 4,
            _ => continue,
        };
        let offset = u32::from_le_bytes([e[4], e[5], e[6], e[7]]);
        let count = u32::from_le_bytes([e[8], e[9], e[10], e[11]]);
        let end = offset as u64 + width * count as u64;
        if count == 0 || end > len as u64 {
            continue;
        }
        ranges.push((offset, end as u32, i as u32));
    }
    ranges.sort_unstable();
    for w in ranges.windows(2) {
        let ((s0, e0, i0), (s1, e1, i1)) = (w[0], w[1]);
        if s1 < e0 {
            let i = i0.max(i1) as usize;
            return Err(semantic(
                fpath(&[
                    PathSeg::Field("directory"),
                    PathSeg::Field("columns"),
                    PathSeg::Index(i),
                ]),
                4 + 12 * i as u64,
                format!(
                    "columns {i0} ({s0}..{e0}) and {i1} ({s1}..{e1}) share bytes; every column has bytes of its own"
                ),
            ));
        }
    }
    Ok(())
}

/// Every chunk lies in the chunk area and no two chunks share a byte: each is its own zlib
/// stream (so each stored byte is inflated once).
fn check_chunk_ranges(raw: &CbtkHead, area: u64, len: u64) -> Result<(), DecodeError> {
    let mut r: Vec<(u64, u64, FieldPath, u64)> = Vec::with_capacity(2 + 2 * raw.index.len());
    r.push((
        raw.info_block as u64 * 64,
        raw.info_len as u64,
        fpath(&[PathSeg::Field("head"), PathSeg::Field("info_block")]),
        36,
    ));
    r.push((
        raw.features_block as u64 * 64,
        raw.features_len as u64,
        fpath(&[PathSeg::Field("head"), PathSeg::Field("features_block")]),
        44,
    ));
    for (k, e) in raw.index.iter().enumerate() {
        let at = raw.header_size as u64 + 16 * k as u64;
        r.push((
            e.main_block as u64 * 64,
            e.main_len as u64,
            Track::index_path(k, "main_block"),
            at,
        ));
        if e.terrain_len > 0 {
            r.push((
                e.terrain_block as u64 * 64,
                e.terrain_len as u64,
                Track::index_path(k, "terrain_block"),
                at + 8,
            ));
        }
    }
    for (start, n, path, at) in &r {
        if *start < area || start + n > len || *n == 0 {
            return Err(semantic(
                path.clone(),
                *at,
                format!(
                    "chunk {start}..{} is empty or outside the chunk area {area}..{len}",
                    start + n
                ),
            ));
        }
    }
    // The file ends with its furthest chunk, as the schema's root type reads it (bytes
    // after it belong to no chunk and would be lost on a rewrite).
    if let Some((start, n, path, at)) = r.iter().max_by_key(|(start, n, _, _)| start + n) {
        let furthest = start + n;
        if furthest < len {
            return Err(semantic(
                path.clone(),
                *at,
                format!(
                    "the last chunk ({start}..{furthest}) ends {} byte(s) before the end of the file; nothing may follow it",
                    len - furthest
                ),
            ));
        }
    }
    r.sort_by_key(|x| x.0);
    for w in r.windows(2) {
        if w[0].0 + w[0].1 > w[1].0 {
            return Err(semantic(
                w[1].2.clone(),
                w[1].3,
                format!(
                    "chunk at {} overlaps the chunk at {}..{}",
                    w[1].0,
                    w[0].0,
                    w[0].0 + w[0].1
                ),
            ));
        }
    }
    Ok(())
}

fn in_chunk(e: DecodeError, name: &'static str) -> DecodeError {
    e.in_field(name)
}

/// Number of windows for a frame span: the span divided by the window length, rounded up, at
/// least 1.
pub fn windows_for(first: u32, last: u32, len: u32) -> u64 {
    let span = last.saturating_sub(first) as u64;
    span.div_ceil(len.max(1) as u64).max(1)
}

/// Reads a decompressed chunk and checks it, its columns left where they lie in `bytes`
/// ([`ColumnChunk::in_place`]: nothing is copied, 12 bytes are kept per directory entry);
/// the columns may not share bytes ([`check_columns_apart`]). A chunk that breaks a rule is
/// read again with the generated raw layer (the directory, and through each entry's
/// positional instances the values of its column), whose error names it, so the errors are
/// the raw layer's.
///
/// Errors: the columns share bytes, the directory or a column does not fit the bytes (the
/// generated reader's error, under `directory`), or a rule of `ColumnChunk::new` is broken.
pub fn parse_chunk(bytes: &[u8]) -> Result<ColumnChunk<'_>, DecodeError> {
    if let Some(c) = ColumnChunk::in_place(bytes) {
        check_columns_apart(bytes)?;
        return Ok(c);
    }
    parse_chunk_read(bytes)
}

/// [`parse_chunk`] through the generated raw layer, which copies every column's values.
fn parse_chunk_read(bytes: &[u8]) -> Result<ColumnChunk<'_>, DecodeError> {
    check_columns_apart(bytes)?;
    let mut r = ByteReader::new(bytes);
    let dir = raw::ColumnDirectory::read_from(&mut r).map_err(|e| e.in_field("directory"))?;
    let mut entries = Vec::with_capacity(dir.columns.len());
    let mut values = Vec::with_capacity(dir.columns.len());
    for c in dir.columns {
        entries.push(DirEntry {
            id: c.id,
            code: c.type_code,
            offset: c.offset,
            count: c.count,
        });
        values.push(column_data(c));
    }
    ColumnChunk::new(bytes, entries, values)
}

/// The values the generated reader read for one directory entry (at most one of its
/// `*_values` instances is present: the one its type code selects).
fn column_data(c: raw::ColumnEntry) -> ColumnData {
    use ColumnData as D;
    match c {
        raw::ColumnEntry {
            u1_values: Some(v), ..
        } => D::U8(v),
        raw::ColumnEntry {
            u2_values: Some(v), ..
        } => D::U16(v),
        raw::ColumnEntry {
            s2_values: Some(v), ..
        } => D::I16(v),
        raw::ColumnEntry {
            u4_values: Some(v), ..
        } => D::U32(v),
        raw::ColumnEntry {
            s4_values: Some(v), ..
        } => D::I32(v),
        raw::ColumnEntry {
            f4_values: Some(v), ..
        } => D::F32(v),
        _ => D::Other,
    }
}

/// A chunk body (directory, data, 4 zero bytes) from a builder's columns, in rising order
/// of id: the generated writer of the schema's `chunk_body` places the columns after the
/// directory (each on a multiple of 4 bytes, in directory order), writes each entry's
/// offset and ends the chunk with the 4 zero bytes.
///
/// Errors: the chunk would pass 16,777,215 bytes.
pub fn build_chunk(b: cbtk_columns::ChunkBuilder) -> Result<Vec<u8>, EncodeError> {
    let body = raw::ChunkBody {
        directory: raw::ColumnDirectory {
            columns: b
                .finish()
                .into_iter()
                .map(|(id, v)| column_entry(id, v))
                .collect(),
        },
    };
    let mut w = ByteWriter::new();
    body.write_to(&mut w)?;
    w.lay_out_positional(&[])?;
    let bytes = w.into_bytes();
    if bytes.len() > cbtk_columns::LUA_MAX as usize {
        return Err(EncodeError::new(EncodeErrorKind::Semantic(format!(
            "decompressed chunk would be {} bytes, more than {}",
            bytes.len(),
            cbtk_columns::LUA_MAX
        ))));
    }
    Ok(bytes)
}

/// A directory entry with its values, as the generated writer takes it (the offset is the
/// writer's to choose).
fn column_entry(id: u16, v: ColumnData) -> raw::ColumnEntry {
    let mut c = raw::ColumnEntry {
        id,
        type_code: v.code(),
        offset: 0,
        count: v.len() as u32,
        u1_values: None,
        u2_values: None,
        s2_values: None,
        u4_values: None,
        s4_values: None,
        f4_values: None,
    };
    match v {
        ColumnData::U8(v) => c.u1_values = Some(v),
        ColumnData::U16(v) => c.u2_values = Some(v),
        ColumnData::I16(v) => c.s2_values = Some(v),
        ColumnData::U32(v) => c.u4_values = Some(v),
        ColumnData::I32(v) => c.s4_values = Some(v),
        ColumnData::F32(v) => c.f4_values = Some(v),
        ColumnData::Other => {}
    }
    c
}

/// The header's values with their units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Recorder version.
    pub recorder_version: u16,
    /// Simulation frames per second.
    pub frames_per_second: u16,
    /// First frame recorded.
    pub first_frame: u32,
    /// Last frame recorded.
    pub last_frame: u32,
    /// Window length in frames (1..=65,535).
    pub window_length: u32,
    /// Number of windows.
    pub num_windows: u32,
    /// Tolerance in elmos.
    pub tolerance_elmos: f32,
    /// Position step is 1 / 2^position_shift elmo.
    pub position_shift: u8,
    /// Velocity step is 1 / 2^velocity_shift elmo per frame.
    pub velocity_shift: u8,
    /// Rotation bits (8..=16).
    pub rotation_bits: u8,
    /// Frames between the recorder's unit samples (information only).
    pub sample_interval: u8,
    /// Units, projectiles and features in the match.
    pub num_units: u32,
    /// Projectiles in the match.
    pub num_projectiles: u32,
    /// Features in the match.
    pub num_features: u32,
    /// The replay's game id.
    pub game_id: [u8; 16],
    /// Resource tolerance.
    pub resource_tolerance: f32,
    /// Resource fraction.
    pub resource_fraction: f32,
}

impl Header {
    /// The values of a raw header.
    pub fn from_raw(r: &CbtkHead) -> Self {
        let mut game_id = [0; 16];
        let n = r.game_id.len().min(16);
        game_id[..n].copy_from_slice(&r.game_id[..n]);
        Self {
            recorder_version: r.recorder_version,
            frames_per_second: r.frames_per_second,
            first_frame: r.first_frame,
            last_frame: r.last_frame,
            window_length: r.window_length,
            num_windows: r.index.len() as u32,
            tolerance_elmos: r.tolerance,
            position_shift: r.position_shift,
            velocity_shift: r.velocity_shift,
            rotation_bits: r.rotation_bits,
            sample_interval: r.sample_interval,
            num_units: r.num_units,
            num_projectiles: r.num_projectiles,
            num_features: r.num_features,
            game_id,
            resource_tolerance: r.resource_tolerance,
            resource_fraction: r.resource_fraction,
        }
    }

    /// Position step in elmos.
    pub fn pos_step(&self) -> f64 {
        1.0 / (1u64 << self.position_shift.min(62)) as f64
    }

    /// Velocity step in elmos per frame.
    pub fn vel_step(&self) -> f64 {
        1.0 / (1u64 << self.velocity_shift.min(62)) as f64
    }

    /// First and last frame of window `k`.
    pub fn window_span(&self, k: usize) -> (u32, u32) {
        let start = self.first_frame as u64 + k as u64 * self.window_length as u64;
        let end = (start + self.window_length as u64).min(self.last_frame as u64);
        (start as u32, end.max(start) as u32)
    }

    /// The window holding `frame`, or `None` outside the track.
    pub fn window_of(&self, frame: f64) -> Option<usize> {
        if !frame.is_finite() || frame < self.first_frame as f64 || frame > self.last_frame as f64 {
            return None;
        }
        let k = ((frame - self.first_frame as f64) / self.window_length as f64).floor() as usize;
        Some(k.min(self.num_windows.max(1) as usize - 1))
    }

    /// What a thinned team number sample may be from the track:
    /// `max(resource tolerance, resource fraction x |sample|)`.
    pub fn value_allowance(&self, sample: f64) -> f64 {
        (self.resource_tolerance as f64).max(self.resource_fraction as f64 * sample.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use statepack_runtime::cbtk_columns::{deflate, ChunkBuilder};

    /// A one-window track whose main chunk is `body`, written by [`writer::FileWriter`]
    /// (which keeps every chunk within the ratio), and the same track with the main chunk
    /// compressed at level 9 whatever its ratio (the main chunk is the file's last).
    fn track_with_main(body: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let params = writer::FileParams {
            first_frame: 0,
            last_frame: 900,
            window_length: 900,
            ..writer::FileParams::default()
        };
        let mut out = std::io::Cursor::new(Vec::new());
        let mut fw = writer::FileWriter::new(&mut out, params, &Info::default(), &[]).unwrap();
        fw.push_window(body, None).unwrap();
        fw.finish(0, 0).unwrap();
        let written = out.into_inner();
        let t = Track::open(&written).unwrap();
        let main_block = t.raw.index[0].main_block;
        let z = deflate(body, 9);
        let mut level9 = written[..main_block as usize * 64].to_vec();
        level9.extend_from_slice(&z);
        let at = t.raw.header_size as usize + 4;
        level9[at..at + 4].copy_from_slice(&(z.len() as u32).to_le_bytes());
        (written, level9)
    }

    fn body_of(zeros: usize, noise: usize) -> Vec<u8> {
        let mut b = ChunkBuilder::new();
        b.put::<u8>(200, "zeros", &vec![0; zeros]).unwrap();
        let mut x = 1u32;
        let random: Vec<u8> = (0..noise)
            .map(|_| {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (x >> 24) as u8
            })
            .collect();
        b.put::<u8>(201, "noise", &random).unwrap();
        build_chunk(b).unwrap()
    }

    /// A chunk may inflate to at most 64 times its length: past it every reader refuses the
    /// chunk by name (the raw layer's path, the index field for the format module), and the
    /// writer stores such a chunk less compressed so that its track reads.
    #[test]
    fn a_chunk_inflates_to_at_most_64_times_its_length() {
        let body = body_of(1_000_000, 0);
        let z9 = deflate(&body, 9);
        assert!(
            body.len() > 64 * z9.len(),
            "level 9 compresses zeros past the limit"
        );
        let e = inflate_chunk(&z9).unwrap_err();
        assert!(e.contains("64 times its"), "{e}");
        let (written, level9) = track_with_main(&body);
        // Written: within the ratio, and it reads.
        let t = Track::open(&written).unwrap();
        let main_len = t.raw.index[0].main_len as usize;
        assert!(
            body.len() <= 64 * main_len,
            "{} from {main_len}",
            body.len()
        );
        decode_all(&written).unwrap();
        check_raw_limits(&written).unwrap();
        assert!((crate::formats::cbtrack::FORMAT.decode_raw)(&written).is_ok());
        // At level 9: refused by the full decode, the raw entry points and the track.
        let full = decode_all(&level9).unwrap_err().to_string();
        assert!(
            full.starts_with("head.index[0].main_block") && full.contains("64 times"),
            "{full}"
        );
        let raw = (crate::formats::cbtrack::FORMAT.decode_raw)(&level9)
            .unwrap_err()
            .to_string();
        assert!(
            raw.starts_with("windows[0].main (byte offset") && raw.contains("at most 64 times"),
            "{raw}"
        );
        assert!(Track::open(&level9).unwrap().window(0).is_err());
        // Just within the ratio: reads at level 9.
        let mut noise = 1_000_000 / 80;
        let within = loop {
            let b = body_of(1_000_000, noise);
            if b.len() <= 64 * deflate(&b, 9).len() {
                break b;
            }
            noise += 1_000;
        };
        let (_, level9) = track_with_main(&within);
        decode_all(&level9).unwrap();
        check_raw_limits(&level9).unwrap();
    }

    /// Columns of known types may not share bytes; unknown types read nothing and may.
    #[test]
    fn columns_that_share_bytes_are_refused() {
        let mut b = ChunkBuilder::new();
        b.put::<u16>(1, "a", &[1, 2, 3, 4]).unwrap();
        b.put::<u16>(3, "b", &[5, 6, 7, 8]).unwrap();
        let mut body = build_chunk(b).unwrap();
        check_columns_apart(&body).unwrap();
        parse_chunk(&body).unwrap();
        // Point the second entry at the first one's bytes.
        let first = body[8..12].to_vec();
        body[20..24].copy_from_slice(&first);
        let e = parse_chunk(&body).map(|_| ()).unwrap_err().to_string();
        assert!(
            e.starts_with("directory.columns[1] (byte offset 16)") && e.contains("share bytes"),
            "{e}"
        );
        // An entry of an unknown type there reads nothing: no overlap.
        body[18..20].copy_from_slice(&9u16.to_le_bytes());
        check_columns_apart(&body).unwrap();
    }

    /// Team ids are u8: an info chunk lists at most 256 teams, and the writer refuses more.
    #[test]
    fn at_most_256_teams() {
        let mut info = Info {
            teams: vec![TeamInfo::default(); MAX_TEAMS],
            ..Info::default()
        };
        let c = info.to_columns().unwrap();
        assert_eq!(Info::from_columns(&c).unwrap().teams.len(), MAX_TEAMS);
        let mut c = c;
        c.team_ids.push(0);
        let e = Info::from_columns(&c).unwrap_err().to_string();
        assert!(
            e.starts_with("team_ids") && e.contains("at most 256"),
            "{e}"
        );
        info.teams.push(TeamInfo::default());
        assert!(info
            .to_columns()
            .unwrap_err()
            .to_string()
            .contains("at most 256"));
    }
}
