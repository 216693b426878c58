//! Writes a saved game with the types generated from `schema/game_save.ksy`, reads it back,
//! checks that it is the same, and prints it; then shows the error a damaged file gives.
//!
//! `statepack-example [FILE]` (default: `game.gsav` in the system's temporary folder).
//!
//! What it uses of statepack is in `statepack_runtime`, the crate generated code calls:
//! `include_schema!` here, and the errors of `decode` and `encode`
//! (`statepack_runtime::io::DecodeError`, `EncodeError`) through the generated types.
//! statepack's own format math would be `statepack_codecs::…`, a dependency this crate does
//! not need (see `Cargo.toml`).

statepack_runtime::include_schema!(mod game_save);

use game_save::{GameSave, Player, Team, Vec2};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args_os()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("game.gsav"));

    let save = GameSave {
        version: 1,
        map_name: "Harbour".to_owned(),
        tick: 36_000,
        players: vec![
            Player {
                name: "Ada".to_owned(),
                team: Team::Red,
                score: 1200,
                pos: Vec2 { x: 12.5, y: -3.25 },
                alive: true,
                bot: false,
                level: 17,
            },
            Player {
                name: "Robo".to_owned(),
                team: Team::Blue,
                score: 950,
                pos: Vec2 { x: 40.0, y: 8.0 },
                alive: false,
                bot: true,
                level: 63,
            },
            // Every generated type has `Default` (an enum's first value, zeros, empty
            // strings and lists), so a literal names only the fields it sets.
            Player {
                name: "Nova".to_owned(),
                score: 10,
                ..Default::default()
            },
        ],
    };

    // Counts and lengths (`num_players`, `len_name`) are derived when writing.
    let bytes = save.encode()?;
    std::fs::write(&path, &bytes)?;
    println!("wrote {} ({} bytes)", path.display(), bytes.len());

    let read = GameSave::decode(&std::fs::read(&path)?)?;
    if read != save {
        return Err("the file read back differs from what was written".into());
    }
    println!(
        "read it back: map {:?} at tick {}",
        read.map_name, read.tick
    );
    for p in &read.players {
        println!(
            "  {:<5} team {:<4} score {:>5} at ({}, {}) m, level {}{}{}",
            p.name,
            p.team.name(),
            p.score,
            p.pos.x,
            p.pos.y,
            p.level,
            if p.alive { "" } else { ", out" },
            if p.bot { ", bot" } else { "" },
        );
    }

    // A writer refuses a value that does not fit (a level is 6 bits), naming the field.
    let mut too_high = save.clone();
    too_high.players[1].level = 64;
    match too_high.encode() {
        Err(e) => println!("level 64 refused: {e}"),
        Ok(_) => return Err("a 6-bit level of 64 was written".into()),
    }

    // A damaged file is an error naming the field and the byte offset, never a panic.
    match GameSave::decode(&bytes[..bytes.len() - 3]) {
        Err(e) => println!("truncated file refused: {e}"),
        Ok(_) => return Err("a truncated file was read".into()),
    }
    Ok(())
}
