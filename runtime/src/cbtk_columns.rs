//! Column chunks: typed columns behind a directory, zlib framing, and the column codecs.
//!
//! A column chunk (after decompression) is a `u32` column count, one 12-byte directory entry
//! per column (`u16` id, `u16` type code, `u32` offset from the chunk start, `u32` count), the
//! data of every column starting on a multiple of 4 bytes, and 4 zero bytes at the end. Type
//! codes: 1 u8, 2 u16, 3 s16, 4 u32, 5 s32, 6 f32, all little-endian. The generated raw layer
//! reads the directory and, through each entry's positional instances, the values of every
//! column of a known type; [`ColumnChunk`] checks the directory against the chunk and hands
//! out those columns by id, and [`ChunkBuilder`] collects columns for the generated writer,
//! which lays them out (the schema says where: `-sp-align` and `-sp-end-zeros`). Both follow
//! the CBTK v1 spec's "Chunks" section; the codecs below follow "How a column stores values".
//!
//! Codecs (each works on one curve at a time; columns hold the curves end to end):
//! - time: `u16` frames since the previous key ([`time_encode`], [`time_decode`]);
//! - difference with an escape: an `s16` narrow column with one value per key and an `s32`
//!   wide column for escaped keys (narrow value -32,768); the first key of every curve is
//!   escaped and a wide value is within ±16,777,215 ([`EscapeEncoder`], [`EscapeDecoder`]);
//! - wrapping difference: `u16` differences modulo 65,536 from a running value that starts at
//!   0 for each curve, read as signed when the field is signed ([`wrap_encode`],
//!   [`wrap_decode`]).

use crate::io::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind, FieldPath, PathSeg};
/// The zlib framing of column chunks: one zlib stream per chunk body (feature `zlib`).
#[cfg(feature = "zlib")]
pub use crate::zlib::{deflate, inflate};

/// The largest value the engine's 32-bit-float Lua holds exactly as a whole number below
/// 2^24; the spec's limit for stored values, wide values, chunk sizes and header fields.
pub const LUA_MAX: u32 = 16_777_215;

/// The escape value of a narrow difference column.
pub const ESCAPE: i16 = i16::MIN;

/// One type a column can hold, with its type code and little-endian width.
pub trait ColumnValue: Copy + Default {
    /// Type code stored in the directory (1 u8, 2 u16, 3 s16, 4 u32, 5 s32, 6 f32).
    const CODE: u16;
    /// Bytes per value.
    const SIZE: usize;
    /// The values, when `data` holds this type.
    fn slice(data: &ColumnData) -> Option<&[Self]>;
    /// `values` as [`ColumnData`] (a copy).
    fn to_data(values: &[Self]) -> ColumnData;
    /// Appends the value's bytes.
    fn put_le(self, out: &mut Vec<u8>);
    /// The value stored little-endian in the first [`Self::SIZE`] bytes of `b`.
    fn read_le(b: &[u8]) -> Self;
    /// `b` (a whole number of values) seen in place as values, when this target stores
    /// them as the format does (little-endian) and `b` is aligned for them; `None` otherwise.
    fn in_place(b: &[u8]) -> Option<&[Self]>;
}

macro_rules! column_value {
    ($t:ty, $code:expr, $variant:ident) => {
        impl ColumnValue for $t {
            const CODE: u16 = $code;
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline]
            fn slice(data: &ColumnData) -> Option<&[Self]> {
                match data {
                    ColumnData::$variant(v) => Some(v),
                    _ => None,
                }
            }
            #[inline]
            fn to_data(values: &[Self]) -> ColumnData {
                ColumnData::$variant(values.to_vec())
            }
            #[inline]
            fn put_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            #[inline]
            fn read_le(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(&b[..std::mem::size_of::<$t>()]);
                <$t>::from_le_bytes(a)
            }
            #[inline]
            fn in_place(b: &[u8]) -> Option<&[Self]> {
                if cfg!(target_endian = "big") {
                    return None;
                }
                // SAFETY: every bit pattern is a valid value of this type (an integer or an
                // f32), and `align_to` hands out only the aligned middle part, checked below
                // to be the whole of `b`.
                let (head, mid, tail) = unsafe { b.align_to::<$t>() };
                (head.is_empty() && tail.is_empty()).then_some(mid)
            }
        }
    };
}
column_value!(u8, 1, U8);
column_value!(u16, 2, U16);
column_value!(i16, 3, I16);
column_value!(u32, 4, U32);
column_value!(i32, 5, I32);
column_value!(f32, 6, F32);

/// The values of one column as the generated reader read them (the schema's
/// `column_entry.*_values` instances), by type code.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum ColumnData {
    /// Type code 1.
    U8(Vec<u8>),
    /// Type code 2.
    U16(Vec<u16>),
    /// Type code 3.
    I16(Vec<i16>),
    /// Type code 4.
    U32(Vec<u32>),
    /// Type code 5.
    I32(Vec<i32>),
    /// Type code 6.
    F32(Vec<f32>),
    /// A type code the format does not define: nothing was read.
    #[default]
    Other,
}

