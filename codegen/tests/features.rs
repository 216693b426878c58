//! The schema language, key by key: small valid schemas that together use every supported
//! key must generate Rust that parses (`syn::parse_file`), with the items, members and calls
//! each key stands for. Compiling and running such code is tested with the root crate.

use quote::ToTokens;
use syn::{Fields, File, ImplItem, Item};

/// Generates `text` (named `features/<name>.ksy`) and parses the result.
fn generate(name: &str, text: &str) -> (String, File) {
    let file = format!("features/{name}.ksy");
    let code = statepack_codegen::generate(text, &file)
        .unwrap_or_else(|d| panic!("{name} was refused:\n{}", statepack_codegen::render(&d)));
    let parsed = syn::parse_file(&code).unwrap_or_else(|e| panic!("{name}: {e}\n{code}"));
    (code, parsed)
}

/// Tokens with all whitespace and trailing commas removed, so fragments do not depend on
/// formatting.
fn compact(text: &str) -> String {
    let s: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    s.replace(",)", ")").replace(",]", "]").replace(",}", "}")
}

fn tokens(t: &impl ToTokens) -> String {
    compact(&t.to_token_stream().to_string())
}

/// Members of `struct name` as (member, compact type, compact attributes).
fn members(file: &File, name: &str) -> Vec<(String, String, String)> {
    for item in &file.items {
        if let Item::Struct(s) = item {
            if s.ident == name {
                let Fields::Named(named) = &s.fields else {
                    panic!("{name} has no named fields");
                };
                return named
                    .named
                    .iter()
                    .map(|f| {
                        let attrs: String = f.attrs.iter().map(tokens).collect();
                        (f.ident.as_ref().unwrap().to_string(), tokens(&f.ty), attrs)
                    })
                    .collect();
            }
        }
    }
    panic!("no struct {name}");
}

fn member_names(file: &File, name: &str) -> Vec<String> {
    members(file, name).into_iter().map(|m| m.0).collect()
}

fn member_type(file: &File, name: &str, member: &str) -> String {
    members(file, name)
        .into_iter()
        .find(|m| m.0 == member)
        .unwrap_or_else(|| panic!("{name} has no member {member}"))
        .1
}

/// Variants of `enum name`.
fn variants(file: &File, name: &str) -> Vec<String> {
    for item in &file.items {
        if let Item::Enum(e) = item {
            if e.ident == name {
                return e.variants.iter().map(|v| v.ident.to_string()).collect();
            }
        }
    }
    panic!("no enum {name}");
}

/// The compact tokens of `impl ty { fn method }` or `impl ty { const method }`. For
/// `read_from` of a type whose reader body is `read_into` (a plain type), both functions.
fn item_in_impl(file: &File, ty: &str, method: &str) -> String {
    for item in &file.items {
        let Item::Impl(imp) = item else { continue };
        if tokens(&imp.self_ty) != ty {
            continue;
        }
        let body = imp.items.iter().find_map(|it| match it {
            ImplItem::Fn(f) if method == "read_from" && f.sig.ident == "read_into" => {
                Some(tokens(f))
            }
            _ => None,
        });
        for it in &imp.items {
            match it {
                ImplItem::Fn(f) if f.sig.ident == method => {
                    return tokens(f) + &body.clone().unwrap_or_default();
                }
                ImplItem::Const(c) if c.ident == method => return tokens(&c.expr),
                _ => {}
            }
        }
    }
    panic!("no {ty}::{method}");
}

#[track_caller]
fn has(haystack: &str, fragment: &str) {
    let (h, f) = (compact(haystack), compact(fragment));
    assert!(h.contains(&f), "`{f}` not found in:\n{h}");
}

#[track_caller]
fn lacks(haystack: &str, fragment: &str) {
    let (h, f) = (compact(haystack), compact(fragment));
    assert!(!h.contains(&f), "`{f}` unexpectedly found in:\n{h}");
}

