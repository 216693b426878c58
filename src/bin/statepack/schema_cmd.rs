//! `inspect`, `decode` (and `encode`) with `--schema FILE.ksy`: any schema, read by the
//! generator's interpreter (`statepack_codegen::interp`) instead of a built-in format.
//!
//! The schema is loaded and checked as the generator checks it (imports next to the schema,
//! then in `STATEPACK_KSY_PATH`); a schema the generator would refuse prints its diagnostics
//! (file:line:column, key path, hint) and the command fails. Opaque types
//! (`ks-opaque-types: true`) are given as other schemas (`--opaque NAME=FILE.ksy`,
//! [`opaque_types`]); a custom processor, Rust code, cannot be given on the command line, so
//! a schema using one is refused naming it.

mod given;
mod sinks;

use anyhow::{bail, Context, Result};
use serde_json::{Map, Value as Json};
use statepack_codegen::interp::{self, BitSpan, DynStruct, DynValue};
use std::io::{self, Write};
use std::path::Path;

/// Loads and checks the schema at `path`, with no opaque types ([`load_with`]).
pub fn load(path: &Path) -> Result<statepack_codegen::typed::Checked> {
    load_with(path, interp::Extensions::none())
}

/// Loads and checks the schema at `path`, for reading with the opaque types of `ext`.
/// Errors: the rendered diagnostics of a schema the generator refuses, or a schema with
/// constructs the interpreter does not cover (named: a custom processor, an opaque type not
/// given).
pub fn load_with(
    path: &Path,
    ext: &interp::Extensions,
) -> Result<statepack_codegen::typed::Checked> {
    let text = statepack_codegen::read_schema_file(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let shown = path.display().to_string();
    let schema = match statepack_codegen::load_checked(&text, &shown, path, &[]) {
        Ok(s) => s,
        Err(diags) => {
            eprint!("{}", statepack_codegen::render(&diags));
            bail!("{shown}: the schema has {} problem(s) (above)", diags.len());
        }
    };
    if let Some(why) = interp::unsupported_with(&schema, ext) {
        bail!("{shown}: not supported by `--schema`: {why}");
    }
    Ok(schema)
}

/// The opaque types of `--opaque NAME=FILE.ksy` options: each NAME is read and written as the
/// root type of the schema in FILE.ksy (`interp::SchemaOpaque`). A schema given may itself use
/// the opaque types given before it. Errors: an option not of the form NAME=FILE, a NAME given
/// twice, a schema that does not load or whose root type takes params.
pub fn opaque_types(specs: &[String]) -> Result<interp::Extensions> {
    let mut ext = interp::Extensions::default();
    for spec in specs {
        let Some((name, file)) = spec
            .split_once('=')
            .filter(|(n, f)| !n.is_empty() && !f.is_empty())
        else {
            bail!(
                "--opaque {spec}: expected NAME=FILE.ksy (the opaque type's name, then its schema)"
            );
        };
        if ext.opaque_type(name).is_some() {
            bail!("--opaque {spec}: opaque type {name} is given twice");
        }
        let schema = load_with(Path::new(file), &ext)
            .with_context(|| format!("--opaque {spec}: cannot use {file} for {name}"))?;
        let codec = interp::SchemaOpaque::new(schema)
            .map_err(|m| anyhow::anyhow!("--opaque {spec}: {m}"))?;
        ext = ext.opaque(name, codec);
    }
    Ok(ext)
}

/// Reads `bytes` with the schema's root type through `sink`, keeping only what the schema's
/// expressions need. Errors: the decode error with the field path and the byte offset, or
/// the sink's.
fn stream(
    schema: &statepack_codegen::typed::Checked,
    bytes: &[u8],
    file: &Path,
    sink: &mut (dyn interp::Sink + Send),
    ext: &interp::Extensions,
) -> Result<DynStruct> {
    interp::stream_with(schema, bytes, sink, ext).map_err(|e| match e {
        interp::StreamError::Decode(e) => {
            anyhow::anyhow!("{} is not a valid {} file: {e}", file.display(), schema.id)
        }
        interp::StreamError::Output(e) => anyhow::Error::new(e),
    })
}

/// What `decode` and `inspect --schema` do with an instance that fails to read: show its
/// error in place, or with `--strict` fail.
pub fn instance_errors(strict: bool) -> interp::InstanceErrors {
    if strict {
        interp::InstanceErrors::Strict
    } else {
        interp::InstanceErrors::Show
    }
}

/// Runs `f` on a buffered standard output; a closed pipe (`| head`) is not an error.
fn to_stdout(f: impl FnOnce(&mut io::BufWriter<io::Stdout>) -> Result<()>) -> Result<()> {
    let mut out = io::BufWriter::new(io::stdout());
    let res = f(&mut out).and_then(|()| Ok(out.flush()?));
    match res {
        Err(e)
            if e.downcast_ref::<io::Error>()
                .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe) =>
        {
            Ok(())
        }
        other => other,
    }
}

