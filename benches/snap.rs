//! Throughput of SNAP v1.3 decoding and encoding.
//!
//! The input is the demo's file, built in code from the study walk clip (30 recordings of
//! 180 frames). Variants, one criterion group per direction:
//!
//! - `generated`: the raw layer generated from `schema/snap_v1_3.ksy` (`SnapV13`).
//! - `baseline_hand_written`: a plain slice decoder/encoder written for this layout, with
//!   the same checks and the same shape of result (the baseline).
//! - `binrw_derive_reference`: a `#[binrw]` derive of the same layout (a second reference).
//! - `generated_via_binrw`: the same generated types through their `BinRead` / `BinWrite`
//!   impls (root crate feature `binrw`) on an in-memory `std::io::Cursor`: the native code plus
//!   binrw's stream (the copy of the rest of the stream into the native reader, the seek).
//! - `semantic_read` (decode only): `formats::snap::read`, the raw decode plus the
//!   reconstruction of every frame's position and rotation.
//!
//! Before anything is timed, every decoder's result is compared field by field with the
//! generated one and every encoder's output with the original bytes, so a broken variant
//! stops the run instead of being measured. See `docs/performance.md` for the figures.

use std::hint::black_box;
use std::time::Duration;

use binrw::{BinRead, BinWrite};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use statepack::formats::snap::{self, FrameKind, SnapV13};

/// Recordings in the demo file (one per joint of the study rig).
const EXPECTED_RECORDINGS: usize = 30;
/// Frames in the demo file: 30 recordings of 180 frames.
const EXPECTED_FRAMES: usize = 5400;

/// The hand-written baseline: a bounds-checked cursor over `&[u8]` into plain structs.
mod baseline {
    /// A whole file.
    #[derive(Debug, Clone, PartialEq)]
    pub struct File {
        pub recordings: Vec<Recording>,
    }

    /// One recording.
    #[derive(Debug, Clone, PartialEq)]
    pub struct Recording {
        pub map_name: String,
        pub frames: Vec<Frame>,
    }

