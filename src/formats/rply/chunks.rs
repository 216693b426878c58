//! RPLY storage in chunks with a checksummed meta record, as the reference store keeps it.

use super::*;

use statepack_codecs::chunk::{self, ChunkMeta};

/// Splits a replay into storage chunks keyed `<key>/1..n` (at most `chunk_bytes` each;
/// [`chunk::DEFAULT_CHUNK_BYTES`] is 3 MiB) plus the meta record for `<key>/meta` as JSON
/// (`chunks`, `bytes`, `crc32`, and the header's `tickRate`, `tickCount`, `placeVersion`,
/// `startUnix`, as the reference store keeps them).
pub fn save_chunks(
    key: &str,
    replay: &[u8],
    chunk_bytes: usize,
) -> Result<(chunk::Chunks, serde_json::Value), RplyError> {
    let p = Player::open(replay)?;
    let h = *p.header();
    let (chunks, meta) = chunk::split(key, replay, chunk_bytes)?;
    let record = serde_json::json!({
        "chunks": meta.chunks,
        "bytes": meta.bytes,
        "crc32": meta.crc32,
        "tickRate": h.tick_rate,
        "tickCount": h.tick_count,
        "placeVersion": h.place_version,
        "startUnix": jf(h.start_unix),
    });
    Ok((chunks, record))
}

/// Joins the chunks of `key` (fetched through `get`) described by the meta record,
/// checking length and CRC-32, and opens the result to check it is a replay.
pub fn load_chunks(
    key: &str,
    record: &serde_json::Value,
    get: impl FnMut(&str) -> Option<Vec<u8>>,
) -> Result<Vec<u8>, RplyError> {
    let meta: ChunkMeta = serde_json::from_value(record.clone())
        .map_err(|e| RplyError::Input(format!("meta record: {e}")))?;
    let bytes = chunk::join(key, &meta, get)?;
    Player::open(&bytes)?;
    Ok(bytes)
}