const LISTS: &str = r#"
meta:
  id: lists
  endian: le
seq:
  - id: num_items
    type: u2
  - id: items
    type: u2be
    repeat: expr
    repeat-expr: num_items
  - id: triple
    type: s2
    repeat: expr
    repeat-expr: 3
  - id: binary_count
    type: u1
    repeat: expr
    repeat-expr: 0b11
  - id: decimal_count
    type: u1
    repeat: expr
    repeat-expr: 010
  - id: names
    type: strz
    encoding: ASCII
    repeat: until
    repeat-until: _.length == 0
  - id: rest
    type: u4
    repeat: eos
"#;

#[test]
fn repeat_expr_until_and_eos() {
    let (_, f) = generate("lists", LISTS);
    // The count is derived from `items` on write, so it is not a member.
    assert_eq!(
        member_names(&f, "Lists"),
        [
            "items",
            "triple",
            "binary_count",
            "decimal_count",
            "names",
            "rest"
        ]
    );
    assert_eq!(member_type(&f, "Lists", "items"), "::std::vec::Vec<u16>");
    // A literal count on a number type is a fixed array; `0b11` and `010` are KS literals
    // (3 and decimal 10), not YAML's.
    assert_eq!(member_type(&f, "Lists", "triple"), "[i16;3]");
    assert_eq!(member_type(&f, "Lists", "binary_count"), "[u8;3]");
    assert_eq!(member_type(&f, "Lists", "decimal_count"), "[u8;10]");
    assert_eq!(
        member_type(&f, "Lists", "names"),
        "::std::vec::Vec<::std::string::String>"
    );
    assert_eq!(member_type(&f, "Lists", "rest"), "::std::vec::Vec<u32>");

    let read = item_in_impl(&f, "Lists", "read_from");
    has(&read, "__r.check_count(num_items as i128, 2)");
    has(&read, "__r.read_u16be()");
    // The fixed arrays are one run: one table, decoded from one array.
    has(
        &read,
        "__io::RunField::int(\"triple\", 2, true, false).times(3)",
    );
    has(&read, "i16::from_le_bytes([__b[0], __b[1]])");
    has(&read, "__r.take_until(0)");
    has(&read, "while !__r.is_eof()");
    has(&read, "__r.read_u32le()");
    has(
        &read,
        "if __elem.chars().count() as i128 == 0_i128 { break; }",
    );
    has(&read, "a repeated element took no bytes");

    let write = item_in_impl(&f, "Lists", "write_to");
    has(
        &write,
        "let num_items: u16 = __io::fit(self.items.len() as i128, \"u16\")",
    );
    has(&write, "__w.write_u16be(*__v)");
    has(&write, "UntilMismatch");
    has(&write, "is_ascii()");
    // Fixed arrays have their length in the type: no count check on write.
    lacks(&write, "CountMismatch");

    // 2 (count) + 6 + 3 + 10 (arrays) + 1 (one `until` element, a strz of at least 1 byte).
    assert_eq!(item_in_impl(&f, "Lists", "MIN_LEN"), "22");
}

const SWITCH: &str = r#"
meta:
  id: switch_demo
  -sp-strict: true
  endian: be
seq:
  - id: kind
    type: u1
    enum: kind
  - id: body
    type:
      switch-on: kind
      cases:
        kind::point: point
        kind::line: line
        _: blob
  - id: tag
    type: u1
  - id: payload
    type:
      switch-on: tag
      cases:
        1: point
        0x2: line
        3: point
types:
  point:
    seq:
      - id: x
        type: f4
      - id: y
        type: f4
  line:
    seq:
      - id: a
        type: point
      - id: b
        type: point
  blob:
    seq:
      - id: data
        type: u4
enums:
  kind:
    0: point
    1: line
    7: other
"#;

