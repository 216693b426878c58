//! Writes `OUT_DIR/run_modules.rs` for the `kaitai_lang` target: every generated module in
//! `codegen/tests/run/` (the language tests' schemas, Kaitai features each) as a module, and
//! a table of their `reflect_decode` / `reflect_roundtrip` entry points. Modules that name
//! items of the crate that includes them (custom processors, opaque types) are left out.
use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../codegen/tests/run");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("codegen/tests/run exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().and_then(|x| x.to_str()) == Some("rs"))
        .collect();
    files.sort();
    let mut mods = String::new();
    let mut table = String::new();
    for path in files {
        println!("cargo:rerun-if-changed={}", path.display());
        let code = std::fs::read_to_string(&path).expect("readable");
        if code.contains("crate::")
            || code.contains("super::")
            || !code.contains("fn reflect_roundtrip")
        {
            continue;
        }
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a file name");
        let abs = path.canonicalize().expect("exists");
        let _ = writeln!(
            mods,
            "#[allow(dead_code, clippy::all, unused_parens, unused_braces)]\n#[path = {:?}]\nmod m_{stem};",
            abs.display().to_string()
        );
        let _ = writeln!(
            table,
            "    ({stem:?}, m_{stem}::reflect_decode, m_{stem}::reflect_roundtrip),"
        );
    }
    let text = format!(
        "{mods}\n/// (schema, reflect_decode, reflect_roundtrip) for every module above.\n\
         static SCHEMAS: &[(&str, DecodeFn, RoundtripFn)] = &[\n{table}];\n"
    );
    let out =
        Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("run_modules.rs");
    std::fs::write(out, text).expect("OUT_DIR is writable");
}
