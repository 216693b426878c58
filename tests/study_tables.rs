//! The study's figures (`specs/animation-keyframe-compression.txt`), reproduced from its clips
//! in the fixtures by `statepack::sim::study_report`: constant counts, every row's bytes
//! and worst errors, keys kept, the walk's tolerance sweep, the jump's tight-tolerance rows,
//! the record-type split and the jump's key histogram. gzip sizes are compared within a margin
//! (another deflate, and a header and constant records that carry data, see
//! docs/formats/study_tracks.md); the study's own gzip figures are listed next to ours.

use statepack::sim::study_report::{load_study_clips, study_report, StudyReport};
use statepack_fixtures::fixture_for_test;
use std::sync::OnceLock;

fn report() -> Option<&'static StudyReport> {
    static R: OnceLock<Option<StudyReport>> = OnceLock::new();
    R.get_or_init(|| {
        fixture_for_test("study/study-walk.json")?;
        let clips = load_study_clips().expect("study clips load");
        Some(study_report(&clips).expect("report"))
    })
    .as_ref()
}

fn mm(x: Option<f64>) -> String {
    x.map_or("0".into(), |v| format!("{v:.2}"))
}
fn deg(x: Option<f64>) -> String {
    x.map_or("0".into(), |v| format!("{v:.3}"))
}

/// (bytes, study gzip, maxErr mm, maxDeg) per row 1..=7, as the study prints them.
type Expected = [(usize, usize, &'static str, &'static str); 7];

const WALK: Expected = [
    (216016, 31818, "0", "0"),
    (69764, 18712, "0.00", "0.000"),
    (25684, 8247, "4.69", "0.508"),
    (24068, 8132, "4.69", "0.508"),
    (17486, 6736, "3.78", "0.427"),
    (6688, 3650, "7.24", "0.857"),
    (25034, 13314, "7.26", "0.864"),
];
const JUMP: Expected = [
    (144016, 11716, "0", "0"),
    (48516, 11168, "0.00", "0.000"),
    (17794, 5978, "3.80", "0.304"),
    (16194, 5860, "3.80", "0.304"),
    (15336, 4955, "3.30", "0.325"),
    (6106, 2505, "8.40", "1.016"),
    (18086, 5786, "8.13", "0.941"),
];
const MOCAP: Expected = [
    (216016, 45137, "0", "0"),
    (69764, 43491, "0.00", "0.000"),
    (26890, 16408, "5.03", "0.426"),
    (25274, 16279, "5.03", "0.426"),
    (24134, 15443, "4.58", "0.486"),
    (8894, 5217, "7.08", "0.807"),
    (25034, 14427, "5.88", "0.764"),
];