#[test]
fn switch_on_enum_and_integer_with_default() {
    let (_, f) = generate("switch", SWITCH);
    assert_eq!(
        member_names(&f, "SwitchDemo"),
        ["kind", "body", "tag", "payload"]
    );
    assert_eq!(member_type(&f, "SwitchDemo", "body"), "SwitchDemoBody");
    assert_eq!(variants(&f, "SwitchDemoBody"), ["Point", "Line", "Blob"]);
    // Two keys selecting the same type share one variant.
    assert_eq!(variants(&f, "SwitchDemoPayload"), ["Point", "Line"]);
    assert_eq!(variants(&f, "Kind"), ["Point", "Line", "Other"]);

    let read = item_in_impl(&f, "SwitchDemo", "read_from");
    has(&read, "let __sw: i128 = kind.to_i();");
    has(
        &read,
        "if __sw == Kind::Point.to_i() { Point::read_from(__r).map(SwitchDemoBody::Point) }",
    );
    has(
        &read,
        "else { Blob::read_from(__r).map(SwitchDemoBody::Blob) }",
    );
    has(
        &read,
        "if __sw == 1_i128 || __sw == 3_i128 { Point::read_from(__r).map(SwitchDemoPayload::Point) }",
    );
    has(&read, "if __sw == 2_i128");
    // Without `_`, a value no case names is an error.
    has(&read, "must select one of the switch cases");

    let write = item_in_impl(&f, "SwitchDemo", "write_to");
    has(&write, "SwitchMismatch");
    // The default variant is right when no other case's key matches.
    has(
        &write,
        "if __sw == Kind::Point.to_i() || __sw == Kind::Line.to_i() {",
    );

    // Nested types: a line is two points; a switch takes its smallest case.
    assert_eq!(item_in_impl(&f, "Point", "MIN_LEN"), "8");
    assert_eq!(item_in_impl(&f, "Line", "MIN_LEN"), "16");
    assert_eq!(item_in_impl(&f, "SwitchDemo", "MIN_LEN"), "14");
    has(
        &item_in_impl(&f, "Line", "read_from"),
        "__r.node(\"a\", Point::read_from)?",
    );
    has(
        &item_in_impl(&f, "Point", "read_from"),
        "f32::from_be_bytes([__b[0], __b[1], __b[2], __b[3]])",
    );
    has(
        &item_in_impl(&f, "SwitchDemoBody", "encoded_len"),
        "SwitchDemoBody::Line(__x) => __x.encoded_len()",
    );
}

const SIZES: &str = r#"
meta:
  id: sizes
  -sp-strict: true
  endian: le
  encoding: UTF-8
seq:
  - id: len_header
    type: u4
  - id: header
    type: header
    size: len_header
  - id: len_name
    type: u1
  - id: name
    type: str
    size: len_name
  - id: padding
    size: 4
  - id: label
    type: strz
  - id: trailer
    type: trailer
    size-eos: true
types:
  header:
    seq:
      - id: version
        type: u2
      - id: flags
        type: u2
  trailer:
    seq:
      - id: tail
        size-eos: true
"#;

#[test]
fn sizes_substreams_and_strings() {
    let (_, f) = generate("sizes", SIZES);
    // Length fields named by a later `size` are derived, so not members.
    assert_eq!(
        member_names(&f, "Sizes"),
        ["header", "name", "padding", "label", "trailer"]
    );
    assert_eq!(member_type(&f, "Sizes", "padding"), "::std::vec::Vec<u8>");
    assert_eq!(member_type(&f, "Sizes", "name"), "::std::string::String");
    assert_eq!(member_type(&f, "Trailer", "tail"), "::std::vec::Vec<u8>");

    let read = item_in_impl(&f, "Sizes", "read_from");
    // A sized user type is read from a substream of exactly that many bytes.
    has(&read, "__r.push_limit(len_header as i128)");
    has(&read, "__r.pop_limit(__old)");
    has(&read, "__r.take_sized(len_name as i128)");
    has(&read, "decode_str(b, \"UTF-8\", __at)");
    has(&read, "__r.take_sized(4_i128)");
    has(&read, "__r.take_until(0)");
    has(&item_in_impl(&f, "Trailer", "read_from"), "__r.take_rest()");

    let write = item_in_impl(&f, "Sizes", "write_to");
    has(
        &write,
        "__io::fit(self.header.encoded_len() as i128, \"u32\")",
    );
    has(&write, "__io::fit(self.name.len() as i128, \"u8\")");
    // A literal size is checked, not derived.
    has(&write, "if __v.len() as i128 != 4_i128");
    has(&write, "SizeMismatch");
    has(
        &write,
        "a zero-terminated string cannot contain a zero byte",
    );
    has(
        &item_in_impl(&f, "Sizes", "encoded_len"),
        "self.label.len() + 1",
    );
    // Strings and bytes may be empty; the derived lengths take their bytes.
    assert_eq!(item_in_impl(&f, "Sizes", "MIN_LEN"), "10");
}

