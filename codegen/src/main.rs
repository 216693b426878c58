//! `statepack-codegen SCHEMA_DIR OUT_DIR`: generates every schema into OUT_DIR.
//! The project's checked-in copy is refreshed with
//! `cargo run -p statepack-codegen -- schema generated`.
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 2 {
        eprintln!("usage: statepack-codegen SCHEMA_DIR OUT_DIR\n  e.g. cargo run -p statepack-codegen -- schema generated");
        return ExitCode::from(2);
    }
    let (src, out) = (Path::new(&args[0]), Path::new(&args[1]));
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("cannot create {}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    let prefix = src.to_string_lossy().trim_end_matches('/').to_string();
    match statepack_codegen::generate_dir(src, out, &prefix) {
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