/// `decode --schema`: checks that `bytes` read with the schema (nothing is printed for a
/// file that does not), notes on standard error the bytes no field reads, then reads them
/// again writing the JSON ([`to_json`]'s, in the layout of `statepack::formats::json`) to
/// standard output as each value is read. Memory: what the schema's expressions keep
/// (`statepack_codegen::interp::stream`), not a tree of the file nor its JSON text. `ext`:
/// the opaque types given ([`opaque_types`]).
pub fn decode_json(
    schema: &statepack_codegen::typed::Checked,
    bytes: &[u8],
    file: &Path,
    errors: interp::InstanceErrors,
    ext: &interp::Extensions,
) -> Result<()> {
    let root = stream(schema, bytes, file, &mut interp::Check(errors), ext)?;
    if let Some(note) = trailing_note(&root, bytes.len()) {
        eprintln!("note: {note}");
    }
    drop(root);
    to_stdout(|out| {
        let mut json = sinks::Json::new(out, schema, errors);
        stream(schema, bytes, file, &mut json, ext)?;
        json.finish()?;
        Ok(())
    })
}

/// `inspect --schema`: the header line, the tree ([`print`]'s lines) and the note on bytes
/// no field reads, printed as the file is read (twice: once for the byte range of each
/// line of a user type or list, once to print). Nothing is printed for a file that does
/// not read. `max_items`: elements shown per list and bytes per byte array (0: all);
/// `errors`: what an instance that fails to read does (its error line in place, or fail);
/// `ext`: the opaque types given ([`opaque_types`]).
pub fn inspect(
    schema: &statepack_codegen::typed::Checked,
    bytes: &[u8],
    file: &Path,
    header: &str,
    (max_items, errors): (usize, interp::InstanceErrors),
    ext: &interp::Extensions,
) -> Result<()> {
    let mut first = sinks::Inspect::<io::Sink>::recording(max_items, errors);
    let root = stream(schema, bytes, file, &mut first, ext)?;
    let note = trailing_note(&root, bytes.len());
    drop(root);
    to_stdout(|out| {
        writeln!(out, "{header}")?;
        let mut tree = first.printing(&mut *out);
        stream(schema, bytes, file, &mut tree, ext)?;
        drop(tree);
        if let Some(note) = note {
            writeln!(out, "{note}")?;
        }
        Ok(())
    })
}

/// A value as JSON: structs as objects of their `seq` fields (positional instances among
/// them) followed by their value instances, as Kaitai Struct's tools show a type (params
/// are inputs, not shown), byte arrays as lowercase hex strings, enums by name (an
/// integer the enum does not list as `{"Unlisted": n}`), floats that JSON cannot hold as the
/// strings `"NaN"`, `"inf"`, `"-inf"` and `"nan:0x<bits>"` ([`interp::nonfinite_text`]).
pub fn to_json(v: &DynValue, schema: &statepack_codegen::ir::Schema) -> Json {
    json_of(v, schema, true)
}

/// [`to_json`], with value instances (`instances`) or without them (what a writer writes).
fn json_of(v: &DynValue, schema: &statepack_codegen::ir::Schema, instances: bool) -> Json {
    match v {
        DynValue::Null => Json::Null,
        DynValue::Bool(b) => Json::Bool(*b),
        DynValue::Int(i) => int_json(*i),
        DynValue::Float(f) if f.is_finite() => serde_json::Number::from_f64(*f)
            .map(Json::Number)
            .unwrap_or(Json::Null),
        DynValue::Float(f) => Json::String(interp::nonfinite_text(*f).unwrap_or_default()),
        DynValue::Str(s) => Json::String(s.clone()),
        DynValue::Bytes(b) => Json::String(hex(b)),
        DynValue::Enum(e) => match e.name {
            Some(n) => Json::String(n.to_owned()),
            // As the built-in formats' JSON writes an integer the enum does not list.
            None => {
                let mut m = Map::new();
                m.insert("Unlisted".to_owned(), int_json(e.value));
                Json::Object(m)
            }
        },
        DynValue::List(items) => Json::Array(
            items
                .iter()
                .map(|x| json_of(x, schema, instances))
                .collect(),
        ),
        DynValue::Struct(s) => struct_json_of(s, schema, instances),
        // A stream (an `io` param or instance): its position and size.
        DynValue::Io { pos, size } => {
            let mut m = Map::new();
            m.insert("pos".to_owned(), int_json(*pos));
            m.insert("size".to_owned(), int_json(*size));
            Json::Object(m)
        }
    }
}

