//! What a caller can choose about the generated Rust: [`GenerateOptions`], taken by
//! [`generate_with`](crate::generate_with) and set through [`Builder`](crate::Builder).

use std::collections::BTreeMap;
use std::path::PathBuf;

/// Choices about the generated code. Every field has a default ([`Default`]), the one the
/// generator has always used; new fields are added with defaults, so code that starts from
/// `GenerateOptions::default()` and sets fields keeps compiling.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GenerateOptions {
    /// Derive serde's `Serialize` and `Deserialize` on every generated type (default `true`),
    /// through the runtime's re-export `statepack_runtime::serde`, so the crate using the
    /// types needs no serde dependency; the runtime's `serde` feature must be on (a module
    /// compiled without it fails with a message saying so). With `false`, no serde derive or
    /// attribute is emitted.
    pub serde: bool,
    /// Extra traits derived on every generated struct and enum, as Rust paths (`"Eq"`,
    /// `"Hash"`, `"my_crate::MyDerive"`). Each must be derivable for every field type the
    /// schema has (a float field has no `Eq`); rustc names the type where it is not.
    pub derives: Vec<String>,
    /// Directories searched for `meta.imports` after the importing file's folder and before
    /// the directories of [`IMPORT_PATH_VAR`](crate::IMPORT_PATH_VAR), in order.
    pub include_paths: Vec<PathBuf>,
    /// Rust types for Kaitai Struct's opaque types (`ks-opaque-types: true`): the schema's
    /// type name (as written in `type:`) to the full Rust path of the user's type that reads
    /// and writes it (prost-build's `extern_path`).
    pub extern_paths: BTreeMap<String, String>,
}

impl Default for GenerateOptions {
    fn default() -> Self {
        GenerateOptions {
            serde: true,
            derives: Vec::new(),
            include_paths: Vec::new(),
            extern_paths: BTreeMap::new(),
        }
    }
}
