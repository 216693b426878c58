#![warn(missing_docs)]
//! Runs Kaitai Struct's conformance suite against statepack-codegen and the Rust it emits.
//!
//! The build script generates every schema of the suite's `formats/` into the test crate
//! `tests/kaitai_suite.rs`, with a dispatch table of [`SchemaEntry`]s. The test then runs
//! every `spec/ks/*.kst` ([`run::run_kst`]): decode the named input with the generated
//! reader, evaluate each assert's `actual` expression with the generator's evaluator ([`compare`]) and compare it with
//! `expected`, or require the matching decode error ([`kinds`]); then write the value back
//! and require the input's bytes. It also checks that every schema in `formats_err/` whose
//! header names an error is refused ([`errs`]). Results are compared with the known-failures
//! list `conformance/failing_tests.txt` ([`known`]). How to run it and read the report:
//! `docs/conformance.md`.

pub mod compare;
pub mod errs;
pub mod kaitai_fx;
pub mod kinds;
pub mod known;
pub mod kst;
pub mod run;

use statepack_runtime::io::DecodeError;
use statepack_runtime::reflect::Reflect;

/// A generated module's `reflect_decode`: reads the whole input with the root type.
pub type DecodeFn = fn(&[u8]) -> Result<Box<dyn Reflect>, DecodeError>;

/// A generated module's `reflect_roundtrip`: decodes, encodes again and returns the bytes
/// written (or the decode/encode error as text).
pub type RoundtripFn = fn(&[u8]) -> Result<Vec<u8>, String>;

/// What the generator made of one suite schema.
#[derive(Clone, Copy)]
pub enum Outcome {
    /// Generated and compiled into the test crate.
    Compiled {
        /// The module's `reflect_decode`.
        decode: DecodeFn,
        /// The module's `reflect_roundtrip`.
        roundtrip: RoundtripFn,
    },
    /// Generated and compiled, but the module has no reflection entry points (a generator
    /// that does not emit `impl Reflect` yet), so its values cannot be looked at.
    CompiledWithoutReflect,
    /// Refused by the generator: the first line of its first diagnostic.
    Refused(&'static str),
    /// Accepted by the generator but left out of the test crate (listed in
    /// `conformance/skip_compile.txt` because rustc refuses the generated code), with why.
    Dropped(&'static str),
}

/// One row of the build script's dispatch table.
#[derive(Clone, Copy)]
pub struct SchemaEntry {
    /// The schema id (file stem), which is also the kst id.
    pub id: &'static str,
    /// The schema file relative to the suite (`formats/enum_0.ksy`).
    pub file: &'static str,
    /// What the generator made of it.
    pub outcome: Outcome,
}
