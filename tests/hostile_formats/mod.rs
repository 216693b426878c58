//! What each format brings to the hostile-input tests (`tests/hostile_sweeps.rs`,
//! `tests/hostile_alloc.rs`): the files its writers make from the real fixtures, its classic
//! allocation bombs, and what its layout promises about truncated files.
//!
//! A format in [`statepack::formats::FORMATS`] joins by adding one [`Plug`] to [`PLUGS`];
//! every hostile test starts with [`plug`], which fails for a format without one.
#![allow(dead_code)]

use statepack::formats::FormatSpec;

/// A named input file.
pub type NamedFile = (String, Vec<u8>);

/// The per-format part of the hostile-input tests.
pub struct Plug {
    /// [`FormatSpec::name`] of the format.
    pub format: &'static str,
    /// Files the format's writers make from the real fixtures (small cuts of them, so the
    /// sweeps stay quick). Empty when a fixture is missing outside CI (the helper prints that
    /// it skipped).
    pub fixture_files: fn() -> Vec<NamedFile>,
    /// The classic allocation bombs: every count and length at its maximum over a tiny buffer,
    /// nested counts, and the largest inputs made only of the smallest elements.
    pub bombs: fn() -> Vec<NamedFile>,
    /// True when no strict prefix of a valid file is itself valid (every count and length is
    /// explicit), so every prefix must fail with an end-of-input or count error.
    pub prefixes_fail: bool,
}

/// Every format's plug.
pub const PLUGS: &[Plug] = &[
    Plug {
        format: "snap",
        fixture_files: snap::fixture_files,
        bombs: snap::bombs,
        prefixes_fail: true,
    },
    Plug {
        format: "rply",
        fixture_files: rply::fixture_files,
        bombs: rply::bombs,
        prefixes_fail: true,
    },
    Plug {
        format: "cbtrack",
        fixture_files: cbtrack::fixture_files,
        bombs: cbtrack::bombs,
        // The chunk area is kept as bytes to the end of the file, so a prefix cut inside it
        // still decodes raw; decode_full then finds a chunk outside the file.
        prefixes_fail: false,
    },
    Plug {
        format: "wsnap",
        fixture_files: wsnap::fixture_files,
        bombs: wsnap::bombs,
        // A zstd body is `size-eos` bytes in the raw layer, so a cut compressed snapshot
        // still decodes raw (the full decode refuses it).
        prefixes_fail: false,
    },
    Plug {
        format: "study-tracks",
        fixture_files: study_tracks::fixture_files,
        bombs: study_tracks::bombs,
        prefixes_fail: true,
    },
    Plug {
        format: "anim-clip",
        fixture_files: anim_clip::fixture_files,
        bombs: anim_clip::bombs,
        prefixes_fail: true,
    },
];

pub mod anim_clip;
/// CBTK v1.
pub mod cbtrack;
pub mod study_tracks;
pub mod wsnap;

/// The plug of `f`. Panics (failing the test) when the format has none.
pub fn plug(f: &FormatSpec) -> &'static Plug {
    PLUGS
        .iter()
        .find(|p| p.format == f.name)
        .unwrap_or_else(|| {
            panic!(
                "format `{}` has no entry in PLUGS (tests/hostile_formats/mod.rs)",
                f.name
            )
        })
}

/// The format's samples followed by the files its writers make from the fixtures, each name
/// prefixed with where it comes from.
pub fn inputs(f: &FormatSpec) -> Vec<NamedFile> {
    let mut out: Vec<NamedFile> = (f.samples)()
        .into_iter()
        .map(|(n, b)| (format!("sample {n}"), b))
        .collect();
    out.extend(
        (plug(f).fixture_files)()
            .into_iter()
            .map(|(n, b)| (format!("fixture {n}"), b)),
    );
    out
}

/// A small deterministic generator (xorshift64*), so random inputs are the same every run.
pub struct Rng(u64);

impl Rng {
    /// A generator from a non-zero seed.
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// SNAP v1.3.
pub mod rply;

pub mod snap {
    use super::NamedFile;
    use statepack::formats::snap::{import_clip, DEFAULT_STUDS_PER_METRE, VERSION_HEADER};
    use statepack_codecs::motion::{Clip, Skeleton};

    /// The first `bones` bones of `clip` (a valid skeleton: parents come first) and every
    /// `step`-th of its first `frames` frames.
    fn cut(clip: &Clip, bones: usize, frames: usize, step: usize) -> Clip {
        let skeleton = Skeleton::new(clip.skeleton.bones()[..bones].to_vec()).expect("a prefix");
        let rows = clip
            .frames
            .iter()
            .take(frames)
            .step_by(step)
            .map(|row| row[..bones].to_vec())
            .collect();
        Clip::new(
            clip.name.clone(),
            skeleton,
            clip.frame_time_s * step as f64,
            rows,
        )
        .expect("a cut of a valid clip")
    }