const CHECKS: &str = r#"
meta:
  id: checks
  endian: le
  encoding: ASCII
seq:
  - id: magic
    contents: [0x53, 0x50, "k!"]
  - id: version_text
    contents: v1
  - id: version
    type: u1
    valid: 4
  - id: level
    type: s2
    valid:
      min: -5
      max: 10
  - id: mode
    type: u1
    enum: mode
    valid:
      any-of: [mode::fast, mode::safe]
  - id: even
    type: u4
    valid:
      expr: _ % 2 == 0
  - id: ratio
    type: f4
    valid:
      min: 0
      max: 1.5
  - id: code
    type: str
    size: 3
    valid:
      eq: '"abc"'
enums:
  mode:
    1: fast
    2: safe
    3: risky
"#;

#[test]
fn contents_and_valid_rules() {
    let (_, f) = generate("checks", CHECKS);
    // Contents are checked and written back, never stored.
    assert_eq!(
        member_names(&f, "Checks"),
        ["version", "level", "mode", "even", "ratio", "code"]
    );
    let read = item_in_impl(&f, "Checks", "read_from");
    // Fixed contents are one run: compared in place, and named in the run's table.
    has(&read, "__io::RunField::contents(\"magic\", b\"SPk!\")");
    has(&read, "if __b[0..4] != b\"SPk!\"[..]");
    has(&read, "__io::RunField::contents(\"version_text\", b\"v1\")");
    has(&read, "\"must equal 4\"");
    has(&read, "\"must be in -5..=10\"");
    has(&read, "\"must be one of mode::fast, mode::safe\"");
    has(&read, "\"must satisfy _ % 2 == 0\"");
    has(&read, "\"must be in 0..=1.5\"");
    has(&read, "\"must equal \\\"abc\\\"\"");
    // Each check is the condition under which the value breaks the rule: no `!(..)` around
    // a comparison of integers, and parentheses only where Rust needs them (a cast before
    // `<`).
    has(&read, "if *__v as i128 != 4_i128");
    has(
        &read,
        "if (*__v as i128) < -5_i128 || *__v as i128 > 10_i128 {",
    );
    has(&read, "if *__v != Mode::Fast && *__v != Mode::Safe {");
    has(&read, "__io::mod_floor(__elem as i128, 2_i128)");
    // An integer bound on a float field is compared as a float.
    // A float is outside its range unless it is within (NaN is never within).
    has(
        &read,
        "if !(*__v as f64 >= 0f64 && *__v as f64 <= 1.5_f64) {",
    );
    has(
        &read,
        "AsRef::<str>::as_ref(__v) != AsRef::<str>::as_ref(&\"abc\")",
    );
    has(&read, "DecodeError::not_valid(");

    let write = item_in_impl(&f, "Checks", "write_to");
    // The two contents are one fixed run: one array, appended once.
    has(&write, "__b[0..4].copy_from_slice(b\"SPk!\")");
    has(&write, "__b[4..6].copy_from_slice(b\"v1\")");
    has(&write, "__w.write_bytes(&__b)");
    has(&write, "EncodeError::not_valid(");
    has(&write, "must be ASCII");
    // 4 + 2 (contents) + 1 + 2 + 1 + 4 + 4; a sized string counts as possibly empty.
    assert_eq!(item_in_impl(&f, "Checks", "MIN_LEN"), "18");
}

