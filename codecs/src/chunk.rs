//! Splitting a blob into chunks for a key-value store with a per-key size limit, and joining
//! them back, verified by length and CRC-32.
//!
//! The layout follows the replay store of the RPLY v3 reference implementation: chunk `i`
//! (1-based) lives under `<key>/<i>`, and a metadata record under `<key>/meta` says how
//! many chunks and bytes there are. This module adds a CRC-32 (IEEE 802.3, the zlib one) of
//! the whole blob to the record, so a lost, reordered or damaged chunk is an error on join
//! instead of a silently different replay.

use serde::{Deserialize, Serialize};

/// The reference implementation's chunk size: 3 MiB, under a DataStore key's 4 MB limit.
pub const DEFAULT_CHUNK_BYTES: usize = 3 * 1024 * 1024;

/// The metadata record stored under `<key>/meta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkMeta {
    /// Number of chunks (at least 1; an empty blob is one empty chunk).
    pub chunks: usize,
    /// Total length of the blob in bytes.
    pub bytes: usize,
    /// CRC-32 (IEEE) of the whole blob.
    pub crc32: u32,
}

/// Why chunks cannot be joined.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChunkError {
    /// A chunk key has no value.
    #[error("chunk `{0}` is missing")]
    Missing(String),
    /// The chunks add up to another length than the record says.
    #[error("chunks hold {found} bytes, the meta record says {expected}")]
    Length {
        /// Bytes the record promises.
        expected: usize,
        /// Bytes the chunks hold.
        found: usize,
    },
    /// The joined bytes have another checksum.
    #[error("CRC-32 of the joined bytes is {found:08x}, the meta record says {expected:08x}")]
    Checksum {
        /// The record's CRC-32.
        expected: u32,
        /// The joined bytes' CRC-32.
        found: u32,
    },
    /// A chunk size of zero was asked for.
    #[error("chunk size must be at least 1 byte")]
    ZeroChunkSize,
}

fn crc_table() -> &'static [u32; 256] {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (i, e) in t.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *e = c;
        }
        t
    })
}

/// CRC-32 (IEEE 802.3 polynomial, reflected, as zlib and PNG compute it) of `bytes`.
pub fn crc32(bytes: &[u8]) -> u32 {
    let t = crc_table();
    let mut c = 0xFFFF_FFFFu32;
    for &b in bytes {
        c = t[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8);
    }
    c ^ 0xFFFF_FFFF
}

/// Chunks as (key, bytes), in order.
pub type Chunks = Vec<(String, Vec<u8>)>;

/// The key of chunk `i` (1-based) of `key`: `<key>/<i>`.
pub fn chunk_key(key: &str, i: usize) -> String {
    format!("{key}/{i}")
}

/// The key of the metadata record of `key`: `<key>/meta`.
pub fn meta_key(key: &str) -> String {
    format!("{key}/meta")
}

/// Splits `blob` into chunks of at most `chunk_bytes` bytes, keyed `<key>/1..n`, and the
/// metadata record.
pub fn split(
    key: &str,
    blob: &[u8],
    chunk_bytes: usize,
) -> Result<(Chunks, ChunkMeta), ChunkError> {
    if chunk_bytes == 0 {
        return Err(ChunkError::ZeroChunkSize);
    }
    let mut out: Vec<(String, Vec<u8>)> = blob
        .chunks(chunk_bytes)
        .enumerate()
        .map(|(i, c)| (chunk_key(key, i + 1), c.to_vec()))
        .collect();
    if out.is_empty() {
        out.push((chunk_key(key, 1), Vec::new()));
    }
    let meta = ChunkMeta {
        chunks: out.len(),
        bytes: blob.len(),
        crc32: crc32(blob),
    };
    Ok((out, meta))
}

/// Joins the chunks of `key` described by `meta`, fetching each through `get`, and checks
/// the total length and the CRC-32. Stops at the first chunk that would exceed the recorded
/// length, so a hostile store cannot make it allocate more than `meta.bytes`.
pub fn join(
    key: &str,
    meta: &ChunkMeta,
    mut get: impl FnMut(&str) -> Option<Vec<u8>>,
) -> Result<Vec<u8>, ChunkError> {
    let mut out = Vec::new();
    for i in 1..=meta.chunks {
        let k = chunk_key(key, i);
        let part = get(&k).ok_or(ChunkError::Missing(k))?;
        if out.len() + part.len() > meta.bytes {
            return Err(ChunkError::Length {
                expected: meta.bytes,
                found: out.len() + part.len(),
            });
        }
        out.extend_from_slice(&part);
    }
    if out.len() != meta.bytes {
        return Err(ChunkError::Length {
            expected: meta.bytes,
            found: out.len(),
        });
    }
    let found = crc32(&out);
    if found != meta.crc32 {
        return Err(ChunkError::Checksum {
            expected: meta.crc32,
            found,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn crc32_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn split_and_join() {
        let blob: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let (chunks, meta) = split("r", &blob, 4096).unwrap();
        assert_eq!(meta.chunks, 3);
        assert_eq!(chunks[2].0, "r/3");
        assert_eq!(chunks[2].1.len(), 10_000 - 8192);
        let store: HashMap<_, _> = chunks.into_iter().collect();
        assert_eq!(join("r", &meta, |k| store.get(k).cloned()).unwrap(), blob);
        // A damaged chunk, a missing one, a swapped pair.
        let mut bad = store.clone();
        bad.get_mut("r/2").unwrap()[5] ^= 1;
        assert!(matches!(
            join("r", &meta, |k| bad.get(k).cloned()),
            Err(ChunkError::Checksum { .. })
        ));
        let mut gone = store.clone();
        gone.remove("r/3");
        assert_eq!(
            join("r", &meta, |k| gone.get(k).cloned()),
            Err(ChunkError::Missing("r/3".into()))
        );
        let mut swapped = store.clone();
        let a = swapped["r/1"].clone();
        let b = swapped["r/2"].clone();
        swapped.insert("r/1".into(), b);
        swapped.insert("r/2".into(), a);
        assert!(join("r", &meta, |k| swapped.get(k).cloned()).is_err());
        let (empty, m0) = split("e", &[], 10).unwrap();
        assert_eq!((empty.len(), m0.chunks, m0.bytes), (1, 1, 0));
        assert_eq!(split("x", &blob, 0), Err(ChunkError::ZeroChunkSize));
    }
}
