//! `statepack-codegen [--interop] SCHEMA_DIR OUT_DIR`: generates every schema into OUT_DIR
//! with the default options (what `Builder::new()` gives a user's crate); with `--interop`,
//! also every library impl ([`statepack_codegen::Options::all`]: binrw, deku, bitvec), as
//! statepack's own build makes them with its default features.
//! The project's checked-in copy is refreshed with
//! `cargo run -p statepack-codegen -- --interop schema generated`.
//!
//! `statepack-codegen --target luau SCHEMA_DIR OUT_DIR`: generates every schema as a Luau
//! ModuleScript (`<stem>.luau`) plus the runtime module `statepack.luau` (see docs/luau.md).
//! `statepack-codegen --target lua51 [--f32-profile] SCHEMA_DIR OUT_DIR`: every schema as a
//! Lua 5.1 reader module (`<stem>.lua`) plus the runtime `statepack51.lua` (docs/lua.md);
//! `--f32-profile` refuses any integer a 32-bit float would not hold (beyond 2^24).
//!
//! `statepack-codegen check FILE.ksy...`: checks each schema (loads, resolves and generates it
//! without writing anything) and prints one line per file: `FILE: ok`, or `FILE: refused`
//! followed by its diagnostics; an accepted file's warnings (an unknown encoding) follow its
//! `ok`. Exits 1 when any file is refused.
use std::path::Path;
use std::process::ExitCode;

fn check(files: &[String]) -> ExitCode {
    let mut refused = 0usize;
    for f in files {
        let text = match statepack_codegen::read_schema_file(std::path::Path::new(f)) {
            Ok(t) => t,
            Err(e) => {
                println!("{f}: refused\n  cannot read {f}: {e}");
                refused += 1;
                continue;
            }
        };
        match statepack_codegen::generate(&text, f) {
            Ok(_) => {
                println!("{f}: ok");
                let path = std::path::Path::new(f);
                let warnings = statepack_codegen::load_schema_at(&text, f, path)
                    .map(|s| s.warnings)
                    .unwrap_or_default();
                if !warnings.is_empty() {
                    for line in statepack_codegen::render(&warnings).lines() {
                        println!("  {line}");
                    }
                }
            }
            Err(d) => {
                refused += 1;
                println!("{f}: refused");
                for line in statepack_codegen::render(&d).lines() {
                    println!("  {line}");
                }
            }
        }
    }
    eprintln!(
        "{} of {} schema(s) accepted",
        files.len() - refused,
        files.len()
    );
    if refused == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("check") {
        if args.len() < 2 {
            eprintln!("usage: statepack-codegen check FILE.ksy...");
            return ExitCode::from(2);
        }
        return check(&args[1..]);
    }
    let mut args = args;
    if args.first().map(String::as_str) == Some("--target") {
        use statepack_codegen::lua_emit::Target;
        let Some(mut target) = args.get(1).and_then(|t| Target::from_name(t)) else {
            eprintln!("usage: statepack-codegen --target luau|lua51 SCHEMA_DIR OUT_DIR (targets: luau, lua51)");
            return ExitCode::from(2);
        };
        if args.get(2).map(String::as_str) == Some("--f32-profile") {
            match &mut target {
                Target::Lua51(o) => o.f32_profile = true,
                Target::Luau => {
                    eprintln!("--f32-profile applies to --target lua51 only");
                    return ExitCode::from(2);
                }
            }
            args.remove(2);
        }
        if args.len() != 4 {
            eprintln!(
                "usage: statepack-codegen --target luau|lua51 [--f32-profile] SCHEMA_DIR OUT_DIR"
            );
            return ExitCode::from(2);
        }
        let (src, out) = (Path::new(&args[2]), Path::new(&args[3]));
        if let Err(e) = std::fs::create_dir_all(out) {
            eprintln!("cannot create {}: {e}", out.display());
            return ExitCode::FAILURE;
        }
        let prefix = src.to_string_lossy().trim_end_matches('/').to_string();
        return match statepack_codegen::lua_emit::generate_dir(src, out, &prefix, target) {
            Ok(files) => {
                for f in files {
                    println!("generated {}/{f}", out.display());
                }
                ExitCode::SUCCESS
            }
            Err(diags) => {
                eprint!("{diags}");
                ExitCode::FAILURE
            }
        };
    }
    let interop = args.first().map(String::as_str) == Some("--interop");
    if interop {
        args.remove(0);
    }
    if args.len() != 2 {
        eprintln!("usage: statepack-codegen [--interop] SCHEMA_DIR OUT_DIR\n       statepack-codegen --target luau|lua51 [--f32-profile] SCHEMA_DIR OUT_DIR\n       statepack-codegen check FILE.ksy...\n  e.g. cargo run -p statepack-codegen -- --interop schema generated\n       cargo run -p statepack-codegen -- codegen/tests/run codegen/tests/run");
        return ExitCode::from(2);
    }
    let (src, out) = (Path::new(&args[0]), Path::new(&args[1]));
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("cannot create {}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    let prefix = src.to_string_lossy().trim_end_matches('/').to_string();
    match statepack_codegen::generate_dir_with(
        src,
        out,
        &prefix,
        &if interop {
            statepack_codegen::Options::all()
        } else {
            statepack_codegen::Options::default()
        },
    ) {
        Ok(files) => {
            for f in files {
                println!("generated {}/{f}", out.display());
            }
            ExitCode::SUCCESS
        }
        Err(diags) => {
            eprint!("{diags}");
            ExitCode::FAILURE
        }
    }
}