impl ColumnData {
    /// Number of values held (0 for [`ColumnData::Other`]).
    pub fn len(&self) -> usize {
        match self {
            ColumnData::U8(v) => v.len(),
            ColumnData::U16(v) => v.len(),
            ColumnData::I16(v) => v.len(),
            ColumnData::U32(v) => v.len(),
            ColumnData::I32(v) => v.len(),
            ColumnData::F32(v) => v.len(),
            ColumnData::Other => 0,
        }
    }

    /// True when no value is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The type code of the values held (see [`ColumnValue::CODE`]); 0 for
    /// [`ColumnData::Other`], which no column of a known type has.
    pub fn code(&self) -> u16 {
        match self {
            ColumnData::U8(_) => 1,
            ColumnData::U16(_) => 2,
            ColumnData::I16(_) => 3,
            ColumnData::U32(_) => 4,
            ColumnData::I32(_) => 5,
            ColumnData::F32(_) => 6,
            ColumnData::Other => 0,
        }
    }
}

/// Bytes per value of a type code, or `None` for a code the format does not define.
pub fn code_size(code: u16) -> Option<usize> {
    match code {
        1 => Some(1),
        2 | 3 => Some(2),
        4..=6 => Some(4),
        _ => None,
    }
}

/// One directory entry as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirEntry {
    /// Column id.
    pub id: u16,
    /// Type code (see [`ColumnValue::CODE`]).
    pub code: u16,
    /// Offset of the data from the start of the decompressed chunk, in bytes.
    pub offset: u32,
    /// Number of values.
    pub count: u32,
}

fn chunk_err(path: FieldPath, offset: u64, msg: String) -> DecodeError {
    DecodeError::at(path, offset, DecodeErrorKind::Semantic(msg))
}

fn entry_path(i: usize, field: &'static str) -> FieldPath {
    FieldPath::from_segments([
        PathSeg::Field("directory"),
        PathSeg::Field("columns"),
        PathSeg::Index(i),
        PathSeg::Field(field),
    ])
}

/// A decompressed chunk whose directory has been checked against its bytes, with the values
/// of its columns.
#[derive(Debug, Clone)]
pub struct ColumnChunk<'a> {
    bytes: &'a [u8],
    entries: Vec<DirEntry>,
    /// The values the raw layer read, one list per entry; empty for a chunk read in place.
    values: Vec<ColumnData>,
    /// True when the columns are read from `bytes` where they lie ([`ColumnChunk::in_place`]).
    in_place: bool,
}

impl<'a> ColumnChunk<'a> {
    /// Checks `entries` (as the raw layer read them from the start of `bytes`, with
    /// `values[i]` the values it read for entry `i`) against the chunk: one value list per
    /// entry holding `count` values of the entry's type, ids strictly rising, every column of a known type 4-byte aligned, after the
    /// directory and ending at or before the 4 trailing zero bytes, which must be there.
    /// Columns of an unknown type code are kept but never read. Offsets in errors are
    /// offsets into the decompressed chunk.
    ///
    /// Errors: the first rule broken, naming the directory entry.
    pub fn new(
        bytes: &'a [u8],
        entries: Vec<DirEntry>,
        values: Vec<ColumnData>,
    ) -> Result<Self, DecodeError> {
        if values.len() != entries.len() {
            return Err(chunk_err(
                FieldPath::from_segments([PathSeg::Field("directory")]),
                0,
                format!(
                    "{} value lists for {} directory entries",
                    values.len(),
                    entries.len()
                ),
            ));
        }
        let dir_end = 4u64 + 12 * entries.len() as u64;
        let len = bytes.len() as u64;
        if len > LUA_MAX as u64 {
            return Err(chunk_err(
                FieldPath::new(),
                0,
                format!("decompressed chunk is {len} bytes, more than {LUA_MAX}"),
            ));
        }
        if len < dir_end + 4 || bytes[bytes.len() - 4..] != [0, 0, 0, 0] {
            return Err(chunk_err(
                FieldPath::from_segments([PathSeg::Field("data")]),
                len.saturating_sub(4),
                "chunk does not end with 4 zero bytes after its directory".into(),
            ));
        }
        let data_end = len - 4;
        let mut prev: Option<u16> = None;
        for (i, e) in entries.iter().enumerate() {
            let at = 4 + 12 * i as u64;
            if prev.is_some_and(|p| e.id <= p) {
                return Err(chunk_err(
                    entry_path(i, "id"),
                    at,
                    format!(
                        "column id {} does not rise above {} (ids are listed once, in rising order)",
                        e.id,
                        prev.unwrap_or(0)
                    ),
                ));
            }
            prev = Some(e.id);
            let Some(size) = code_size(e.code) else {
                continue;
            };
            let off = e.offset as u64;
            if !off.is_multiple_of(4) || off < dir_end {
                return Err(chunk_err(
                    entry_path(i, "offset"),
                    at + 4,
                    format!(
                        "column {} starts at {off}, which is not a multiple of 4 after the directory (ends at {dir_end})",
                        e.id
                    ),
                ));
            }
            let end = off + e.count as u64 * size as u64;
            let held = &values[i];
            let right_type = match e.code {
                1 => matches!(held, ColumnData::U8(_)),
                2 => matches!(held, ColumnData::U16(_)),
                3 => matches!(held, ColumnData::I16(_)),
                4 => matches!(held, ColumnData::U32(_)),
                5 => matches!(held, ColumnData::I32(_)),
                _ => matches!(held, ColumnData::F32(_)),
            };
            if !right_type || held.len() as u64 != e.count as u64 {
                return Err(chunk_err(
                    entry_path(i, "count"),
                    at + 8,
                    format!(
                        "column {} lists {} values of type code {}, {} were read",
                        e.id,
                        e.count,
                        e.code,
                        held.len()
                    ),
                ));
            }
            if end > data_end {
                return Err(chunk_err(
                    entry_path(i, "count"),
                    at + 8,
                    format!(
                        "column {} has {} values of {size} bytes from offset {off}, past the data's end at {data_end}",
                        e.id, e.count
                    ),
                ));
            }
        }
        Ok(Self {
            bytes,
            entries,
            values,
            in_place: false,
        })
    }

