//! Generates `schema/*.ksy` into `OUT_DIR` (one module per schema; imports, such as
//! `vec2`, resolved next to the importing schema). A schema error fails the build with
//! `schema/<file>.ksy:line:column` diagnostics.
fn main() -> Result<(), statepack_codegen::BuildError> {
    statepack_codegen::Builder::new().compile(&["schema/game_save.ksy"])?;
    Ok(())
}
