//! One semantics for the expression language, shared by every backend that evaluates
//! expressions instead of compiling them.
//!
//! [`eval`] walks an expression; what a name means is the business of an [`Env`] (the
//! interpreter's type being read, or [`ReflectEnv`] over any value seen through
//! [`statepack_runtime::reflect::Reflect`], which is how the conformance runner and other
//! tools evaluate Kaitai Struct expressions over generated values); every operator, method
//! and cast is a function of [`ops`], written once. The generated Rust computes the same
//! values: where an operation can fail or needs more than one Rust operator, both call the
//! same `statepack_runtime::io` helper. The rules, operator by operator, are the table
//! "One semantics" in `docs/schema-language.md`; `tests/expr_semantics.rs` of the
//! repository runs every operator on edge values through generated code and through this
//! evaluator and requires the same value or the same error.

mod ops;
mod reflect_env;
mod value;
mod walk;

pub use ops::{
    as_bool, as_int, binary, canonical_encoding, cast, equal, index, method, number_type, order,
    unary, R,
};
pub use reflect_env::{RefHandle, ReflectEnv};
pub use value::{Handle, Val};
pub use walk::{eval, Env};
