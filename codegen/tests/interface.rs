//! The generator and the runtime agree on the generated-code interface: the number the
//! generator writes into every module (`require_interface!(N)`) is the one the runtime
//! accepts.

#[test]
fn generator_targets_the_runtime_interface() {
    assert_eq!(
        statepack_codegen::RUNTIME_INTERFACE,
        statepack_runtime::GENERATED_CODE_INTERFACE
    );
    let code = statepack_codegen::generate(
        "meta:\n  id: one\nseq:\n  - id: v\n    type: u1\n",
        "one.ksy",
    )
    .expect("a valid schema");
    assert!(code.contains(&format!(
        "::statepack_runtime::require_interface!({});",
        statepack_runtime::GENERATED_CODE_INTERFACE
    )));
}
