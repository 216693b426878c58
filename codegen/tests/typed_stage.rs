//! The check stage's typed expressions (`statepack_codegen::load_typed`) over the project's
//! own schemas and the generator's run schemas: every expression a field, a value instance
//! or `to-string` holds is typed on the sides that evaluate it, with the type its place
//! needs.

use statepack_codegen::ir::{FieldKind, Repeat, Size, TypeDef};
use statepack_codegen::typed::{Side, Ty, TypedSchema};
use std::path::{Path, PathBuf};

fn schemas() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
    for dir in ["schema", "codegen/tests/run"] {
        for e in std::fs::read_dir(root.join(dir)).expect("the folder exists") {
            let p = e.expect("a directory entry").path();
            if p.extension().and_then(|x| x.to_str()) == Some("ksy") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The type at `kp` of type `tn` on `side`, or a description of what is missing.
fn ty_at(t: &TypedSchema, ty: &TypeDef, kp: &str, side: Side) -> Result<Ty, String> {
    let tn = &ty.name;
    t.get(ty.id, kp, side)
        .map(|e| e.ty.clone())
        .ok_or_else(|| format!("`{tn}` {kp} is not typed on {side:?}"))
}

#[test]
fn every_field_expression_and_value_instance_is_typed_with_the_type_its_place_needs() {
    let files = schemas();
    assert!(files.len() > 10, "schemas found: {files:?}");
    let mut problems = Vec::new();
    let mut typed_total = 0usize;
    for path in &files {
        let text = std::fs::read_to_string(path).expect("readable");
        let name = path.display().to_string();
        let (schema, typed) = match statepack_codegen::load_typed(&text, &name, path, &[]) {
            Ok(x) => x,
            Err(d) => panic!("{name} is refused:\n{}", statepack_codegen::render(&d)),
        };
        typed_total += typed.exprs.len();
        for t in &schema.types {
            for f in &t.fields {
                let kp = &f.key_path;
                // Each key and the type it needs (`None`: any type).
                let mut wanted: Vec<(String, Option<Ty>)> = Vec::new();
                if f.cond.is_some() {
                    wanted.push((format!("{kp}.if"), Some(Ty::Bool)));
                }
                match (&f.repeat, f.varint) {
                    (Repeat::Expr(_), false) => {
                        wanted.push((format!("{kp}.repeat-expr"), Some(Ty::Int)))
                    }
                    (Repeat::Until(_), false) => {
                        wanted.push((format!("{kp}.repeat-until"), Some(Ty::Bool)))
                    }
                    _ => {}
                }
                match &f.kind {
                    FieldKind::Bytes(Size::Expr(_))
                    | FieldKind::Str {
                        size: Some(Size::Expr(_)),
                        ..
                    }
                    | FieldKind::User {
                        size: Some(Size::Expr(_)),
                        ..
                    } => wanted.push((format!("{kp}.size"), Some(Ty::Int))),
                    FieldKind::Switch { .. } => wanted.push((format!("{kp}.type.switch-on"), None)),
                    _ => {}
                }
                if f.at.is_some() {
                    wanted.push((format!("{kp}.pos"), Some(Ty::Int)));
                }
                for (key, want) in wanted {
                    match (ty_at(&typed, t, &key, Side::Read), want) {
                        (Ok(ty), Some(want)) if ty != want => {
                            problems.push(format!("{name}: {key} is {ty:?}, not {want:?}"))
                        }
                        (Ok(_), _) => {}
                        (Err(m), _) => problems.push(format!("{name}: {m}")),
                    }
                }
            }
            for i in &t.instances {
                let kp = format!("{}.value", i.key_path);
                if let Err(m) = ty_at(&typed, t, &kp, Side::Value) {
                    problems.push(format!("{name}: {m}"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(typed_total > 100, "only {typed_total} typed expressions");
}