    /// The most entries a directory can list: ids are `u16` and strictly rising.
    pub const MAX_ENTRIES: usize = 1 << 16;

    /// A decompressed chunk whose columns are read where they lie in `bytes`, nothing copied:
    /// the directory is read here, 12 bytes per entry, and every value the schema's
    /// `column_entry` would read is checked in place. `Some` only when every rule holds: the
    /// rules of [`ColumnChunk::new`], the schema's limits (offsets and counts at most
    /// 16,777,215; `u4` values at most that, `s4` values within plus or minus that), the
    /// directory and every column of a known type within the chunk, and at most
    /// [`Self::MAX_ENTRIES`] entries. On `None` the chunk breaks some rule, and the reader
    /// that keeps the values (the raw layer, then [`ColumnChunk::new`]) names the first.
    /// Memory: the entries (at most 65,536 of 12 bytes).
    pub fn in_place(bytes: &'a [u8]) -> Option<Self> {
        let len = bytes.len();
        if len > LUA_MAX as usize || len < 8 || bytes[len - 4..] != [0, 0, 0, 0] {
            return None;
        }
        let n = u32::from_le_bytes(bytes[..4].try_into().ok()?) as usize;
        let dir_end = 4 + 12 * n.min(Self::MAX_ENTRIES + 1);
        if n > Self::MAX_ENTRIES || dir_end + 4 > len {
            return None;
        }
        let data_end = len - 4;
        let mut entries = Vec::with_capacity(n);
        let mut prev: Option<u16> = None;
        for e in bytes[4..dir_end].chunks_exact(12) {
            let u16_at = |i: usize| u16::from_le_bytes([e[i], e[i + 1]]);
            let u32_at = |i: usize| u32::from_le_bytes([e[i], e[i + 1], e[i + 2], e[i + 3]]);
            let d = DirEntry {
                id: u16_at(0),
                code: u16_at(2),
                offset: u32_at(4),
                count: u32_at(8),
            };
            if prev.is_some_and(|p| d.id <= p) || d.offset > LUA_MAX || d.count > LUA_MAX {
                return None;
            }
            prev = Some(d.id);
            if let Some(size) = code_size(d.code) {
                let off = d.offset as usize;
                let end = off + d.count as usize * size;
                if !off.is_multiple_of(4) || off < dir_end || end > data_end {
                    return None;
                }
                let limit = LUA_MAX as i64;
                let fits = match d.code {
                    4 => bytes[off..end]
                        .chunks_exact(4)
                        .all(|b| <u32 as ColumnValue>::read_le(b) <= LUA_MAX),
                    5 => bytes[off..end]
                        .chunks_exact(4)
                        .all(|b| (<i32 as ColumnValue>::read_le(b) as i64).abs() <= limit),
                    _ => true,
                };
                if !fits {
                    return None;
                }
            }
            entries.push(d);
        }
        Some(Self {
            bytes,
            entries,
            values: Vec::new(),
            in_place: true,
        })
    }

    /// The directory entries, in stored order.
    pub fn entries(&self) -> &[DirEntry] {
        &self.entries
    }

    /// The chunk's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The values of column `id` as `T`. A column that is not listed, or that has a type code
    /// the format does not define, gives an empty list (the spec: a missing column has no
    /// values; readers skip unknown types). `path` names the column in errors.
    ///
    /// Errors: the column is listed with another known type than `T`.
    pub fn column<T: ColumnValue>(
        &self,
        id: u16,
        path: &'static str,
    ) -> Result<Vec<T>, DecodeError> {
        let Ok(i) = self.entries.binary_search_by_key(&id, |e| e.id) else {
            return Ok(Vec::new());
        };
        let e = self.entries[i];
        if code_size(e.code).is_none() {
            return Ok(Vec::new());
        }
        if e.code != T::CODE {
            return Err(chunk_err(
                FieldPath::from_segments([PathSeg::Field(path)]),
                4 + 12 * i as u64 + 2,
                format!(
                    "column {id} has type code {}, the format defines it as type code {}",
                    e.code,
                    T::CODE
                ),
            ));
        }
        Ok(self.values_of::<T>(i).into_owned())
    }

