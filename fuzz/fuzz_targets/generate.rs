//! The schema generator on arbitrary text: `statepack_codegen::generate` returns code or
//! diagnostics, never panics, and never blames itself (a schema it cannot handle must be
//! refused with a diagnostic about the schema, not with an internal error).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(diags) = statepack_codegen::generate(text, "fuzz.ksy") {
        for d in &diags {
            let shown = d.to_string();
            assert!(
                !shown.contains("internal generator error"),
                "the generator blamed itself:\n{shown}\n--- schema ---\n{text}"
            );
        }
    }
});
