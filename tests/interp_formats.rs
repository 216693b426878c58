//! The interpreter (`statepack_codegen::interp`, behind `--schema`) against the generated
//! readers on every sample of the six built-in formats, the real RPLY files of the fixtures
//! (`flashback-rply/*.rply`) and truncations of the samples: both must read the same dynamic
//! tree, member by member, or fail at the same byte offset. The interpreter's streaming read
//! (`interp::stream`, behind `decode --schema` and `inspect --schema`) must hand over, in
//! reading order, exactly the values and spans of the interpreter's tree, or the same error.
//! Without the fixtures the fixture part prints why it skipped (it fails under `CI=true`).

use statepack::formats::FORMATS;
use statepack_codegen::interp::{DynStruct, DynValue, Label, Sink, StreamError};
use statepack_runtime::io::DecodeError;
use statepack_runtime::reflect::Reflect;
use std::path::Path;

type DecodeFn = fn(&[u8]) -> Result<Box<dyn Reflect>, DecodeError>;

/// The generated module of each schema, by its file stem.
const DECODERS: &[(&str, DecodeFn)] = &[
    ("anim_clip", statepack::generated::anim_clip::reflect_decode),
    (
        "cbtrack_v1",
        statepack::generated::cbtrack_v1::reflect_decode,
    ),
    ("rply_v3", statepack::generated::rply_v3::reflect_decode),
    ("snap_v1_3", statepack::generated::snap_v1_3::reflect_decode),
    (
        "study_tracks",
        statepack::generated::study_tracks::reflect_decode,
    ),
    (
        "world_snapshot",
        statepack::generated::world_snapshot::reflect_decode,
    ),
];

fn schema(stem: &str) -> statepack_codegen::typed::Checked {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schema")
        .join(format!("{stem}.ksy"));
    let text = std::fs::read_to_string(&path).expect("read the schema");
    let shown = format!("schema/{stem}.ksy");
    let s = statepack_codegen::load_checked(&text, &shown, &path, &[])
        .unwrap_or_else(|d| panic!("{}", statepack_codegen::render(&d)));
    assert_eq!(statepack_codegen::interp::unsupported(&s), None, "{stem}");
    s
}

/// Both readers on one file: the same tree, or both an error at the same offset.
fn agree(
    stem: &str,
    s: &statepack_codegen::typed::Checked,
    name: &str,
    bytes: &[u8],
) -> Result<(), String> {
    let decode = DECODERS
        .iter()
        .find(|(n, _)| *n == stem)
        .map(|(_, f)| *f)
        .ok_or_else(|| format!("no generated module for {stem}"))?;
    let tree = statepack_codegen::interp::decode(s, bytes);
    streams_as_the_tree(s, bytes, &tree).map_err(|d| format!("{stem} {name}: {d}"))?;
    match (decode(bytes), tree) {
        (Ok(g), Ok(i)) => statepack_codegen::interp::compare(g.as_ref(), &i)
            .map_err(|d| format!("{stem} {name}: trees differ at {d}")),
        (Err(g), Err(i)) if g.offset == i.offset => Ok(()),
        (g, i) => Err(format!(
            "{stem} {name}: generated {:?}, interpreter {:?}",
            g.err().map(|e| e.to_string()),
            i.err().map(|e| e.to_string())
        )),
    }
}

/// The events of a streaming read, one line each.
#[derive(Default)]
struct Log(Vec<String>);

