//! What a caller can choose about the generated Rust: [`Options`], taken by
//! [`generate_with`](crate::generate_with) and set through [`Builder`](crate::Builder).

use std::collections::BTreeMap;
use std::path::PathBuf;

/// Choices a build makes for the generated code, beyond the schema. Every field has a
/// default ([`Default`]); start from `Options::default()` and set the fields you need, so
/// that fields added later keep their defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
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
    /// Rust paths of custom processors, by the name written in `process:` (`my_fx`,
    /// `nested.deeply.my_fx`), e.g. `crate::codecs::MyFx`. A name not listed is looked up as
    /// `super::<modules>::<CamelName>` (`super::nested::deeply::MyFx`): next to the module
    /// that includes the generated code. The type implements
    /// `statepack_runtime::process::CustomProcessor` (see that module).
    pub processors: BTreeMap<String, String>,
    /// Rust paths of opaque types (`meta.ks-opaque-types: true`), by the type name written
    /// in the schema, e.g. `crate::external::Header`: the user's type that reads and writes
    /// it (prost-build's `extern_path`; set by
    /// [`Builder::extern_path`](crate::Builder::extern_path)). A name not listed is looked up
    /// as `super::<CamelName>`. The type implements `statepack_runtime::process::OpaqueType`.
    pub opaque_types: BTreeMap<String, String>,
    /// binrw's `BinRead`/`BinWrite` (and `ReadEndian`/`WriteEndian`) for every type that ends
    /// on a byte boundary (default `false`). Needs the runtime feature `binrw`; the impls and
    /// their errors are described in `docs/architecture.md` ("binrw, deku and bitvec").
    pub binrw: bool,
    /// deku's `DekuReader`/`DekuWriter` for every type with bit fields (default `false`).
    /// Needs the runtime feature `deku`.
    pub deku: bool,
    /// `read_bits(&BitSlice<u8, Msb0>)` and `to_bits()` for every type with bit fields
    /// (default `false`). Needs the runtime feature `bitvec`.
    pub bitvec: bool,
    /// A modular-bitfield struct (`bitfield::<Type>`, with `TryFrom` both ways) for every type
    /// whose `seq` is a run of `bit-endian: le` bit fields filling whole bytes (default
    /// `false`). The crate compiling the generated code depends on `modular-bitfield` itself
    /// (0.13): its macro names its crate by absolute path.
    pub modular_bitfield: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            serde: true,
            derives: Vec::new(),
            include_paths: Vec::new(),
            processors: BTreeMap::new(),
            opaque_types: BTreeMap::new(),
            binrw: false,
            deku: false,
            bitvec: false,
            modular_bitfield: false,
        }
    }
}

impl Options {
    /// The defaults with every library impl on (binrw, deku, bitvec, modular-bitfield): what
    /// statepack's own build and `statepack-codegen --interop` on the command line use.
    pub fn all() -> Self {
        Options {
            binrw: true,
            deku: true,
            bitvec: true,
            modular_bitfield: true,
            ..Options::default()
        }
    }
}