    /// The frame bitfield; other values are refused.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Kind {
        DeltaNone = 0,
        DeltaPos = 1,
        DeltaRot = 2,
        DeltaPosRot = 3,
        Absolute = 4,
    }

    /// A compressed CFrame (18 bytes).
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct CFrame {
        pub x: f32,
        pub y: f32,
        pub z_bits: u32,
        pub q: [i16; 3],
    }

    /// One frame, absolute or delta.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Frame {
        pub kind: Kind,
        pub dt_ms: u16,
        pub cframe: Option<CFrame>,
        pub pos_delta: Option<[i16; 3]>,
        pub rot_delta: Option<[i16; 3]>,
    }

    /// A failure: what went wrong and at which byte offset.
    #[derive(Debug, Clone, PartialEq)]
    pub struct Failure {
        pub offset: usize,
        pub what: &'static str,
    }

    /// Boxed, so that every `Result` stays the size of its value.
    pub type Error = Box<Failure>;

    #[cold]
    fn fail(offset: usize, what: &'static str) -> Error {
        Box::new(Failure { offset, what })
    }

    const HEADER: &[u8; 8] = b"SNAPV1.3";
    const MIN_RECORDING: usize = 7;
    const MIN_FRAME: usize = 3;

    struct Cursor<'a> {
        buf: &'a [u8],
        pos: usize,
    }

    impl<'a> Cursor<'a> {
        fn err(&self, what: &'static str) -> Error {
            fail(self.pos, what)
        }

        #[inline]
        fn bytes(&mut self, n: usize) -> Result<&'a [u8], Error> {
            if n > self.buf.len() - self.pos {
                return Err(self.err("input ends early"));
            }
            let s = &self.buf[self.pos..self.pos + n];
            self.pos += n;
            Ok(s)
        }

        #[inline]
        fn array<const N: usize>(&mut self) -> Result<[u8; N], Error> {
            let mut a = [0u8; N];
            a.copy_from_slice(self.bytes(N)?);
            Ok(a)
        }

        #[inline]
        fn u8(&mut self) -> Result<u8, Error> {
            Ok(self.array::<1>()?[0])
        }

        #[inline]
        fn u16(&mut self) -> Result<u16, Error> {
            Ok(u16::from_le_bytes(self.array()?))
        }

        #[inline]
        fn u32(&mut self) -> Result<u32, Error> {
            Ok(u32::from_le_bytes(self.array()?))
        }

        #[inline]
        fn f32(&mut self) -> Result<f32, Error> {
            Ok(f32::from_le_bytes(self.array()?))
        }

        #[inline]
        fn i16x3(&mut self) -> Result<[i16; 3], Error> {
            let b: [u8; 6] = self.array()?;
            Ok([
                i16::from_le_bytes([b[0], b[1]]),
                i16::from_le_bytes([b[2], b[3]]),
                i16::from_le_bytes([b[4], b[5]]),
            ])
        }

        /// Refuses a count whose smallest encoding does not fit in the bytes left.
        #[inline]
        fn count(&self, n: usize, min_size: usize) -> Result<usize, Error> {
            if n * min_size > self.buf.len() - self.pos {
                return Err(self.err("count larger than the bytes left"));
            }
            Ok(n)
        }
    }

    /// Reads one frame and appends it to `out`.
    fn read_frame(c: &mut Cursor<'_>, out: &mut Vec<Frame>) -> Result<(), Error> {
        let kind = match c.u8()? {
            0 => Kind::DeltaNone,
            1 => Kind::DeltaPos,
            2 => Kind::DeltaRot,
            3 => Kind::DeltaPosRot,
            4 => Kind::Absolute,
            _ => {
                c.pos -= 1;
                return Err(c.err("unknown frame kind"));
            }
        };
        let dt_ms = c.u16()?;
        let bits = kind as u8;
        let cframe = if kind == Kind::Absolute {
            Some(CFrame {
                x: c.f32()?,
                y: c.f32()?,
                z_bits: c.u32()?,
                q: c.i16x3()?,
            })
        } else {
            None
        };
        let pos_delta = if kind != Kind::Absolute && bits & 1 != 0 {
            Some(c.i16x3()?)
        } else {
            None
        };
        let rot_delta = if kind != Kind::Absolute && bits & 2 != 0 {
            Some(c.i16x3()?)
        } else {
            None
        };
        out.push(Frame {
            kind,
            dt_ms,
            cframe,
            pos_delta,
            rot_delta,
        });
        Ok(())
    }

    fn read_recording(c: &mut Cursor<'_>) -> Result<Recording, Error> {
        let len = c.u8()? as usize;
        let at_name = c.pos;
        let map_name = std::str::from_utf8(c.bytes(len)?)
            .map_err(|_| fail(at_name, "map name is not UTF-8"))?
            .to_owned();
        let n = c.u16()? as usize;
        let at_total = c.pos;
        let total = c.u32()?;
        let n = c.count(n, MIN_FRAME)?;
        let mut frames = Vec::with_capacity(n);
        for _ in 0..n {
            read_frame(c, &mut frames)?;
        }
        let sum: u64 = frames.iter().map(|f| u64::from(f.dt_ms)).sum();
        if sum != u64::from(total) {
            return Err(fail(at_total, "total duration differs from the sum of dt"));
        }
        Ok(Recording { map_name, frames })
    }

    /// Decodes a whole file; the input must end where the file ends.
    pub fn decode(bytes: &[u8]) -> Result<File, Error> {
        let mut c = Cursor { buf: bytes, pos: 0 };
        if c.bytes(HEADER.len())? != HEADER {
            return Err(fail(0, "bad version header"));
        }
        let n = c.u8()? as usize;
        let n = c.count(n, MIN_RECORDING)?;
        let mut recordings = Vec::with_capacity(n);
        for _ in 0..n {
            recordings.push(read_recording(&mut c)?);
        }
        if c.pos != bytes.len() {
            return Err(c.err("trailing bytes"));
        }
        Ok(File { recordings })
    }

    fn frame_len(f: &Frame) -> usize {
        3 + f.cframe.map_or(0, |_| 18) + f.pos_delta.map_or(0, |_| 6) + f.rot_delta.map_or(0, |_| 6)
    }

    fn put_i16x3(out: &mut Vec<u8>, v: &[i16; 3]) {
        for x in v {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }

    fn no_fit(what: &'static str) -> Error {
        fail(0, what)
    }

    /// Encodes a whole file; counts, lengths and total durations are derived from the data.
    pub fn encode(file: &File) -> Result<Vec<u8>, Error> {
        let size = 9 + file
            .recordings
            .iter()
            .map(|r| 7 + r.map_name.len() + r.frames.iter().map(frame_len).sum::<usize>())
            .sum::<usize>();
        let mut out = Vec::with_capacity(size);
        out.extend_from_slice(HEADER);
        let n = u8::try_from(file.recordings.len()).map_err(|_| no_fit("too many recordings"))?;
        out.push(n);
        for r in &file.recordings {
            let len = u8::try_from(r.map_name.len()).map_err(|_| no_fit("map name too long"))?;
            let n = u16::try_from(r.frames.len()).map_err(|_| no_fit("too many frames"))?;
            let total: u64 = r.frames.iter().map(|f| u64::from(f.dt_ms)).sum();
            let total = u32::try_from(total).map_err(|_| no_fit("total duration too long"))?;
            out.push(len);
            out.extend_from_slice(r.map_name.as_bytes());
            out.extend_from_slice(&n.to_le_bytes());
            out.extend_from_slice(&total.to_le_bytes());
            for f in &r.frames {
                let bits = f.kind as u8;
                let absolute = f.kind == Kind::Absolute;
                if f.cframe.is_some() != absolute
                    || f.pos_delta.is_some() != (!absolute && bits & 1 != 0)
                    || f.rot_delta.is_some() != (!absolute && bits & 2 != 0)
                {
                    return Err(no_fit("optional field does not match the frame kind"));
                }
                out.push(bits);
                out.extend_from_slice(&f.dt_ms.to_le_bytes());
                if let Some(cf) = &f.cframe {
                    out.extend_from_slice(&cf.x.to_le_bytes());
                    out.extend_from_slice(&cf.y.to_le_bytes());
                    out.extend_from_slice(&cf.z_bits.to_le_bytes());
                    put_i16x3(&mut out, &cf.q);
                }
                if let Some(d) = &f.pos_delta {
                    put_i16x3(&mut out, d);
                }
                if let Some(d) = &f.rot_delta {
                    put_i16x3(&mut out, d);
                }
            }
        }
        Ok(out)
    }
}