fn int_json(i: i128) -> Json {
    if let Ok(v) = i64::try_from(i) {
        Json::from(v)
    } else if let Ok(v) = u64::try_from(i) {
        Json::from(v)
    } else {
        Json::String(i.to_string())
    }
}

fn struct_json_of(s: &DynStruct, schema: &statepack_codegen::ir::Schema, instances: bool) -> Json {
    let shown = shown_members(s, schema, instances);
    let mut m = Map::new();
    for (k, v) in &s.members {
        if shown.contains(k) {
            m.insert((*k).to_owned(), json_of(v, schema, instances));
        }
    }
    Json::Object(m)
}

/// The members of `s` that `decode --schema` shows: its `seq` fields (positional instances
/// among them) and, with `instances`, its value instances.
fn shown_members<'s>(
    s: &DynStruct,
    schema: &'s statepack_codegen::ir::Schema,
    instances: bool,
) -> Vec<&'s str> {
    // Nested types of different parents may share a schema name (`a::foo`, `b::foo`): the
    // type is the one of that name whose members the value has most of.
    let has = |t: &&statepack_codegen::ir::TypeDef| {
        let names = t.fields.iter().map(|f| f.id.as_str());
        let names = names.chain(t.instances.iter().map(|i| i.id.as_str()));
        names.filter(|n| s.get(n).is_some()).count()
    };
    let same_name = schema.types.iter().filter(|t| t.schema_name == s.type_name);
    let mut best: Option<(&statepack_codegen::ir::TypeDef, usize)> = None;
    for t in same_name {
        let n = has(&t);
        if best.is_none_or(|(_, m)| n > m) {
            best = Some((t, n));
        }
    }
    best.map(|(t, _)| t)
        .map(|t| {
            let fields = t.fields.iter().map(|f| f.id.as_str());
            let values = t.instances.iter().filter(|_| instances);
            fields.chain(values.map(|i| i.id.as_str())).collect()
        })
        // A type the schema does not define (an opaque type, read by its own schema or
        // Rust type): every member it has.
        .unwrap_or_else(|| s.members.iter().map(|(k, _)| *k).collect())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A user type's members as a tree: each member with its byte range and size (fields read
/// in a stream of their own, after `process` or inside a terminated field, count from that
/// stream's start), leaves with their value; at most `max` elements of a list and `max`
/// bytes of a byte array are shown, as for the built-in formats. `inspect --schema` prints
/// what it reads as it reads it ([`sinks::Inspect`]); this prints the values it is handed
/// whole (value instances and params, which may be user types and lists).
fn print_struct(out: &mut impl Write, s: &DynStruct, depth: usize, max: usize) -> io::Result<()> {
    for (i, (name, v)) in s.members.iter().enumerate() {
        let span = s.spans.get(i).copied().flatten();
        let elems = s.elem_spans.get(i).map(Vec::as_slice).unwrap_or(&[]);
        let bits = s.bit_spans_of(i);
        match bits.iter().find(|b| b.element.is_none()) {
            Some(b) => bit_line(out, name, v, (b.start, b.end), depth, max)?,
            None => print_member(out, name, v, span, elems, bits, depth, max)?,
        }
    }
    Ok(())
}

/// A bit field's line, as `inspect` shows the built-in formats' bit fields
/// ([`crate::tree::bit_line`]).
fn bit_line(
    out: &mut impl Write,
    name: &str,
    v: &DynValue,
    bits: (u64, u64),
    depth: usize,
    max: usize,
) -> io::Result<()> {
    crate::tree::bit_line(out, bits, depth, name, &format!(" = {}", leaf_text(v, max)))
}