const CONDITIONS: &str = r#"
meta:
  id: conditions
  title: Conditions and names
  endian: be
  bit-endian: be
  file-extension: cnd
  license: MIT
  ks-version: 0.11
  application: tests
  xref: {}
  tags: [test]
doc: |
  The root type.
doc-ref: https://example.com/conditions
-tool-hint: ignored by Kaitai and by statepack
seq:
  - id: flags
    type: u1
  - id: extra_ms
    type: u4le
    if: (flags & 0b1) != 0 and flags >> 1 < 3
    -sp-units: ms
    doc: Extra time.
  - id: type
    type: u2
    -x-note: ignored
  - id: self
    type: s8
  - id: total
    type: u4
    -sp-sum-of: parts.size_bytes
  - id: parts
    type: part
    repeat: eos
types:
  part:
    doc-ref: https://example.com/part
    seq:
      - id: size_bytes
        type: u2
      - id: data
        size: "size_bytes * 2 + (size_bytes > 4 ? 1 : 0) - size_bytes / 2"
"#;

#[test]
fn conditions_names_docs_and_sums() {
    let (code, f) = generate("conditions", CONDITIONS);
    // `total` is derived from the parts, so it is not a member.
    assert_eq!(
        member_names(&f, "Conditions"),
        ["flags", "extra_ms", "r#type", "self_", "parts"]
    );
    let m = members(&f, "Conditions");
    assert_eq!(m[1].1, "::std::option::Option<u32>");
    assert_eq!(m[2].1, "u16");
    assert_eq!(m[3].1, "i64");
    // Serde keeps the schema's names.
    lacks(&m[2].2, "serde(rename");
    has(&m[3].2, "#[serde(rename = \"self\")]");
    // Docs carry the schema doc, the unit, the condition and the schema line.
    has(&m[1].2, "Extra time.");
    has(
        &m[1].2,
        "Unit: ms. Present only when `(flags & 0b1) != 0 and flags >> 1 < 3`.",
    );
    has(&m[1].2, "Schema: `features/conditions.ksy` line 20.");

    let read = item_in_impl(&f, "Conditions", "read_from");
    has(&read, "__r.read_u32le()");
    has(&read, "__io::RunField::int(\"type\", 2, false, true)");
    has(&read, "__io::RunField::int(\"self\", 8, true, true)");
    has(&read, "i64::from_be_bytes(");
    // A bit operation compared keeps the parentheses a reader expects; a cast needs none.
    has(
        &read,
        "if (flags as i128 & 1_i128) != 0_i128 && (flags as i128).wrapping_shr(1) < 3_i128",
    );
    has(&read, "(flags as i128).wrapping_shr(1)");
    has(&read, "stored, but the parts[].size_bytes values sum to");

    let write = item_in_impl(&f, "Conditions", "write_to");
    has(&write, "io::present(&self.extra_ms,");
    has(
        &write,
        "self.parts.iter().map(|__e| __e.size_bytes as i128).sum::<i128>()",
    );

    let part = item_in_impl(&f, "Part", "read_from");
    has(&part, "(size_bytes as i128).wrapping_mul(2_i128)");
    has(&part, "__io::div_floor(size_bytes as i128, 2_i128)");
    has(
        &part,
        "if size_bytes as i128 > 4_i128 { 1_i128 } else { 0_i128 }",
    );
    // A size given by a larger expression is checked on write, so `size_bytes` stays.
    assert_eq!(member_names(&f, "Part"), ["size_bytes", "data"]);
    has(&item_in_impl(&f, "Part", "write_to"), "SizeMismatch");

    assert!(code
        .starts_with("// @generated by statepack-codegen 0.1.0 from features/conditions.ksy.\n"));
    has(
        &code,
        "pub const SCHEMA_FILE: &str = \"features/conditions.ksy\";",
    );
    has(&code, "pub const SCHEMA_ID: &str = \"conditions\";");
    has(&code, "The root type of the schema.");
}