/// The same layout as a binrw derive: a second reference, not the baseline.
mod binrw_reference {
    use binrw::{binrw, BinRead, BinResult, BinWrite};
    use std::io::Cursor;

    /// A whole file.
    #[binrw]
    #[brw(little, magic = b"SNAPV1.3")]
    #[derive(Debug, Clone, PartialEq)]
    pub struct File {
        #[br(temp)]
        #[bw(try_calc = u8::try_from(recordings.len()))]
        num_recordings: u8,
        #[br(count = num_recordings)]
        pub recordings: Vec<Recording>,
    }

    /// One recording; the total duration is derived on write and checked on read.
    #[binrw]
    #[brw(little)]
    #[derive(Debug, Clone, PartialEq)]
    pub struct Recording {
        #[br(temp)]
        #[bw(try_calc = u8::try_from(map_name.len()))]
        len_map_name: u8,
        #[br(count = len_map_name, try_map = |b: Vec<u8>| String::from_utf8(b))]
        #[bw(map = name_bytes)]
        pub map_name: String,
        #[br(temp)]
        #[bw(try_calc = u16::try_from(frames.len()))]
        num_frames: u16,
        #[br(temp)]
        #[bw(try_calc = u32::try_from(frames.iter().map(|f| u64::from(f.dt_ms)).sum::<u64>()))]
        total_duration_ms: u32,
        #[br(count = num_frames)]
        #[br(assert(
            frames.iter().map(|f| u64::from(f.dt_ms)).sum::<u64>() == u64::from(total_duration_ms),
            "total duration differs from the sum of dt"
        ))]
        pub frames: Vec<Frame>,
    }

    /// The frame bitfield; other values are refused.
    #[binrw]
    #[brw(repr = u8)]
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Kind {
        DeltaNone = 0,
        DeltaPos = 1,
        DeltaRot = 2,
        DeltaPosRot = 3,
        Absolute = 4,
    }

    /// A compressed CFrame (18 bytes).
    #[binrw]
    #[brw(little)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct CFrame {
        pub x: f32,
        pub y: f32,
        pub z_bits: u32,
        pub q: [i16; 3],
    }

    /// One frame, absolute or delta.
    #[binrw]
    #[brw(little)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Frame {
        pub kind: Kind,
        pub dt_ms: u16,
        #[br(if(kind == Kind::Absolute))]
        pub cframe: Option<CFrame>,
        #[br(if(kind != Kind::Absolute && (kind as u8) & 1 != 0))]
        pub pos_delta: Option<[i16; 3]>,
        #[br(if(kind != Kind::Absolute && (kind as u8) & 2 != 0))]
        pub rot_delta: Option<[i16; 3]>,
    }

    fn name_bytes(s: &String) -> &[u8] {
        s.as_bytes()
    }

    /// Decodes a whole file from memory; the input must end where the file ends.
    pub fn decode(bytes: &[u8]) -> BinResult<File> {
        let mut c = Cursor::new(bytes);
        let file = File::read(&mut c)?;
        if c.position() != bytes.len() as u64 {
            return Err(binrw::Error::AssertFail {
                pos: c.position(),
                message: "trailing bytes".into(),
            });
        }
        Ok(file)
    }

    /// Encodes into a buffer given `capacity` up front (so buffer growth is not measured).
    pub fn encode(file: &File, capacity: usize) -> BinResult<Vec<u8>> {
        let mut c = Cursor::new(Vec::with_capacity(capacity));
        file.write(&mut c)?;
        Ok(c.into_inner())
    }
}