    /// `import_clip` of two cuts of the CMU walk (`motion/cmu-131-01-walk.bvh`, 31 bones at
    /// 120 fps): the first 3 bones over 90 frames (smooth motion, past the keyframe at frame 60),
    /// and 3 bones at every 10th frame (12 fps, larger steps, so more absolute frames).
    pub fn fixture_files() -> Vec<NamedFile> {
        let Some(path) = statepack_fixtures::fixture_for_test("motion/cmu-131-01-walk.bvh") else {
            return Vec::new();
        };
        let clip = statepack_codecs::motion::load_motion_file(&path).expect("read the walk");
        [
            ("cmu-131-01-walk 3 bones x 90 frames", cut(&clip, 3, 90, 1)),
            (
                "cmu-131-01-walk 3 bones x every 10th frame",
                cut(&clip, 3, 600, 10),
            ),
        ]
        .into_iter()
        .map(|(name, c)| {
            let bytes = import_clip(&c, DEFAULT_STUDS_PER_METRE)
                .and_then(|r| r.finish())
                .expect("import a cut of the walk");
            (name.to_owned(), bytes)
        })
        .collect()
    }

    /// A recording header: name length and name, frame count, total duration.
    fn recording_header(out: &mut Vec<u8>, name: &[u8], frames: u16, duration_ms: u32) {
        out.push(name.len() as u8);
        out.extend_from_slice(name);
        out.extend_from_slice(&frames.to_le_bytes());
        out.extend_from_slice(&duration_ms.to_le_bytes());
    }

    /// An absolute frame at the origin with the identity rotation (dropped index 3).
    fn absolute_frame(out: &mut Vec<u8>, dt_ms: u16) {
        out.push(4);
        out.extend_from_slice(&dt_ms.to_le_bytes());
        out.extend_from_slice(&0f32.to_le_bytes());
        out.extend_from_slice(&0f32.to_le_bytes());
        out.extend_from_slice(&3u32.to_le_bytes());
        out.extend_from_slice(&[0; 6]);
    }

    /// A timing-only delta frame (3 bytes, the smallest frame).
    fn still_frame(out: &mut Vec<u8>, dt_ms: u16) {
        out.push(0);
        out.extend_from_slice(&dt_ms.to_le_bytes());
    }

    /// Counts and lengths at their maximum over buffers too small for them, alone and
    /// nested: the count guard refuses each before anything is allocated for it. (The
    /// layout has no u32 count or length: its largest are the recording count (u8), the name
    /// length (u8) and the frame count (u16).)
    pub fn count_bombs() -> Vec<NamedFile> {
        let header = || VERSION_HEADER.to_vec();
        let mut out = Vec::new();

        // Every count at its maximum over a tiny buffer.
        let mut b = header();
        b.push(255);
        b.extend_from_slice(&[0xFF; 12]);
        out.push(("255 recordings in 21 bytes".to_owned(), b));

        let mut b = header();
        b.push(1);
        recording_header(&mut b, b"", u16::MAX, 0);
        b.extend_from_slice(&[0; 8]);
        out.push(("65 535 frames in 24 bytes".to_owned(), b));

        let mut b = header();
        b.push(1);
        b.push(255);
        b.extend_from_slice(b"abc");
        out.push(("name length 255 over 3 bytes".to_owned(), b));

        // Nested: 255 recordings each claiming 65 535 frames, in a tiny buffer.
        let mut b = header();
        b.push(255);
        recording_header(&mut b, b"", u16::MAX, u32::MAX);
        out.push(("255 recordings x 65 535 frames in 16 bytes".to_owned(), b));
        out
    }

    /// The classic bombs of SNAP v1.3: [`count_bombs`], then nested counts where the outer
    /// one passes the guard, and counts the guard lets through with the smallest elements:
    /// the most memory per input byte a file can ask for.
    pub fn bombs() -> Vec<NamedFile> {
        let header = || VERSION_HEADER.to_vec();
        let mut out = count_bombs();
        // 255 recording headers, each claiming 65 535 frames: the recording count passes the
        // guard, the first frame count does not.
        let mut b = header();
        b.push(255);
        for _ in 0..255 {
            recording_header(&mut b, b"", u16::MAX, u32::MAX);
        }
        out.push((
            "255 recording headers each claiming 65 535 frames".to_owned(),
            b,
        ));

        let mut b = header();
        b.push(255);
        for _ in 0..255 {
            recording_header(&mut b, b"", 0, 0);
        }
        out.push(("255 empty recordings".to_owned(), b));

        let mut b = header();
        b.push(1);
        recording_header(&mut b, b"", u16::MAX, u32::from(u16::MAX - 1));
        absolute_frame(&mut b, 0);
        for _ in 1..u16::MAX {
            still_frame(&mut b, 1);
        }
        out.push((
            "one absolute then 65 534 timing-only frames".to_owned(),
            b.clone(),
        ));
        // The same with a wrong total duration: everything is read before the sum is checked.
        let at = 8 + 1 + 1 + 2;
        b[at..at + 4].copy_from_slice(&0u32.to_le_bytes());
        out.push(("65 535 frames with a wrong total duration".to_owned(), b));

        let mut b = header();
        b.push(1);
        recording_header(&mut b, b"", u16::MAX, 0);
        for _ in 0..u16::MAX {
            still_frame(&mut b, 0);
        }
        out.push((
            "65 535 timing-only frames, first not absolute".to_owned(),
            b,
        ));

        // 255 recordings of 255-byte names and 255 frames each.
        let mut b = header();
        b.push(255);
        for _ in 0..255 {
            recording_header(&mut b, &[b'n'; 255], 255, 254);
            absolute_frame(&mut b, 0);
            for _ in 1..255 {
                still_frame(&mut b, 1);
            }
        }
        out.push(("255 recordings x 255-byte names x 255 frames".to_owned(), b));
        out
    }
}