#[test]
fn constant_channel_counts() {
    let Some(r) = report() else { return };
    let got: Vec<_> = r
        .clips
        .iter()
        .map(|c| {
            (
                c.name.as_str(),
                c.frames,
                c.constant_scalars,
                c.scalars,
                c.constant_rotations,
                c.rotations,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("walk", 180, 177, 180, 10, 30),
            ("jump", 120, 175, 180, 10, 30),
            ("mocap", 180, 177, 180, 10, 30)
        ]
    );
}

#[test]
fn technique_rows_bytes_and_errors() {
    let Some(r) = report() else { return };
    for (c, exp) in r.clips.iter().zip([WALK, JUMP, MOCAP]) {
        for (row, e) in c.rows.iter().zip(exp) {
            assert_eq!(
                (row.bytes, mm(row.err_mm), deg(row.err_deg)),
                (e.0, e.2.to_string(), e.3.to_string()),
                "{} row {}",
                c.name,
                row.number
            );
            // Same order of magnitude as the study's gzip: our header and quantised constant
            // records carry data where the study writes zeros, and flate2 is not zlib.
            let ratio = row.gzip as f64 / e.1 as f64;
            assert!(
                (0.9..1.15).contains(&ratio),
                "{} row {} gzip {} vs study {}",
                c.name,
                row.number,
                row.gzip,
                e.1
            );
        }
    }
}

#[test]
fn keys_kept_per_animated_track() {
    let Some(r) = report() else { return };
    let got: Vec<_> = r
        .clips
        .iter()
        .map(|c| {
            let (l, cu) = c.keys_per_track_s;
            (
                c.animated_tracks,
                format!("{l:.1}"),
                format!("{:.1}", l / 60.0 * 100.0),
                format!("{cu:.1}"),
                format!("{:.1}", cu / 60.0 * 100.0),
            )
        })
        .collect();
    let s = |a: &str| a.to_string();
    assert_eq!(
        got,
        [
            (23, s("19.0"), s("31.7"), s("13.5"), s("22.4")),
            (25, s("18.1"), s("30.1"), s("17.0"), s("28.3")),
            (23, s("20.0"), s("33.3"), s("18.8"), s("31.3")),
        ]
    );
}

#[test]
fn walk_tolerance_sweep() {
    let Some(r) = report() else { return };
    // interp, eps_mm, keys, bytes, maxErr_mm, maxDeg (study's sweep table).
    let expected: [(bool, f64, usize, usize, &str, &str); 18] = [
        (false, 0.1, 3365, 55544, "0.32", "0.044"),
        (false, 0.25, 2706, 44498, "0.89", "0.118"),
        (false, 0.5, 2068, 33878, "1.85", "0.285"),
        (false, 1.0, 1501, 24068, "4.69", "0.508"),
        (false, 2.0, 1126, 17762, "9.14", "0.941"),
        (false, 5.0, 791, 11984, "17.74", "2.385"),
        (false, 10.0, 587, 8636, "37.46", "4.434"),
        (false, 20.0, 460, 6350, "69.45", "9.093"),
        (false, 50.0, 329, 4208, "136.83", "16.318"),
        (true, 0.1, 2675, 44336, "0.34", "0.046"),
        (true, 0.25, 1864, 30482, "0.85", "0.101"),
        (true, 0.5, 1410, 22682, "1.74", "0.241"),
        (true, 1.0, 1116, 17486, "3.78", "0.427"),
        (true, 2.0, 860, 13214, "8.83", "1.102"),
        (true, 5.0, 663, 10004, "13.96", "1.950"),
        (true, 10.0, 547, 7916, "37.35", "3.943"),
        (true, 20.0, 411, 5468, "70.80", "9.061"),
        (true, 50.0, 322, 4082, "129.58", "12.126"),
    ];
    assert_eq!(r.sweep.len(), expected.len());
    for (row, e) in r.sweep.iter().zip(expected) {
        assert_eq!(
            (
                row.cubic,
                row.mm,
                row.keys,
                row.bytes,
                format!("{:.2}", row.err_mm),
                format!("{:.3}", row.err_deg)
            ),
            (e.0, e.1, e.2, e.3, e.4.to_string(), e.5.to_string())
        );
    }
}

#[test]
fn jump_tight_tolerance_rows() {
    let Some(r) = report() else { return };
    let got: Vec<_> = r
        .jump_tight
        .iter()
        .map(|x| (x.cubic, x.mm, x.keys, x.bytes, format!("{:.2}", x.err_mm)))
        .collect();
    let s = |a: &str| a.to_string();
    assert_eq!(
        got,
        [
            (false, 0.1, 1574, 23418, s("0.11")),
            (true, 0.1, 1677, 25416, s("0.21")),
            (false, 1.0, 1088, 16194, s("3.80")),
            (true, 1.0, 1035, 15336, s("3.30")),
        ]
    );
}

#[test]
fn record_type_split_and_jump_histogram() {
    let Some(r) = report() else { return };
    let sizes: Vec<_> = r
        .gzip_split
        .iter()
        .map(|g| (g.constant.0, g.animated.0, g.whole.0))
        .collect();
    assert_eq!(sizes, [(1616, 15854, 17470), (1142, 5530, 6672)]);
    let keys: Vec<usize> = r.jump_histogram.iter().map(|h| h.3).collect();
    assert_eq!(keys, [25, 160, 25, 395, 49, 205, 44]);
}

/// The raw layout holds finite numbers only: a clip built field by field with a NaN or an
/// infinity is refused by the writer, naming frame, bone and channel, and a raw file holding
/// one is refused by the reader with the value's path and byte offset.
#[test]
fn raw_layout_refuses_non_finite_values() {
    use statepack::formats::study_tracks::{encode_raw, read, HEADER_LEN};
    let mut clip = statepack_codecs::motion::study_walk_clip();
    clip.frames.truncate(3);
    let good = encode_raw(&clip).expect("a finite clip encodes");
    read(&good).expect("and reads");
    for bad in [f64::NAN, f64::INFINITY, 1e300] {
        let mut c = clip.clone();
        c.frames[2][1].rotation.y = bad;
        let e = encode_raw(&c).expect_err("a non-finite value is refused");
        assert!(
            e.to_string().contains("frame 2, bone 1: rotation y"),
            "{bad}: {e}"
        );
    }
    // The same value patched into the bytes: frame 2, bone 1, channel 4 (rotation y).
    let bones = clip.skeleton.len();
    let i = 2 * bones * 10 + 10 + 4;
    let at = HEADER_LEN + 4 * i;
    let mut bytes = good.clone();
    bytes[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    let e = read(&bytes).expect_err("a NaN in a raw file is refused");
    let m = e.to_string();
    assert!(m.contains(&format!("values[{i}]")), "{m}");
    assert!(m.contains(&at.to_string()), "{m}");
    assert!(m.contains("frame 2, bone 1: rotation y"), "{m}");
}
