//! The bounds one decode reads within, for data that could otherwise make a small input
//! cost any amount of time or memory: how deep positional instances nest, how many of them
//! are read and how many bytes they read, and how many bytes processed fields produce.
//!
//! The byte reader (`io`) and the positional instances (`positional`, which re-exports these
//! items) both apply them; this module uses neither, so that both can depend on it.

/// How deep positional instances may nest (an instance whose type has an instance whose
/// type has one, ...). Deeper is refused as `Semantic`, so that a chain of positions in
/// hostile data ends with an error rather than a stack overflow.
pub const MAX_INSTANCE_DEPTH: u32 = 64;

/// How many positional instances may nest in a row at one byte offset (an instance at the
/// offset where the instance holding it started, and so on). Such a chain reads the same
/// bytes as the same thing over and over (the root type held again at a fixed position, read
/// on first use); the next one is refused as `Semantic`, long before
/// [`MAX_INSTANCE_DEPTH`], so that a value instance naming the chain's instance does not
/// double what a walk of the value visits at each of 64 levels.
pub const MAX_SAME_OFFSET: u8 = 3;

/// How many positional instances one decode may read: 1 024 plus 16 per input byte. Instances
/// that point back at each other through two or more members would otherwise be read an
/// exponential number of times within [`MAX_INSTANCE_DEPTH`]; past the budget the reader
/// returns a `Semantic` error.
pub fn instance_budget(input_len: usize) -> u64 {
    1024 + 16 * input_len as u64
}

/// How many bytes the positional instances of one reader may read in all: 65,536 plus 16 per
/// byte of the reader's input. Instances that overlap (many entries of a directory pointing
/// at the same bytes) would otherwise turn a small input into any amount of memory; data whose
/// instances each read their own bytes reads every byte once. Past the budget the next
/// instance read is a `Semantic` error.
pub fn instance_bytes_budget(input_len: usize) -> u64 {
    65_536 + 16 * input_len as u64
}

/// How many bytes the processed fields of one file may produce in all (the sum of what every
/// `process` decompresses or transforms to, processed fields inside processed bytes
/// included): 65,536 plus 1,032 per byte of the file, zlib's largest ratio. The reader of a
/// processed field's bytes shares the budget of the reader that made it
/// (`ByteReader::sharing`), so nested `process: zlib` cannot multiply it, and a
/// processed field whose stored bytes are shared by many positional instances is charged once
/// per instance. Past it the read is a `Semantic` error.
pub fn processed_budget(input_len: usize) -> u64 {
    65_536 + 1032 * input_len as u64
}
