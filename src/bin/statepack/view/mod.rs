//! `statepack view FILE [--schema FILE.ksy]`: a local web viewer of one file.
//!
//! The server reads the file once into a structure index ([`structure::Index`]) and, for
//! the motion formats, opens the format's player ([`motion::Motion`]); the page asks for
//! what it shows (a page of children, a page of hex, one frame of motion) through small JSON
//! endpoints, so nothing sent grows with the file. Every asset of the page is in the binary.
//!
//! Safety: the server listens on 127.0.0.1 only, refuses a request whose `Host` is not that
//! address and port (a page of another site that resolves its own name to 127.0.0.1 cannot
//! read it), and serves nothing outside a path that starts with a random 128-bit token
//! printed in the address. It serves the one file it was given and nothing else of the disk.

mod motion;
mod server;
pub mod structure;

use anyhow::{Context, Result};
use clap::Args;
use statepack::formats::{self, FormatSpec};
use std::path::PathBuf;
#[cfg(feature = "schema")]
use structure::Builder;
use structure::Index;

/// `statepack view`'s arguments.
#[derive(Args, Debug)]
pub struct ViewArgs {
    /// The file.
    pub file: PathBuf,
    /// Read the file with this schema (any .ksy the generator accepts) instead of a built-in
    /// format, as `inspect --schema` reads it.
    #[arg(long)]
    pub schema: Option<PathBuf>,
    /// Port on 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Do not open a browser; only print the address.
    #[arg(long)]
    pub no_open: bool,
}

/// Everything the server answers from.
pub struct Doc {
    /// The file's name as given.
    pub file_name: String,
    /// The file's bytes (kept for the process's life: players borrow them).
    pub bytes: &'static [u8],
    /// The built-in format it was read as (`None` with `--schema`).
    pub fmt: Option<&'static FormatSpec>,
    /// What it was read as, for the page's title (`SNAP v1.3`, `schema my.ksy: my_format`).
    pub title: String,
    /// The structure index.
    pub index: Index,
    /// The motion it holds, for the formats that hold motion.
    pub motion: Option<motion::Motion>,
}

/// Reads the file, builds the index and serves the page until the process is stopped.
pub fn run(args: ViewArgs) -> Result<()> {
    let doc = load(&args)?;
    server::serve(doc, args.port, !args.no_open)
}

/// Reads and indexes the file as `args` say.
pub fn load(args: &ViewArgs) -> Result<Doc> {
    let bytes = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    let file_name = args.file.display().to_string();
    if let Some(schema) = &args.schema {
        #[cfg(not(feature = "schema"))]
        anyhow::bail!(
            "--schema {}: this build leaves out the cargo feature `schema`",
            schema.display()
        );
        #[cfg(feature = "schema")]
        {
            let sch = crate::schema_cmd::load(schema)?;
            let index = schema_index(&sch, bytes);
            return Ok(Doc {
                file_name,
                bytes,
                fmt: None,
                title: format!("schema {}: {}", schema.display(), sch.id),
                index,
                motion: None,
            });
        }
    }
    let fmt = formats::detect(bytes).with_context(|| {
        format!(
            "{}: not a file of a built-in format (give --schema FILE.ksy to read it with a schema)",
            args.file.display()
        )
    })?;
    let index = Index::of_format(fmt, bytes);
    let motion = if index.failure.is_none() {
        motion::Motion::open(fmt, bytes)
    } else {
        None
    };
    Ok(Doc {
        file_name,
        bytes,
        fmt: Some(fmt),
        title: fmt.title.to_owned(),
        index,
        motion,
    })
}

/// The index of a file read with a schema by the generator's interpreter (the reading of
/// `inspect --schema`): members with their spans, leaf values kept. A file the schema does
/// not read shows the tree read before the error ([`statepack_codegen::interp::decode_partial`]),
/// the failing field marked and shown as not read. A positional instance that fails to read
/// does not fail the file: it shows its error in its place.
#[cfg(feature = "schema")]
fn schema_index(sch: &statepack_codegen::typed::Checked, bytes: &[u8]) -> Index {
    use statepack::runtime::io::PathSeg;
    let mut b = Builder::new(&sch.id, usize::MAX, false);
    let (tree, err) = statepack_codegen::interp::decode_partial(sch, bytes);
    let end = match &tree {
        Some(root) => {
            b.keep_type(root.type_name);
            walk_struct(&mut b, root, 0);
            match &err {
                None => root.size(),
                Some(_) => root.spans.iter().flatten().map(|s| s.1).max().unwrap_or(0),
            }
        }
        None => 0,
    };
    let mut ix = b.finish(end * 8, err.as_ref());
    if let Some(e) = &err {
        let segs: Vec<PathSeg> = e.path.segments().cloned().collect();
        // The failing field is in the partial tree (the last node on the error's path);
        // an error before any field was entered stays on the root.
        if let Some(r) = (0..=segs.len()).rev().find_map(|n| ix.find(&segs[..n])) {
            ix.mark_failed(r);
        }
    }
    ix
}

