//! zlib streams (RFC 1950) with a limit on what they decompress to, for `process: zlib`
//! fields (the byte reader's and writer's processed fields) and the framing of CBTK's column
//! chunks (`cbtk_columns`, which re-exports both functions). Feature `zlib`; flate2, pure
//! Rust. It uses no other module of the crate, so both callers can depend on it.

/// Compresses `bytes` as one zlib stream (RFC 1950) at `level` (0..=9).
pub fn deflate(bytes: &[u8], level: u32) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::ZlibEncoder::new(
        Vec::with_capacity(bytes.len() / 2 + 64),
        flate2::Compression::new(level.min(9)),
    );
    // Writing into a Vec cannot fail.
    let _ = e.write_all(bytes);
    e.finish().unwrap_or_default()
}

/// Decompresses one zlib stream, refusing a result longer than `limit` bytes before it is
/// produced (so a small bomb cannot allocate more than `limit`), a stream that does not end
/// or has bytes after it, and a bad checksum. CBTK's limit for a chunk is
/// `cbtk_columns::LUA_MAX`.
///
/// Errors: a message saying what was wrong.
pub fn inflate(bytes: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    use flate2::{Decompress, FlushDecompress, Status};
    let mut d = Decompress::new(true);
    let mut out: Vec<u8> = Vec::with_capacity((bytes.len() * 4).clamp(64, limit.max(64)));
    loop {
        if out.len() == out.capacity() {
            if out.len() >= limit {
                return Err(format!("decompresses to more than {limit} bytes"));
            }
            let grow = out.len().max(4096).min(limit - out.len());
            out.reserve_exact(grow);
        }
        let before_in = d.total_in();
        let before_out = d.total_out();
        let inp = &bytes[d.total_in() as usize..];
        let st = d
            .decompress_vec(inp, &mut out, FlushDecompress::Finish)
            .map_err(|e| format!("not a valid zlib stream: {e}"))?;
        match st {
            Status::StreamEnd => break,
            _ => {
                if d.total_in() == before_in
                    && d.total_out() == before_out
                    && out.len() < out.capacity()
                {
                    return Err("zlib stream ends early".into());
                }
            }
        }
    }
    if (d.total_in() as usize) != bytes.len() {
        return Err(format!(
            "{} byte(s) after the end of the zlib stream",
            bytes.len() - d.total_in() as usize
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflate_limits_and_checksum() {
        let data = vec![7u8; 100_000];
        let z = deflate(&data, 9);
        assert_eq!(inflate(&z, 100_000).unwrap(), data);
        assert!(inflate(&z, 99_999).is_err());
        let mut bad = z.clone();
        let n = bad.len();
        bad[n - 1] ^= 1;
        assert!(inflate(&bad, 200_000).is_err());
        assert!(inflate(&z[..n - 2], 200_000).is_err());
        let mut extra = z;
        extra.push(0);
        assert!(inflate(&extra, 200_000).is_err());
    }
}