    /// [`ColumnChunk::column`] without a copy where it can: the values of a chunk read in
    /// place ([`ColumnChunk::in_place`]) are borrowed from its bytes on a little-endian
    /// target (copied otherwise, and for a chunk whose values the raw layer read).
    ///
    /// Errors: as for [`ColumnChunk::column`].
    pub fn column_ref<T: ColumnValue>(
        &self,
        id: u16,
        path: &'static str,
    ) -> Result<std::borrow::Cow<'a, [T]>, DecodeError> {
        let Ok(i) = self.entries.binary_search_by_key(&id, |e| e.id) else {
            return Ok(std::borrow::Cow::Borrowed(&[]));
        };
        let e = self.entries[i];
        if code_size(e.code).is_none() {
            return Ok(std::borrow::Cow::Borrowed(&[]));
        }
        if e.code != T::CODE {
            return Err(chunk_err(
                FieldPath::from_segments([PathSeg::Field(path)]),
                4 + 12 * i as u64 + 2,
                format!(
                    "column {id} has type code {}, the format defines it as type code {}",
                    e.code,
                    T::CODE
                ),
            ));
        }
        Ok(self.values_of::<T>(i))
    }

    /// The values of entry `i`, whose type code is `T`'s.
    fn values_of<T: ColumnValue>(&self, i: usize) -> std::borrow::Cow<'a, [T]> {
        use std::borrow::Cow;
        if !self.in_place {
            return Cow::Owned(
                T::slice(&self.values[i])
                    .map(<[T]>::to_vec)
                    .unwrap_or_default(),
            );
        }
        let e = self.entries[i];
        let off = e.offset as usize;
        let b = &self.bytes[off..off + e.count as usize * T::SIZE];
        match T::in_place(b) {
            Some(v) => Cow::Borrowed(v),
            None => Cow::Owned(b.chunks_exact(T::SIZE).map(T::read_le).collect()),
        }
    }
}

/// Collects the columns of a chunk body, by id. It does not lay them out: the generated
/// writer of the schema's `chunk_body` places them (after the directory, in directory order,
/// each on a multiple of 4 bytes, then the 4 trailing zero bytes) and writes each entry's
/// offset. Empty columns are left out, as the spec asks of writers.
#[derive(Debug, Default, Clone)]
pub struct ChunkBuilder {
    cols: Vec<(u16, ColumnData)>,
}

impl ChunkBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds column `id` with `values` (nothing when `values` is empty). `path` names the
    /// column in errors.
    ///
    /// Errors: the id was already added, or the count does not fit in u32.
    pub fn put<T: ColumnValue>(
        &mut self,
        id: u16,
        path: &'static str,
        values: &[T],
    ) -> Result<(), EncodeError> {
        if values.is_empty() {
            return Ok(());
        }
        let perr = |kind| EncodeError::at(FieldPath::from_segments([PathSeg::Field(path)]), kind);
        if self.cols.iter().any(|c| c.0 == id) {
            return Err(perr(EncodeErrorKind::Semantic(format!(
                "column {id} added twice"
            ))));
        }
        if u32::try_from(values.len()).is_err() {
            return Err(perr(EncodeErrorKind::OutOfRange {
                value: values.len().to_string(),
                ty: "u32",
            }));
        }
        self.cols.push((id, T::to_data(values)));
        Ok(())
    }

    /// True when no column was added.
    pub fn is_empty(&self) -> bool {
        self.cols.is_empty()
    }

    /// The columns in rising order of id, each with its values (type code and count follow
    /// from them: [`ColumnData::code`], [`ColumnData::len`]).
    pub fn finish(mut self) -> Vec<(u16, ColumnData)> {
        self.cols.sort_by_key(|c| c.0);
        self.cols
    }
}