/// A variant-neutral copy of one frame, for comparing decoders field by field
/// (floats by bit pattern).
type FrameKey = (
    u8,
    u16,
    Option<(u32, u32, u32, [i16; 3])>,
    Option<[i16; 3]>,
    Option<[i16; 3]>,
);

fn keys_generated(f: &SnapV13) -> Vec<(String, Vec<FrameKey>)> {
    f.recordings
        .iter()
        .map(|r| {
            let frames = r
                .frames
                .iter()
                .map(|fr| {
                    (
                        fr.kind.to_i() as u8,
                        fr.dt_ms,
                        fr.cframe
                            .as_ref()
                            .map(|c| (c.x.to_bits(), c.y.to_bits(), c.z_bits, c.q)),
                        fr.pos_delta,
                        fr.rot_delta,
                    )
                })
                .collect();
            (r.map_name.clone(), frames)
        })
        .collect()
}

fn keys_baseline(f: &baseline::File) -> Vec<(String, Vec<FrameKey>)> {
    f.recordings
        .iter()
        .map(|r| {
            let frames = r
                .frames
                .iter()
                .map(|fr| {
                    (
                        fr.kind as u8,
                        fr.dt_ms,
                        fr.cframe
                            .map(|c| (c.x.to_bits(), c.y.to_bits(), c.z_bits, c.q)),
                        fr.pos_delta,
                        fr.rot_delta,
                    )
                })
                .collect();
            (r.map_name.clone(), frames)
        })
        .collect()
}

fn keys_binrw(f: &binrw_reference::File) -> Vec<(String, Vec<FrameKey>)> {
    f.recordings
        .iter()
        .map(|r| {
            let frames = r
                .frames
                .iter()
                .map(|fr| {
                    (
                        fr.kind as u8,
                        fr.dt_ms,
                        fr.cframe
                            .map(|c| (c.x.to_bits(), c.y.to_bits(), c.z_bits, c.q)),
                        fr.pos_delta,
                        fr.rot_delta,
                    )
                })
                .collect();
            (r.map_name.clone(), frames)
        })
        .collect()
}

/// The demo's SNAP file, built in code.
fn demo_file() -> Vec<u8> {
    let clip = statepack_codecs::motion::walk::study_walk_clip();
    snap::import_clip(&clip, snap::DEFAULT_STUDS_PER_METRE)
        .expect("the study walk imports")
        .finish()
        .expect("the study walk encodes")
}

