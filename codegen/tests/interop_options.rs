//! The generator's binrw / deku / bitvec options: nothing of them by default, and with them
//! on, each impl exactly on the types the docs name (docs/architecture.md, "binrw, deku and
//! bitvec"). That the emitted impls compile and work is tested in the root crate
//! (`tests/interop.rs`), whose build turns every option on.

use statepack_codegen::{generate_with, Options};
use std::path::Path;

const SCHEMA: &str = r#"
meta:
  id: mixed
  endian: le
seq:
  - id: head
    type: u2
  - id: packed
    type: packed
  - id: tail
    type: tail_bits
  - id: with_args
    type: sized(head)
types:
  packed:
    seq:
      - id: flag
        type: b1
      - id: level
        type: b7
  tail_bits:
    seq:
      - id: a
        type: u1
      - id: b
        type: b3
  sized:
    params:
      - id: n
        type: u2
    seq:
      - id: x
        type: u1
"#;

/// True when `code` gives type `t` binrw's four impls: written out (a type with params) or
/// through the runtime's `binrw_impls!` (a type without).
fn has_binrw(code: &str, t: &str) -> bool {
    (code.contains(&format!("binrw::BinRead for {t} "))
        && code.contains(&format!("binrw::BinWrite for {t} ")))
        || code.contains(&format!("binrw_impls!({t});"))
        || code.contains(&format!("binrw_impls!({t}, bits);"))
}

/// The generated code with every run of whitespace made one space (prettyplease breaks
/// long impl headers over lines).
fn gen(opts: Options) -> String {
    let code = generate_with(SCHEMA, "mixed.ksy", Path::new("mixed.ksy"), &opts)
        .unwrap_or_else(|d| panic!("{}", statepack_codegen::render(&d)));
    code.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn nothing_by_default() {
    let code = gen(Options::default());
    for lib in ["binrw", "deku", "bitvec", "interop"] {
        assert!(!code.contains(lib), "`{lib}` in the default output");
    }
}

#[test]
fn each_option_emits_only_its_own_impls() {
    let code = gen(Options {
        binrw: true,
        ..Options::default()
    });
    assert!(has_binrw(&code, "Mixed"));
    assert!(!code.contains("deku") && !code.contains("bitvec"));
    let code = gen(Options {
        deku: true,
        ..Options::default()
    });
    assert!(code.contains("DekuReader<'__a, ()> for Packed"));
    assert!(!code.contains("binrw") && !code.contains("pub fn read_bits("));
    let code = gen(Options {
        bitvec: true,
        ..Options::default()
    });
    assert!(code.contains("pub fn read_bits("));
    assert!(!code.contains("binrw") && !code.contains("DekuReader"));
}

#[test]
fn binrw_on_byte_aligned_types_deku_and_bitvec_on_types_with_bits() {
    let code = gen(Options::all());
    // Byte-aligned ends: the root, `packed` (8 bits), `sized`.
    for t in ["Mixed", "Packed", "Sized"] {
        assert!(has_binrw(&code, t), "binrw impls for {t}");
    }
    // `tail_bits` may end inside a byte (Kaitai's rules): no binrw impl, deku yes.
    assert!(!has_binrw(&code, "TailBits"));
    for t in ["Packed", "TailBits"] {
        assert!(
            code.contains(&format!("DekuReader<'__a, ()> for {t} ")),
            "deku for {t}"
        );
        assert!(
            code.contains(&format!(
                "DekuWriter<::statepack_runtime::deku::ctx::Endian> for {t} "
            )),
            "deku Endian ctx for {t}"
        );
        assert!(
            code.contains(&format!(
                "impl {t} {{ /// Reads one value from the start of a bit slice"
            )),
            "read_bits for {t}"
        );
    }
    // No bit fields: no deku impl.
    for t in ["Mixed", "Sized"] {
        assert!(
            !code.contains(&format!("DekuReader<'__a, ()> for {t} ")),
            "deku for {t}"
        );
    }
    // `packed` starts with a bit field and goes on from deku's bit; `tail_bits` aligns first.
    for first in ["true", "false"] {
        assert!(
            code.contains(&format!("interop::deku::read( reader, {first},"))
                || code.contains(&format!("interop::deku::read(reader, {first},")),
            "deku read with bits_first = {first}"
        );
    }
}

#[test]
fn params_become_binrw_args() {
    let code = gen(Options::all());
    let at = code
        .find("binrw::BinRead for Sized")
        .expect("BinRead for Sized");
    let block = &code[at..at + 600];
    assert!(block.contains("type Args<'__a> = (i128,);"), "{block}");
    assert!(block.contains("Self::read_from(__r, __a0)"), "{block}");
}

/// Which types get a modular-bitfield view: only runs of `bit-endian: le` bit fields that
/// fill whole bytes, with nothing else in the `seq`.
#[test]
fn modular_bitfield_views_only_whole_byte_lsb_first_runs() {
    const LE: &str = r#"
meta:
  id: views
  bit-endian: le
seq:
  - id: flags
    type: flags
  - id: word
    type: word
  - id: odd
    type: odd
  - id: mixed
    type: mixed
  - id: cond
    type: cond
  - id: msb
    type: msb
types:
  flags:
    seq:
      - id: a
        type: b1
      - id: type
        type: b7
  word:
    seq:
      - id: lo
        type: b5
        enum: kind
      - id: hi
        type: b11
        -sp-offset-binary: true
  odd:
    seq:
      - id: x
        type: b3
  mixed:
    seq:
      - id: x
        type: b8
      - id: y
        type: u1
  cond:
    seq:
      - id: x
        type: b4
      - id: y
        type: b4
        if: x == 1
  msb:
    meta:
      bit-endian: be
    seq:
      - id: x
        type: b8
enums:
  kind:
    1: one
"#;
    let gen = |opts: &Options| {
        let code = generate_with(LE, "views.ksy", Path::new("views.ksy"), opts)
            .unwrap_or_else(|d| panic!("{}", statepack_codegen::render(&d)));
        code.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    assert!(!gen(&Options::default()).contains("modular_bitfield"));
    let code = gen(&Options {
        modular_bitfield: true,
        ..Options::default()
    });
    for t in ["Flags", "Word"] {
        assert!(
            code.contains(&format!("pub struct {t} {{ /// `")),
            "view of {t}"
        );
        assert!(
            code.contains(&format!("TryFrom<&{t}> for bitfield::{t}")),
            "{t} to view"
        );
        assert!(
            code.contains(&format!("TryFrom<bitfield::{t}> for {t}")),
            "view to {t}"
        );
    }
    // A keyword member gets a trailing `_` (modular-bitfield prefixes it with `set_`).
    assert!(code.contains("pub type_: ::modular_bitfield::specifiers::B7"));
    assert!(code.contains("pub a: bool"));
    // The stored codes of an enum and of an offset-binary field.
    assert!(code.contains("pub lo: ::modular_bitfield::specifiers::B5"));
    assert!(code.contains("pub hi: ::modular_bitfield::specifiers::B11"));
    for t in ["Views", "Odd", "Mixed", "Cond", "Msb"] {
        assert!(
            !code.contains(&format!("for bitfield::{t} ")),
            "no view of {t}"
        );
    }
}