/// Checks that the decompressed chunk `bytes` is laid out as the generated writer of the
/// schema's `chunk_body` writes the values its reader reads from it (`-sp-align: 4` columns,
/// `-sp-end-zeros: 4`): after the directory, each column of a known type code on the next
/// multiple of 4 bytes after the one before, in directory order, zero bytes up to the next
/// multiple of 4 after each, then 4 zero bytes and nothing after (a column of another type
/// code has no data in the layout). For the readers that check a chunk where it lies (the
/// full decode and the structure events, without the generated reader): the generated
/// reader's check (`ByteReader::check_packed_rest`) with the same error, over the
/// directory's entries, nothing allocated. The directory and the columns must lie within
/// `bytes` (as reading them checked).
///
/// Errors: `Semantic` at the first byte out of place.
pub fn check_laid_out(bytes: &[u8]) -> Result<(), DecodeError> {
    let n = bytes
        .get(0..4)
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
    let dir_end = (4 + 12 * n.min(bytes.len() / 12)).min(bytes.len());
    let placed = bytes[4.min(dir_end)..dir_end]
        .chunks_exact(12)
        .filter_map(|e| {
            let size = code_size(u16::from_le_bytes([e[2], e[3]]))?;
            let offset = u32::from_le_bytes([e[4], e[5], e[6], e[7]]) as usize;
            let count = u32::from_le_bytes([e[8], e[9], e[10], e[11]]) as usize;
            Some((offset, count.saturating_mul(size), 4))
        });
    crate::positional::check_packed(bytes, 0, dir_end, placed, 4)
}

/// Adler-32 of `bytes` (the checksum a zlib stream ends with).
pub fn adler32(bytes: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in bytes.chunks(5552) {
        for &x in chunk {
            a += x as u32;
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    (b << 16) | a
}

/// A value that does not fit its column, or a key order the codec cannot store.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CodecError {
    /// A value is outside what the column can store.
    #[error("{what} {value} does not fit: {rule}")]
    DoesNotFit {
        /// What the value is (`time`, `wide value`, ...).
        what: &'static str,
        /// The value.
        value: i64,
        /// The limit broken.
        rule: &'static str,
    },
}

/// Time column of one curve: frames since the previous key, the first since `start` (all
/// frames as offsets in one window). Appends to `out`.
///
/// Errors: keys not strictly rising after the first, or a gap over 65,535.
pub fn time_encode(frames: &[u32], start: u32, out: &mut Vec<u16>) -> Result<(), CodecError> {
    let mut prev = start;
    for (i, &f) in frames.iter().enumerate() {
        let d = f as i64 - prev as i64;
        if d < 0 || (i > 0 && d == 0) || d > 65535 {
            return Err(CodecError::DoesNotFit {
                what: "time",
                value: d,
                rule: "keys of one curve rise, one per frame, at most 65,535 frames apart",
            });
        }
        out.push(d as u16);
        prev = f;
    }
    Ok(())
}

/// Reads one curve's times (offsets in the window) from a time column.
pub fn time_decode(times: &[u16]) -> Vec<u32> {
    let mut acc = 0u32;
    times
        .iter()
        .map(|&t| {
            acc += t as u32;
            acc
        })
        .collect()
}

/// Writer of a difference-with-escape column pair (narrow `s16`, wide `s32`).
#[derive(Debug, Default, Clone)]
pub struct EscapeEncoder {
    /// The narrow column, one value per key.
    pub narrow: Vec<i16>,
    /// The wide column, one value per escaped key.
    pub wide: Vec<i32>,
}

impl EscapeEncoder {
    /// Appends one curve: its first key escaped, later keys as differences when the difference
    /// is within ±32,767, escaped otherwise.
    ///
    /// Errors: a value outside ±16,777,215 (what a wide value may hold).
    pub fn curve(&mut self, values: &[i32]) -> Result<(), CodecError> {
        let mut prev: Option<i32> = None;
        for &v in values {
            if v.unsigned_abs() > LUA_MAX {
                return Err(CodecError::DoesNotFit {
                    what: "value",
                    value: v as i64,
                    rule: "a wide value is between -16,777,215 and 16,777,215",
                });
            }
            match prev {
                Some(p) if (v as i64 - p as i64).abs() <= 32767 => self.narrow.push((v - p) as i16),
                _ => {
                    self.narrow.push(ESCAPE);
                    self.wide.push(v);
                }
            }
            prev = Some(v);
        }
        Ok(())
    }
}

/// Reader of a difference-with-escape column pair, one curve at a time.
#[derive(Debug, Clone)]
pub struct EscapeDecoder<'a> {
    narrow: &'a [i16],
    wide: &'a [i32],
    ni: usize,
    wi: usize,
}

impl<'a> EscapeDecoder<'a> {
    /// A reader at the start of both columns.
    pub fn new(narrow: &'a [i16], wide: &'a [i32]) -> Self {
        Self {
            narrow,
            wide,
            ni: 0,
            wi: 0,
        }
    }

    /// Reads the next curve of `n` keys into `out` (cleared first). The running value starts
    /// at 0 for each curve (a writer escapes the first key, so it is never used).
    ///
    /// Errors: the narrow or the wide column runs out (a message naming which).
    pub fn curve(&mut self, n: usize, out: &mut Vec<i32>) -> Result<(), &'static str> {
        out.clear();
        if self.narrow.len() - self.ni < n {
            return Err("narrow column has fewer values than the keys");
        }
        let mut acc: i64 = 0;
        for &d in &self.narrow[self.ni..self.ni + n] {
            if d == ESCAPE {
                let Some(&w) = self.wide.get(self.wi) else {
                    return Err("wide column has fewer values than the escapes");
                };
                self.wi += 1;
                acc = w as i64;
            } else {
                acc += d as i64;
            }
            out.push(acc.clamp(i32::MIN as i64, i32::MAX as i64) as i32);
        }
        self.ni += n;
        Ok(())
    }
}