/// Runs every decoder and encoder once and checks that they agree, before anything is timed.
fn check_variants(bytes: &[u8]) -> (SnapV13, baseline::File, binrw_reference::File) {
    let generated = SnapV13::decode(bytes).expect("generated decode");
    let hand = baseline::decode(bytes).expect("baseline decode");
    let derived = binrw_reference::decode(bytes).expect("binrw decode");

    let reference = keys_generated(&generated);
    assert_eq!(reference.len(), EXPECTED_RECORDINGS, "recording count");
    let frames: usize = reference.iter().map(|(_, f)| f.len()).sum();
    assert_eq!(frames, EXPECTED_FRAMES, "total frame count");
    assert_eq!(keys_baseline(&hand), reference, "baseline decode differs");
    assert_eq!(keys_binrw(&derived), reference, "binrw decode differs");

    // A few values spelled out, so the comparison above cannot pass on empty data.
    let first = &generated.recordings[0].frames[0];
    assert_eq!(first.kind, FrameKind::Absolute);
    assert_eq!(hand.recordings[0].frames[0].kind, baseline::Kind::Absolute);
    assert_eq!(
        derived.recordings[29].frames[179].dt_ms,
        generated.recordings[29].frames[179].dt_ms
    );
    let absolute = reference
        .iter()
        .flat_map(|(_, f)| f)
        .filter(|k| k.0 == 4)
        .count();
    assert!(
        absolute >= EXPECTED_RECORDINGS * 3,
        "keyframes every 60 frames"
    );
    assert!(absolute < EXPECTED_FRAMES, "the file uses delta frames");

    let semantic = snap::read(bytes).expect("semantic read");
    assert_eq!(semantic.len(), EXPECTED_RECORDINGS);
    assert_eq!(
        semantic.iter().map(|r| r.frames.len()).sum::<usize>(),
        EXPECTED_FRAMES
    );
    let cf = first.cframe.as_ref().expect("absolute frame has a cframe");
    let p = semantic[0].frames[0].pos_studs;
    assert_eq!((p.x, p.y), (cf.x, cf.y));
    assert_eq!(semantic[0].map_name, generated.recordings[0].map_name);

    assert_eq!(generated.encode().expect("generated encode"), bytes);
    let mut c = std::io::Cursor::new(bytes);
    assert_eq!(
        SnapV13::read_le(&mut c).expect("generated via binrw decode"),
        generated
    );
    let mut c = std::io::Cursor::new(Vec::new());
    generated
        .write_le(&mut c)
        .expect("generated via binrw encode");
    assert_eq!(c.into_inner(), bytes, "generated via binrw encode differs");
    assert_eq!(baseline::encode(&hand).expect("baseline encode"), bytes);
    assert_eq!(
        binrw_reference::encode(&derived, bytes.len()).expect("binrw encode"),
        bytes
    );
    (generated, hand, derived)
}

fn bench_snap(c: &mut Criterion) {
    let bytes = demo_file();
    let (generated, hand, derived) = check_variants(&bytes);
    let absolute = generated
        .recordings
        .iter()
        .flat_map(|r| &r.frames)
        .filter(|f| f.kind == FrameKind::Absolute)
        .count();
    eprintln!(
        "snap bench input: {} bytes, {} recordings, {} frames ({} absolute)",
        bytes.len(),
        generated.recordings.len(),
        EXPECTED_FRAMES,
        absolute
    );

    let mut g = c.benchmark_group("snap_decode");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("generated", |b| {
        b.iter(|| SnapV13::decode(black_box(&bytes)).unwrap())
    });
    g.bench_function("baseline_hand_written", |b| {
        b.iter(|| baseline::decode(black_box(&bytes)).unwrap())
    });
    g.bench_function("binrw_derive_reference", |b| {
        b.iter(|| binrw_reference::decode(black_box(&bytes)).unwrap())
    });
    g.bench_function("generated_via_binrw", |b| {
        b.iter(|| SnapV13::read_le(&mut std::io::Cursor::new(black_box(&bytes))).unwrap())
    });
    g.bench_function("semantic_read", |b| {
        b.iter(|| snap::read(black_box(&bytes)).unwrap())
    });
    g.finish();

    let mut g = c.benchmark_group("snap_encode");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("generated", |b| {
        b.iter(|| black_box(&generated).encode().unwrap())
    });
    g.bench_function("baseline_hand_written", |b| {
        b.iter(|| baseline::encode(black_box(&hand)).unwrap())
    });
    g.bench_function("binrw_derive_reference", |b| {
        b.iter(|| binrw_reference::encode(black_box(&derived), bytes.len()).unwrap())
    });
    g.bench_function("generated_via_binrw", |b| {
        b.iter(|| {
            let mut c = std::io::Cursor::new(Vec::with_capacity(bytes.len()));
            black_box(&generated).write_le(&mut c).unwrap();
            c.into_inner()
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = bench_snap
}
criterion_main!(benches);