impl Sink for Log {
    fn key(&mut self, label: Label) -> std::io::Result<()> {
        self.0.push(match label {
            Label::Member(n, _) => format!("key {n}"),
            Label::Element(i) => format!("key [{i}]"),
        });
        Ok(())
    }
    fn open_struct(&mut self, t: &'static str) -> std::io::Result<()> {
        self.0.push(format!("struct {t}"));
        Ok(())
    }
    fn close_struct(&mut self, span: Option<(u64, u64)>) -> std::io::Result<()> {
        self.0.push(format!("end {span:?}"));
        Ok(())
    }
    fn open_list(&mut self) -> std::io::Result<()> {
        self.0.push("list".into());
        Ok(())
    }
    fn close_list(&mut self, span: (u64, u64), count: usize) -> std::io::Result<()> {
        self.0.push(format!("end list {span:?} {count}"));
        Ok(())
    }
    fn leaf(
        &mut self,
        v: &DynValue,
        span: Option<(u64, u64)>,
        bits: Option<(u64, u64)>,
    ) -> std::io::Result<()> {
        self.0.push(format!("{v} {span:?} {bits:?}"));
        Ok(())
    }
    fn value(&mut self, v: &DynValue) -> std::io::Result<()> {
        self.0.push(format!("= {v}"));
        Ok(())
    }
}

/// The events a streaming read of `s` gives (with `fields` `seq` fields), as [`Log`] writes
/// them, from the tree `decode` read.
fn events_of(
    schema: &statepack_codegen::typed::Checked,
    s: &DynStruct,
    span: Option<(u64, u64)>,
    out: &mut Vec<String>,
) {
    out.push(format!("struct {}", s.type_name));
    let fields = schema
        .types
        .iter()
        .find(|t| t.schema_name == s.type_name)
        .map_or(0, |t| t.fields.len());
    for (i, (name, v)) in s.members.iter().enumerate() {
        out.push(format!("key {name}"));
        if i >= fields {
            out.push(format!("= {v}"));
            continue;
        }
        let span_i = s.spans[i];
        let bits = s.bit_spans_of(i);
        match v {
            DynValue::Struct(inner) => events_of(schema, inner, span_i, out),
            DynValue::List(items) => {
                out.push("list".into());
                for (j, x) in items.iter().enumerate() {
                    out.push(format!("key [{j}]"));
                    let e = s.elem_spans[i].get(j).copied();
                    match x {
                        DynValue::Struct(inner) => events_of(schema, inner, e, out),
                        leaf => {
                            let b = bits
                                .iter()
                                .find(|b| b.element == Some(j))
                                .map(|b| (b.start, b.end));
                            out.push(format!("{leaf} {e:?} {b:?}"));
                        }
                    }
                }
                let (a, b) = span_i.unwrap_or_default();
                out.push(format!("end list {:?} {}", (a, b), items.len()));
            }
            leaf => {
                let b = bits
                    .iter()
                    .find(|b| b.element.is_none())
                    .map(|b| (b.start, b.end));
                out.push(format!("{leaf} {span_i:?} {b:?}"));
            }
        }
    }
    out.push(format!("end {span:?}"));
}

/// The streaming read of `bytes` hands over the values and spans of `tree`, in order, or
/// fails with its error.
fn streams_as_the_tree(
    s: &statepack_codegen::typed::Checked,
    bytes: &[u8],
    tree: &Result<DynStruct, DecodeError>,
) -> Result<(), String> {
    let mut log = Log::default();
    let streamed = statepack_codegen::interp::stream(s, bytes, &mut log);
    match (streamed, tree) {
        (Ok(kept), Ok(t)) => {
            let mut want = Vec::new();
            events_of(s, t, None, &mut want);
            if let Some(i) = (0..want.len().max(log.0.len())).find(|&i| want.get(i) != log.0.get(i))
            {
                return Err(format!(
                    "streamed event {i} is {:?}, the tree gives {:?}",
                    log.0.get(i),
                    want.get(i)
                ));
            }
            if kept.read_extent() != t.read_extent() {
                return Err(format!(
                    "streamed extent {} vs {}",
                    kept.read_extent(),
                    t.read_extent()
                ));
            }
            Ok(())
        }
        (Err(StreamError::Decode(a)), Err(b)) if a.to_string() == b.to_string() => Ok(()),
        (a, b) => Err(format!(
            "streamed {:?}, tree {:?}",
            a.map(|_| ()).map_err(|e| e.to_string()),
            b.as_ref().map(|_| ()).map_err(|e| e.to_string())
        )),
    }
}

