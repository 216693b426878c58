//! The example crate stays what a user's crate should be: it runs (writes, reads and prints
//! a file, refuses a value that does not fit and a truncated file), and its normal
//! dependencies are statepack-runtime's small core only (no statepack-codecs, no
//! statepack-fixtures). `.ci/run` also checks it has no rustc or clippy warnings
//! (`cargo clippy -p statepack-example --no-deps -- -D warnings`).
use std::process::Command;

// The other form of the macro: the generated items inside a module of one's own (which a
// crate that uses part of the schema's API marks so).
#[allow(dead_code)]
mod save {
    statepack_runtime::include_schema!("game_save");
}

#[test]
fn main_writes_reads_and_prints_a_file() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let file = dir.join("example-game.gsav");
    let out = Command::new(env!("CARGO_BIN_EXE_statepack-example"))
        .arg(&file)
        .output()
        .expect("the example runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&file).expect("the example wrote its file");
    assert_eq!(&bytes[..4], b"GSAV");
    let read = save::GameSave::decode(&bytes).expect("the file decodes");
    assert_eq!(read.map_name, "Harbour");
    assert_eq!(read.players.len(), 3);
    // A player built with `..Default::default()` reads back as built.
    assert_eq!(read.players[2].name, "Nova");
    assert_eq!(read.players[2].score, 10);
    assert_eq!(read.players[2].level, 0);
    assert_eq!(
        (read.players[1].team, read.players[1].level),
        (save::Team::Blue, 63)
    );
    assert!(
        stdout.contains(&format!("({} bytes)", bytes.len())),
        "{stdout}"
    );
    assert!(
        stdout.contains("Ada   team red  score  1200 at (12.5, -3.25) m, level 17"),
        "{stdout}"
    );
    assert!(
        stdout.contains("level 64 refused: players[1].level:"),
        "{stdout}"
    );
    assert!(
        stdout.contains("truncated file refused: players[2].pos.y (byte offset "),
        "{stdout}"
    );
}

#[test]
fn normal_dependencies_have_no_motion_or_codec_crates() {
    let out = Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "-p",
            "statepack-example",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(tree.contains("statepack-runtime"), "{tree}");
    // The format math and the test-file finder are crates of their own that generated code
    // never needs.
    for heavy in [
        "gltf",
        "glam",
        "flate2",
        "serde_json",
        "statepack-codecs",
        "statepack-fixtures",
    ] {
        assert!(
            !tree.lines().any(|l| l.starts_with(&format!("{heavy} "))),
            "{heavy} is a normal dependency of the example crate:\n{tree}"
        );
    }
}