#[cfg(feature = "schema")]
fn walk_struct(b: &mut Builder, s: &statepack_codegen::interp::DynStruct, parent_start: u64) {
    use statepack::runtime::io::PathSeg;
    for (i, (name, v)) in s.members.iter().enumerate() {
        let span = s.spans.get(i).copied().flatten();
        let elems = s.elem_spans.get(i).map(Vec::as_slice).unwrap_or(&[]);
        let (start, end) = span.unwrap_or((parent_start, parent_start));
        let bits = s.bit_spans_of(i);
        let (start_bit, end_bit) = bits
            .iter()
            .find(|b| b.element.is_none())
            .map_or((start * 8, end * 8), |b| (b.start, b.end));
        b.enter(&PathSeg::Field(name), start_bit);
        match s.error_of(name) {
            // A positional instance that failed on its own: its error in its place.
            Some(e) => b.keep_value("instance not read".to_owned(), e.to_string()),
            None => walk_value(b, v, start, elems, bits, span.is_none()),
        }
        b.leave(end_bit, true);
    }
}

#[cfg(feature = "schema")]
fn walk_value(
    b: &mut Builder,
    v: &statepack_codegen::interp::DynValue,
    start: u64,
    elems: &[(u64, u64)],
    bits: &[statepack_codegen::interp::BitSpan],
    not_stored: bool,
) {
    use statepack::runtime::io::PathSeg;
    use statepack_codegen::interp::DynValue;
    match v {
        DynValue::Struct(s) => {
            b.keep_type(s.type_name);
            walk_struct(b, s, start);
        }
        DynValue::List(items) => {
            b.keep_type(&format!("list of {}", items.len()));
            for (k, x) in items.iter().enumerate() {
                let (s, e) = elems.get(k).copied().unwrap_or((start, start));
                let (sb, eb) = bits
                    .binary_search_by_key(&Some(k), |b| b.element)
                    .map_or((s * 8, e * 8), |i| (bits[i].start, bits[i].end));
                b.enter(&PathSeg::Index(k), sb);
                walk_value(b, x, s, &[], &[], not_stored);
                b.leave(eb, true);
            }
        }
        leaf => {
            let (ty, text) = leaf_text(leaf);
            let ty = if not_stored {
                format!("{ty}, instance (not stored)")
            } else {
                ty.to_owned()
            };
            b.keep_value(ty, text);
        }
    }
}

#[cfg(feature = "schema")]
fn leaf_text(v: &statepack_codegen::interp::DynValue) -> (&'static str, String) {
    use statepack::runtime::io::show_bytes;
    use statepack_codegen::interp::DynValue;
    match v {
        DynValue::Null => ("null", "null".into()),
        DynValue::Bool(x) => ("bool", x.to_string()),
        DynValue::Int(i) => ("int", i.to_string()),
        DynValue::Float(f) => ("float", format!("{f:?}")),
        DynValue::Str(s) => ("str", format!("{s:?}")),
        DynValue::Bytes(bs) => {
            let shown = &bs[..bs.len().min(64)];
            let more = if bs.len() > 64 {
                format!(" ... ({} bytes)", bs.len())
            } else {
                String::new()
            };
            ("bytes", format!("{}{more}", show_bytes(shown)))
        }
        DynValue::Enum(e) => (
            "enum",
            match e.name {
                Some(n) => format!("{}::{n} ({})", e.enum_name, e.value),
                None => format!("{} (not listed in {})", e.value, e.enum_name),
            },
        ),
        DynValue::Io { pos, size } => ("io", format!("pos {pos}, size {size}")),
        DynValue::List(_) | DynValue::Struct(_) => ("", String::new()),
    }
}