#[test]
fn interpreter_reads_every_sample_as_the_generated_code() {
    let mut checked = 0;
    let mut problems = Vec::new();
    for fmt in FORMATS {
        let s = schema(fmt.schema);
        let samples = (fmt.samples)();
        assert!(!samples.is_empty(), "{} has samples", fmt.name);
        for (name, bytes) in samples {
            checked += 1;
            if let Err(m) = agree(fmt.schema, &s, &name, &bytes) {
                problems.push(m);
            }
        }
    }
    eprintln!(
        "interpreter vs generated code: {checked} built-in samples, {} differ",
        problems.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn interpreter_reads_the_real_rply_files_as_the_generated_code() {
    let Some(dir) = statepack_fixtures::fixture_for_test("flashback-rply") else {
        return;
    };
    let s = schema("rply_v3");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("list the fixtures")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rply"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .rply in {}", dir.display());
    let mut problems = Vec::new();
    for p in &files {
        let bytes = std::fs::read(p).expect("read a fixture");
        if let Err(m) = agree("rply_v3", &s, &p.display().to_string(), &bytes) {
            problems.push(m);
        }
    }
    eprintln!(
        "interpreter vs generated code: {} fixture .rply files, {} differ",
        files.len(),
        problems.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Truncations of every sample: both readers fail at the same byte, or read the same prefix.
#[test]
fn interpreter_fails_where_the_generated_code_fails() {
    let mut problems = Vec::new();
    for fmt in FORMATS {
        let s = schema(fmt.schema);
        for (name, bytes) in (fmt.samples)().into_iter().take(3) {
            let step = (bytes.len() / 24).max(1);
            for cut in (0..bytes.len()).step_by(step) {
                if let Err(m) = agree(fmt.schema, &s, &format!("{name}[..{cut}]"), &bytes[..cut]) {
                    problems.push(m);
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A dynamic value as the interpreter's writer takes it (what `decode --schema` prints:
/// each member that `shown` keeps, by type and member name; a NaN by its bits).
fn given_of(v: &DynValue, shown: &dyn Fn(&str, &str) -> bool) -> statepack_codegen::interp::Given {
    use statepack_codegen::interp::Given;
    match v {
        DynValue::Null => Given::Null,
        DynValue::Bool(b) => Given::Bool(*b),
        DynValue::Int(i) => Given::Int(*i),
        DynValue::Float(f) if f.is_nan() => {
            Given::Str(statepack_codegen::interp::nonfinite_text(*f).unwrap_or_default())
        }
        DynValue::Float(f) => Given::Float(*f),
        DynValue::Str(s) => Given::Str(s.clone()),
        DynValue::Bytes(b) => Given::Str(b.iter().map(|x| format!("{x:02x}")).collect()),
        DynValue::Enum(e) => Given::Int(e.value),
        DynValue::List(l) => Given::List(l.iter().map(|x| given_of(x, shown)).collect()),
        // A stream, as `decode --schema` prints it.
        DynValue::Io { pos, size } => Given::Map(vec![
            ("pos".to_owned(), Given::Int(*pos)),
            ("size".to_owned(), Given::Int(*size)),
        ]),
        DynValue::Struct(s) => Given::Map(
            s.members
                .iter()
                .filter(|(k, _)| shown(s.type_name, k))
                .map(|(k, v)| ((*k).to_owned(), given_of(v, shown)))
                .collect(),
        ),
    }
}

/// Every chunk of the CBTK samples, read and written back by the interpreter with the
/// schema's `chunk_body` (whose columns the writer places: `-sp-align`, `-sp-end-zeros`),
/// gives the chunk's own bytes, which are what the generated writer writes.
#[test]
fn interpreter_writes_cbtk_chunks_as_the_generated_writer() {
    use statepack::formats::cbtrack::Track;
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/cbtrack_v1.ksy"),
    )
    .unwrap();
    let types =
        &text[text.find("\n  chunk_body:").unwrap()..text.find("\n-sp-column-sets:").unwrap()];
    let chunk_schema = format!(
        "meta:\n  id: chunk_only\n  endian: le\nseq:\n  - id: body\n    size-eos: true\n    type: chunk_body\ntypes:{types}\n"
    );
    let s = statepack_codegen::load_checked(&chunk_schema, "chunk_only.ksy", Path::new("."), &[])
        .unwrap_or_else(|d| panic!("{}", statepack_codegen::render(&d)));
    let mut chunks = 0;
    for (name, bytes) in
        <statepack::formats::cbtrack::CbtrackV1 as statepack::formats::Format>::samples()
    {
        let t = Track::open(&bytes).unwrap();
        let mut all = vec![t.info_bytes().unwrap(), t.features_bytes().unwrap()];
        all.extend((0..t.num_windows()).map(|k| t.main_bytes(k).unwrap()));
        for chunk in all {
            let tree = statepack_codegen::interp::decode(&s, &chunk)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let (written, _) = statepack_codegen::interp::encode(
                &s,
                &given_of(&DynValue::Struct(std::sync::Arc::new(tree)), &|_, _| true),
            )
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                written == chunk,
                "{name}: the interpreter wrote other bytes"
            );
            chunks += 1;
        }
    }
    eprintln!("{chunks} CBTK chunks written back by the interpreter");
    assert!(chunks >= 8, "{chunks} chunks");
}

/// Every sample of the six built-in formats, and every fixture `.rply` file the reference
/// player reads, read by the interpreter and written back by it from its value as `decode
/// --schema` prints it (params left out, NaNs by their bits, each `zlib` chunk at the level
/// that made it): the same bytes, as the generated writer gives them back.
#[test]
fn interpreter_writes_every_sample_and_fixture_back_byte_for_byte() {
    let write_back = |s: &statepack_codegen::typed::Checked, name: &str, bytes: &[u8]| {
        let tree =
            statepack_codegen::interp::decode(s, bytes).map_err(|e| format!("{name}: {e}"))?;
        let shown = |t: &str, k: &str| {
            s.types.iter().filter(|d| d.schema_name == t).any(|d| {
                d.fields.iter().any(|f| f.id == k) || d.instances.iter().any(|i| i.id == k)
            })
        };
        let g = given_of(&DynValue::Struct(std::sync::Arc::new(tree)), &shown);
        let (written, _) =
            statepack_codegen::interp::encode(s, &g).map_err(|e| format!("{name}: {e}"))?;
        match written == bytes {
            true => Ok(()),
            false => Err(format!("{name}: the interpreter wrote other bytes")),
        }
    };
    let mut problems = Vec::new();
    let mut files = 0;
    for fmt in FORMATS {
        let s = schema(fmt.schema);
        for (name, bytes) in (fmt.samples)() {
            files += 1;
            problems.extend(write_back(&s, &name, &bytes).err());
        }
    }
    if let Some(dir) = statepack_fixtures::fixture_for_test("flashback-rply") {
        let s = schema("rply_v3");
        for e in std::fs::read_dir(&dir).expect("list the fixtures") {
            let p = e.expect("a fixture").path();
            let bytes = std::fs::read(&p).expect("read a fixture");
            // The files the reference writes but its own player cannot read are refused.
            if p.extension().is_some_and(|x| x == "rply")
                && statepack_codegen::interp::decode(&s, &bytes).is_ok()
            {
                files += 1;
                problems.extend(write_back(&s, &p.display().to_string(), &bytes).err());
            }
        }
    }
    eprintln!(
        "{files} files written back by the interpreter, {} differ",
        problems.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
