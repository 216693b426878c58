//! One semantics for the expression language, shared by every backend that evaluates
//! expressions instead of compiling them.
//!
//! [`eval_tree`] walks a typed expression tree of the check stage (`crate::typed`), the
//! trees the Rust emitter compiles; what a name means is the business of a [`TreeEnv`]
//! (the interpreter's type being read), or [`ReflectEnv`] over any value seen through
//! [`statepack_runtime::reflect::Reflect`], which is how the conformance runner evaluates
//! a Kaitai Struct `.kst` assert over generated values, once the check stage's typer has
//! typed it over the schema's root type (`crate::typed::type_assert`). Every operator,
//! method and cast is a function of [`ops`], written once, which the walk calls. The generated Rust computes the same
//! values: where an operation can fail or needs more than one Rust operator, both call the
//! same `statepack_runtime::io` helper. The rules, operator by operator, are the table
//! "One semantics" in `docs/schema-language.md`; `tests/expr_semantics.rs` of the
//! repository runs every operator on edge values through generated code and through this
//! evaluator and requires the same value or the same error.

mod ops;
mod reflect_env;
mod tree;
mod value;

pub use ops::{
    as_bool, as_int, binary, canonical_encoding, cast, equal, index, method, number_type, order,
    unary, R,
};
pub use reflect_env::{RefHandle, ReflectEnv};
pub use tree::{eval as eval_tree, TreeEnv};
pub use value::{Handle, Val};

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

/// A string kept for the rest of the process (schema names in values and errors must be
/// `&'static str`, as in generated code). Each distinct string is kept once.
pub(crate) fn intern(s: &str) -> &'static str {
    static SET: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut set = SET
        .get_or_init(|| Mutex::new(HashSet::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(k) = set.get(s) {
        return k;
    }
    let k: &'static str = Box::leak(s.to_owned().into_boxed_str());
    set.insert(k);
    k
}