/// Appends one curve as a wrapping difference column (`u16`, running value from 0, modulo
/// 65,536). `values` are the stored 16-bit patterns (a signed value as its two's complement).
pub fn wrap_encode(values: &[u16], out: &mut Vec<u16>) {
    let mut prev = 0u16;
    for &v in values {
        out.push(v.wrapping_sub(prev));
        prev = v;
    }
}

/// Reads one curve of a wrapping difference column back to its 16-bit patterns.
pub fn wrap_decode(stored: &[u16], out: &mut Vec<u16>) {
    out.clear();
    let mut acc = 0u16;
    for &d in stored {
        acc = acc.wrapping_add(d);
        out.push(acc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the generated reader hands over for `dir`: each entry's values read from
    /// `bytes` at its offset (as far as the bytes go), `Other` for an unknown type code.
    fn values_of(bytes: &[u8], dir: &[DirEntry]) -> Vec<ColumnData> {
        dir.iter()
            .map(|e| {
                let Some(size) = code_size(e.code) else {
                    return ColumnData::Other;
                };
                let at = e.offset as usize;
                let n = (e.count as usize).min(bytes.len().saturating_sub(at) / size);
                let b = &bytes[at.min(bytes.len())..at.min(bytes.len()) + n * size];
                let w2 = |c: &[u8]| [c[0], c[1]];
                let w4 = |c: &[u8]| [c[0], c[1], c[2], c[3]];
                match e.code {
                    1 => ColumnData::U8(b.to_vec()),
                    2 => ColumnData::U16(b.chunks(2).map(|c| u16::from_le_bytes(w2(c))).collect()),
                    3 => ColumnData::I16(b.chunks(2).map(|c| i16::from_le_bytes(w2(c))).collect()),
                    4 => ColumnData::U32(b.chunks(4).map(|c| u32::from_le_bytes(w4(c))).collect()),
                    5 => ColumnData::I32(b.chunks(4).map(|c| i32::from_le_bytes(w4(c))).collect()),
                    _ => ColumnData::F32(b.chunks(4).map(|c| f32::from_le_bytes(w4(c))).collect()),
                }
            })
            .collect()
    }

    #[test]
    fn escape_round_trip_and_first_key_escaped() {
        let mut e = EscapeEncoder::default();
        e.curve(&[5792, 5792, 6272]).unwrap();
        e.curve(&[-100_000, 0, 40_000, 40_001]).unwrap();
        assert_eq!(e.narrow, vec![ESCAPE, 0, 480, ESCAPE, ESCAPE, ESCAPE, 1]);
        assert_eq!(e.wide, vec![5792, -100_000, 0, 40_000]);
        let mut d = EscapeDecoder::new(&e.narrow, &e.wide);
        let mut out = Vec::new();
        d.curve(3, &mut out).unwrap();
        assert_eq!(out, vec![5792, 5792, 6272]);
        d.curve(4, &mut out).unwrap();
        assert_eq!(out, vec![-100_000, 0, 40_000, 40_001]);
        assert!(d.curve(1, &mut out).is_err());
    }

    #[test]
    fn escape_refuses_over_lua_limit() {
        let mut e = EscapeEncoder::default();
        assert!(e.curve(&[16_777_215, -16_777_215]).is_ok());
        assert!(e.curve(&[16_777_216]).is_err());
        assert!(e.curve(&[-16_777_216]).is_err());
    }

    #[test]
    fn narrow_edges() {
        let mut e = EscapeEncoder::default();
        e.curve(&[0, 32767, 0, -32767, -65535]).unwrap();
        assert_eq!(e.narrow, vec![ESCAPE, 32767, -32767, -32767, ESCAPE]);
        assert_eq!(e.wide, vec![0, -65535]);
    }

    #[test]
    fn wrapping_every_pair_round_trips() {
        let vals: Vec<u16> = (0..=65535u32).step_by(251).map(|v| v as u16).collect();
        let mut s = Vec::new();
        wrap_encode(&vals, &mut s);
        let mut back = Vec::new();
        wrap_decode(&s, &mut back);
        assert_eq!(back, vals);
        // signed reading: 0xFFFF is -1
        assert_eq!(back.iter().map(|&v| v as i16).next(), Some(0));
    }

    #[test]
    fn time_rules() {
        let mut o = Vec::new();
        time_encode(&[0, 300, 420], 0, &mut o).unwrap();
        assert_eq!(o, vec![0, 300, 120]);
        assert_eq!(time_decode(&o), vec![0, 300, 420]);
        assert!(time_encode(&[5, 5], 0, &mut o).is_err());
        assert!(time_encode(&[0, 65536], 0, &mut o).is_err());
    }

    /// A chunk of `cols` laid out as the schema's writer lays it out (directory, each
    /// column on a multiple of 4, 4 zero bytes): its entries and bytes.
    fn laid_out(cols: &[(u16, ColumnData)]) -> (Vec<DirEntry>, Vec<u8>) {
        let mut bytes = (cols.len() as u32).to_le_bytes().to_vec();
        bytes.resize(4 + 12 * cols.len(), 0);
        let mut dir = Vec::new();
        for (i, (id, v)) in cols.iter().enumerate() {
            let e = DirEntry {
                id: *id,
                code: v.code(),
                offset: bytes.len() as u32,
                count: v.len() as u32,
            };
            match v {
                ColumnData::U8(x) => x.iter().for_each(|&v| v.put_le(&mut bytes)),
                ColumnData::U16(x) => x.iter().for_each(|&v| v.put_le(&mut bytes)),
                ColumnData::I16(x) => x.iter().for_each(|&v| v.put_le(&mut bytes)),
                ColumnData::U32(x) => x.iter().for_each(|&v| v.put_le(&mut bytes)),
                ColumnData::I32(x) => x.iter().for_each(|&v| v.put_le(&mut bytes)),
                ColumnData::F32(x) => x.iter().for_each(|&v| v.put_le(&mut bytes)),
                ColumnData::Other => {}
            }
            bytes.resize(bytes.len().div_ceil(4) * 4, 0);
            let at = 4 + 12 * i;
            bytes[at..at + 2].copy_from_slice(&e.id.to_le_bytes());
            bytes[at + 2..at + 4].copy_from_slice(&e.code.to_le_bytes());
            bytes[at + 4..at + 8].copy_from_slice(&e.offset.to_le_bytes());
            bytes[at + 8..at + 12].copy_from_slice(&e.count.to_le_bytes());
            dir.push(e);
        }
        bytes.extend_from_slice(&[0; 4]);
        (dir, bytes)
    }

    #[test]
    fn builder_sorts_columns_and_chunk_checks() {
        let mut b = ChunkBuilder::new();
        b.put::<u8>(23, "c23", &[3, 3, 3]).unwrap();
        b.put::<u16>(1, "c1", &[7983]).unwrap();
        b.put::<i32>(9, "c9", &[]).unwrap();
        assert!(b.put::<u8>(1, "c1", &[1]).is_err());
        let cols = b.finish();
        assert_eq!(cols.len(), 2, "the empty column is left out");
        assert_eq!(cols[0], (1, ColumnData::U16(vec![7983])));
        let (dir, bytes) = laid_out(&cols);
        assert_eq!(dir[0].offset, 28);
        assert_eq!(dir[1].offset, 32);
        assert_eq!(bytes.len(), 28 + 4 + 4 + 4);
        check_laid_out(&bytes).unwrap();
        let c = ColumnChunk::new(&bytes, dir.clone(), values_of(&bytes, &dir)).unwrap();
        assert_eq!(c.column::<u16>(1, "c1").unwrap(), vec![7983]);
        assert_eq!(c.column::<u8>(23, "c23").unwrap(), vec![3, 3, 3]);
        assert!(c.column::<u32>(5, "c5").unwrap().is_empty());
        assert!(c.column::<i16>(1, "c1").is_err());
        // unknown type code: skipped
        let mut d2 = dir.clone();
        d2[0].code = 77;
        let c = ColumnChunk::new(&bytes, d2.clone(), values_of(&bytes, &d2)).unwrap();
        assert!(c.column::<u16>(1, "c1").unwrap().is_empty());
        // misaligned, past the end, ids not rising
        let mut d3 = dir.clone();
        d3[1].offset = 30;
        assert!(ColumnChunk::new(&bytes, d3.clone(), values_of(&bytes, &d3)).is_err());
        let mut d4 = dir.clone();
        d4[1].count = 5;
        assert!(ColumnChunk::new(&bytes, d4.clone(), values_of(&bytes, &d4)).is_err());
        let mut d5 = dir;
        d5[1].id = 1;
        assert!(ColumnChunk::new(&bytes, d5.clone(), values_of(&bytes, &d5)).is_err());
    }

    /// A chunk laid out otherwise than the writer lays it out is refused where it differs:
    /// a gap between columns, a non-zero padding byte, bytes after the trailing zeros.
    #[test]
    fn a_chunk_laid_out_otherwise_is_refused_where_it_differs() {
        let cols = vec![(1, ColumnData::U8(vec![5])), (2, ColumnData::U16(vec![6]))];
        let (_, bytes) = laid_out(&cols);
        check_laid_out(&bytes).unwrap();
        let mut pad = bytes.clone();
        pad[29] = 1;
        let e = check_laid_out(&pad).unwrap_err();
        assert_eq!(e.offset, 29, "{e}");
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(
            check_laid_out(&longer).unwrap_err().offset,
            bytes.len() as u64
        );
        // column 2 moved on by 4 bytes: its offset is not the derived one
        let mut moved = bytes[..32].to_vec();
        moved[16 + 4..16 + 8].copy_from_slice(&36u32.to_le_bytes());
        moved.extend_from_slice(&[0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0]);
        let e = check_laid_out(&moved).unwrap_err();
        assert_eq!(e.offset, 32, "{e}");
        assert!(
            e.to_string()
                .contains("an instance at byte 36, where the writer places it at byte 32"),
            "{e}"
        );
    }

    /// A chunk read in place hands out the values the raw layer reads, borrowed; a chunk
    /// that breaks a rule is not read in place.
    #[test]
    fn in_place_reads_what_the_raw_layer_reads() {
        let mut b = ChunkBuilder::new();
        b.put::<u16>(1, "c1", &[7983, 1, 65535]).unwrap();
        b.put::<u8>(2, "c2", &[3, 3, 3]).unwrap();
        b.put::<i32>(3, "c3", &[-16_777_215, 16_777_215]).unwrap();
        b.put::<f32>(4, "c4", &[0.5, -2.0]).unwrap();
        b.put::<i16>(5, "c5", &[-1, ESCAPE]).unwrap();
        b.put::<u32>(6, "c6", &[16_777_215]).unwrap();
        let (dir, bytes) = laid_out(&b.finish());
        let read = ColumnChunk::new(&bytes, dir.clone(), values_of(&bytes, &dir)).unwrap();
        let here = ColumnChunk::in_place(&bytes).expect("a valid chunk reads in place");
        assert_eq!(here.entries(), read.entries());
        assert_eq!(
            here.column::<u16>(1, "c1").unwrap(),
            read.column::<u16>(1, "c1").unwrap()
        );
        assert_eq!(here.column::<u8>(2, "c2").unwrap(), vec![3, 3, 3]);
        assert_eq!(
            *here.column_ref::<i32>(3, "c3").unwrap(),
            [-16_777_215, 16_777_215]
        );
        assert_eq!(*here.column_ref::<f32>(4, "c4").unwrap(), [0.5, -2.0]);
        assert_eq!(*here.column_ref::<i16>(5, "c5").unwrap(), [-1, ESCAPE]);
        assert_eq!(*here.column_ref::<u32>(6, "c6").unwrap(), [16_777_215]);
        assert!(here.column_ref::<u32>(9, "c9").unwrap().is_empty());
        assert!(here.column_ref::<i16>(1, "c1").is_err());
        if cfg!(target_endian = "little") && (bytes.as_ptr() as usize) % 4 == 0 {
            assert!(matches!(
                here.column_ref::<u16>(1, "c1").unwrap(),
                std::borrow::Cow::Borrowed(_)
            ));
        }
        // Each broken rule: not read in place (the raw layer names it).
        let set = |at: usize, v: &[u8]| {
            let mut b = bytes.clone();
            b[at..at + v.len()].copy_from_slice(v);
            b
        };
        let u32_col = dir[5].offset as usize;
        let s32_col = dir[2].offset as usize;
        for (what, b) in [
            ("ids not rising", set(4 + 12, &1u16.to_le_bytes())),
            ("misaligned", set(4 + 4, &(dir[0].offset + 2).to_le_bytes())),
            ("past the data", set(4 + 12 + 8, &1000u32.to_le_bytes())),
            (
                "count over the limit",
                set(4 + 8, &16_777_216u32.to_le_bytes()),
            ),
            (
                "u4 over the limit",
                set(u32_col, &16_777_216u32.to_le_bytes()),
            ),
            (
                "s4 under the limit",
                set(s32_col, &(-16_777_216i32).to_le_bytes()),
            ),
            (
                "more entries than the chunk",
                set(0, &1000u32.to_le_bytes()),
            ),
            ("no trailing zeros", set(bytes.len() - 1, &[1])),
        ] {
            assert!(ColumnChunk::in_place(&b).is_none(), "{what}");
        }
    }

    #[test]
    fn trailing_zeros() {
        // the 4 trailing bytes must be zero
        let mut bytes = vec![1, 0, 0, 0, 1, 0, 1, 0, 16, 0, 0, 0, 1, 0, 0, 0];
        bytes.extend_from_slice(&[7, 0, 0, 0, 0, 0, 0, 0]);
        let dir = vec![DirEntry {
            id: 1,
            code: 1,
            offset: 16,
            count: 1,
        }];
        assert!(ColumnChunk::new(&bytes, dir.clone(), values_of(&bytes, &dir)).is_ok());
        check_laid_out(&bytes).unwrap();
        bytes[23] = 1;
        assert!(ColumnChunk::new(&bytes, dir.clone(), values_of(&bytes, &dir)).is_err());
        assert_eq!(check_laid_out(&bytes).unwrap_err().offset, 23);
    }

    #[test]
    #[cfg(feature = "zlib")]
    fn a_chunk_body_ends_with_its_adler32() {
        let data = vec![7u8; 100_000];
        let z = deflate(&data, 9);
        let n = z.len();
        assert_eq!(z[n - 4..], adler32(&data).to_be_bytes());
        assert_eq!(inflate(&z, 100_000).unwrap(), data);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
    }
}