#[allow(clippy::too_many_arguments)]
fn print_member(
    out: &mut impl Write,
    name: &str,
    v: &DynValue,
    span: Option<(u64, u64)>,
    elems: &[(u64, u64)],
    bits: &[BitSpan],
    depth: usize,
    max: usize,
) -> io::Result<()> {
    let indent = "  ".repeat(depth);
    let range = match span {
        Some((a, b)) => format!("{a:>8}..{b:<8} {:>6} B", b.saturating_sub(a)),
        None => format!("{:>26}", "(not stored)"),
    };
    match v {
        DynValue::Struct(s) => {
            writeln!(out, "{range}  {indent}{name}: {}", s.type_name)?;
            print_struct(out, s, depth + 1, max)
        }
        DynValue::List(items) => {
            writeln!(out, "{range}  {indent}{name}: {} element(s)", items.len())?;
            for (i, x) in items.iter().take(max).enumerate() {
                let span = elems.get(i).copied();
                let name = format!("[{i}]");
                let at = bits.binary_search_by_key(&Some(i), |b| b.element);
                match at.ok().map(|k| &bits[k]) {
                    Some(b) => bit_line(out, &name, x, (b.start, b.end), depth + 1, max)?,
                    None => print_member(out, &name, x, span, &[], &[], depth + 1, max)?,
                }
            }
            if items.len() > max {
                writeln!(out, "{:>26}  {indent}  ... {} more", "", items.len() - max)?;
            }
            Ok(())
        }
        leaf => writeln!(out, "{range}  {indent}{name} = {}", leaf_text(leaf, max)),
    }
}

fn leaf_text(v: &DynValue, max: usize) -> String {
    match v {
        DynValue::Null => "null".into(),
        DynValue::Bool(b) => b.to_string(),
        DynValue::Int(i) => i.to_string(),
        DynValue::Float(f) => format!("{f:?}"),
        DynValue::Str(s) => format!("{s:?}"),
        DynValue::Bytes(b) => {
            let shown = max;
            let head: Vec<String> = b.iter().take(shown).map(|x| format!("{x:02x}")).collect();
            if b.len() > shown {
                format!(
                    "[{} ... {} more] ({} bytes)",
                    head.join(" "),
                    b.len() - shown,
                    b.len()
                )
            } else {
                format!("[{}] ({} bytes)", head.join(" "), b.len())
            }
        }
        DynValue::Enum(e) => match e.name {
            Some(n) => format!("{}::{n} ({})", e.enum_name, e.value),
            None => format!("{} (not listed in {})", e.value, e.enum_name),
        },
        DynValue::Io { pos, size } => format!("io (pos {pos}, size {size})"),
        DynValue::List(_) | DynValue::Struct(_) => String::new(),
    }
}

/// Reads `encode --schema`'s JSON text into the value to write (see [`given::parse`]).
/// Errors: serde_json's, with line and column.
pub fn parse_given(text: &str) -> Result<interp::Given> {
    Ok(given::parse(text)?)
}

/// Writes the value (JSON as `decode --schema` prints it) with the schema, then reads the
/// bytes back and refuses them unless they give the same fields and the value instances
/// given are the ones computed, with the opaque types of `ext` ([`opaque_types`]). Errors:
/// the writer's message naming the field path, or the first field that reads back
/// differently.
pub fn encode(
    schema: &statepack_codegen::typed::Checked,
    value: &interp::Given,
    ext: &interp::Extensions,
) -> Result<Vec<u8>> {
    let (bytes, written) =
        interp::encode_with(schema, value, ext).map_err(|m| anyhow::anyhow!("{m}"))?;
    let back = interp::decode_with(schema, &bytes, ext)
        .map_err(|e| anyhow::anyhow!("the bytes written do not read back: {e}"))?;
    let (written, back) = (
        DynValue::Struct(std::sync::Arc::new(written)),
        DynValue::Struct(std::sync::Arc::new(back)),
    );
    if let Some(diff) = given::first_difference(&written, &back, schema, "") {
        bail!("the bytes written read back to a different value at {diff} (a length, count or size that does not match the data it describes?)");
    }
    drop(written);
    given::check_instances(value, &back, schema, "")?;
    Ok(bytes)
}

/// A note when bytes follow everything the schema read: the root type's `seq` and every
/// positional instance (Kaitai Struct allows such bytes, as `reflect_decode` does).
pub fn trailing_note(root: &DynStruct, len: usize) -> Option<String> {
    let end = root.read_extent();
    (end < len as u64).then(|| {
        format!(
            "{} byte(s) after byte {end} are read by no field or instance of the schema (Kaitai Struct allows them)",
            len as u64 - end
        )
    })
}