const ENUMS: &str = r#"
meta:
  id: enums_demo
  -sp-strict: true
seq:
  - id: temperature
    type: s1
    enum: temperature
  - id: wide
    type: u8le
    enum: wide
  - id: heat
    type: u1
    if: temperature == temperature::hot or temperature.to_i < -1 + 1
enums:
  temperature:
    -1: cold
    0:
      id: mild
      doc: Neither hot nor cold.
      doc-ref: https://example.com/mild
    0x7f: hot
  wide:
    0xffff_ffff_ffff_ffff: max
    0: zero
"#;

#[test]
fn enums_at_the_edges_of_their_types() {
    let (_, f) = generate("enums", ENUMS);
    assert_eq!(variants(&f, "Temperature"), ["Cold", "Mild", "Hot"]);
    assert_eq!(variants(&f, "Wide"), ["Max", "Zero"]);
    let from = item_in_impl(&f, "Temperature", "from_i");
    has(&from, "-1 => Some(Temperature::Cold)");
    has(&from, "127 => Some(Temperature::Hot)");
    has(&from, "_ => None");
    has(
        &item_in_impl(&f, "Wide", "to_i"),
        "Wide::Max => 18446744073709551615",
    );
    has(
        &item_in_impl(&f, "Temperature", "SCHEMA_NAME"),
        "\"temperature\"",
    );
    assert_eq!(member_type(&f, "EnumsDemo", "temperature"), "Temperature");
    let read = item_in_impl(&f, "EnumsDemo", "read_from");
    has(
        &read,
        "__io::RunField::enumerated(\"temperature\", (1, true, false), \"temperature\", |__v| Temperature::from_i(__v).map(Temperature::name), false)",
    );
    has(
        &read,
        "Temperature::from_i(i8::from_le_bytes([__b[0]]) as i128)",
    );
    has(&read, "u64::from_le_bytes(");
    has(
        &read,
        "if temperature == Temperature::Hot || temperature.to_i() < (-1_i128).wrapping_add(1_i128) {",
    );
    // Written in one fixed run with `wide`: the stored integer at its offset.
    has(
        &item_in_impl(&f, "EnumsDemo", "write_to"),
        "__b[0..1].copy_from_slice(&(self.temperature.to_i() as i8).to_le_bytes())",
    );
}

const NAMES: &str = r#"
meta:
  id: names
  endian: le
seq:
  - id: r
    type: u1
  - id: w
    type: f4
  - id: type
    type: u1
  - id: self
    type: u1
  - id: data
    size: r + type
"#;

#[test]
fn field_names_that_are_rust_words() {
    let (_, f) = generate("names", NAMES);
    assert_eq!(
        member_names(&f, "Names"),
        ["r", "w", "r#type", "self_", "data"]
    );
    // The reader and writer are `__r` and `__w`, names no field can have, so fields called
    // `r` or `w` (a quaternion's w) do not shadow them.
    let read = item_in_impl(&f, "Names", "read_from");
    has(&read, "(__r: &mut __io::ByteReader<'_, T>)");
    has(&read, "let (r, w, r#type, self_): (u8, f32, u8, u8) =");
    has(&read, "let r = u8::from_le_bytes(");
    has(&read, "let w = f32::from_le_bytes(");
    has(
        &read,
        "__r.take_sized((r as i128).wrapping_add(r#type as i128))",
    );
    let write = item_in_impl(&f, "Names", "write_to");
    has(&write, "(&self, __w: &mut __io::ByteWriter)");
    has(&write, "__b[1..5].copy_from_slice(&self.w.to_le_bytes())");
}

#[test]
fn generation_is_deterministic() {
    for (name, text) in [
        ("lists", LISTS),
        ("switch", SWITCH),
        ("sizes", SIZES),
        ("checks", CHECKS),
        ("conditions", CONDITIONS),
        ("enums", ENUMS),
        ("names", NAMES),
    ] {
        assert_eq!(generate(name, text).0, generate(name, text).0, "{name}");
    }
}

const BOXED: &str = r#"
meta:
  id: boxed
  endian: le
seq:
  - id: flags
    type: u1
  - id: always
    type: big
    -sp-box: true
  - id: maybe
    type: big
    if: flags != 0
    -sp-box: true
  - id: plain
    type: big
types:
  big:
    seq:
      - id: a
        type: u4
"#;

#[test]
fn sp_box_boxes_the_member_only() {
    let (code, f) = generate("boxed", BOXED);
    let m = members(&f, "Boxed");
    assert_eq!(m[1].1, "::std::boxed::Box<Big>");
    assert_eq!(m[2].1, "::std::option::Option<::std::boxed::Box<Big>>");
    assert_eq!(m[3].1, "Big");
    assert!(
        compact(&code).contains("Big::read_from(__r).map(::std::boxed::Box::new)"),
        "{code}"
    );
}

const BITS: &str = r#"
meta:
  id: bits
  -sp-strict: true
  endian: le
seq:
  - id: flag
    type: b1
  - id: code
    type: b22
    -sp-offset-binary: true
  - id: n
    type: b9
    if: flag
  - id: tail
    type: u1
  - id: groups
    type: b8
    repeat: until
    repeat-until: _ < 128
    -sp-varint: leb128
  - id: align
    size: 0
"#;

#[test]
fn bit_fields_offset_binary_varints_and_alignment() {
    let (_, f) = generate("bits", BITS);
    assert_eq!(member_type(&f, "Bits", "flag"), "bool");
    assert_eq!(member_type(&f, "Bits", "code"), "i32");
    assert_eq!(member_type(&f, "Bits", "n"), "::std::option::Option<u16>");
    assert_eq!(member_type(&f, "Bits", "groups"), "u64");
    let read = item_in_impl(&f, "Bits", "read_from");
    has(&read, "__io::RunField::bits(\"code\", 22, true)");
    has(&read, "from_offset_binary(__c.take(22u32), 22u32)");
    // Kaitai Struct's rule: `tail` (a byte field after bits) and `align` start on a byte;
    // `groups` (bits after a byte field) does not realign.
    has(
        &read,
        r#"__r.align_to_byte().map_err(|e| e.in_field("tail"))?;"#,
    );
    has(
        &read,
        r#"__r.align_to_byte().map_err(|e| e.in_field("align"))?;"#,
    );
    lacks(&read, r#"e.in_field("groups"))?; __r.enter"#);
    let write = item_in_impl(&f, "Bits", "write_to");
    has(&write, "to_offset_binary(*__v as i64, 22u32)");
    has(&write, "__w.align_to_byte();");
    // A type with bit fields counts its bits from the values, without writing.
    let len = item_in_impl(&f, "Bits", "encoded_len");
    lacks(&len, "self.write_to(");
    has(&len, "__bits.div_ceil(8)");
}

const ELSE_ONLY: &str = r#"
meta:
  id: else_only
seq:
  - id: code
    type: u1
  - id: body
    type:
      switch-on: code
      cases:
        _: data
types:
  data:
    seq:
      - id: value
        type: u1
"#;

#[test]
fn a_switch_with_only_a_default_reads_it_without_extra_braces() {
    let (_, f) = generate("else_only", ELSE_ONLY);
    let read = item_in_impl(&f, "ElseOnly", "read_from");
    // `{ Data::read_from(..) }` alone in a block is rustc's `unused_braces` warning in the
    // file that includes the generated code.
    has(&read, "Data::read_from(__r).map(ElseOnlyBody::Data)");
    lacks(&read, ";{Data::read_from(__r)");
}
