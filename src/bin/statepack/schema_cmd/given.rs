//! `encode --schema`'s input: the JSON text read straight into the interpreter's
//! [`Given`] tree (no `serde_json::Value` of the whole document beside it), and the checks
//! of what the bytes written read back to against what was written and given.

use super::{shown_members, to_json};
use anyhow::{bail, Result};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value as Json;
use statepack_codegen::interp::{DynStruct, DynValue, Given};
use statepack_codegen::ir::Schema;
use std::fmt;

/// Reads JSON text into a [`Given`]: numbers that are integers (of `i64` or `u64`) as
/// `Int`, other numbers as `Float`, objects with their keys sorted and a repeated key's last
/// value kept (as `serde_json::Value` reads them). Errors: serde_json's, with line and
/// column.
pub fn parse(text: &str) -> serde_json::Result<Given> {
    serde_json::from_str::<G>(text).map(|g| g.0)
}

struct G(Given);

impl<'de> Deserialize<'de> for G {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<G, D::Error> {
        d.deserialize_any(GivenVisitor).map(G)
    }
}

struct GivenVisitor;

impl<'de> Visitor<'de> for GivenVisitor {
    type Value = Given;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Given, E> {
        Ok(Given::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Given, E> {
        Ok(Given::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Given, E> {
        Ok(Given::Int(i128::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Given, E> {
        Ok(Given::Int(i128::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Given, E> {
        Ok(Given::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Given, E> {
        Ok(Given::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Given, E> {
        Ok(Given::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Given, A::Error> {
        let mut items = Vec::new();
        while let Some(G(x)) = a.next_element()? {
            items.push(x);
        }
        Ok(Given::List(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Given, A::Error> {
        let mut entries: Vec<(String, Given)> = Vec::new();
        while let Some((k, G(v))) = a.next_entry::<String, G>()? {
            entries.push((k, v));
        }
        // Sorted by key, the last of equal keys kept (stable sort, then keep the last).
        entries.sort_by(|x, y| x.0.cmp(&y.0));
        let mut kept: Vec<(String, Given)> = Vec::with_capacity(entries.len());
        for e in entries {
            match kept.last_mut() {
                Some(last) if last.0 == e.0 => *last = e,
                _ => kept.push(e),
            }
        }
        Ok(Given::Map(kept))
    }
}

/// A given value as JSON (for messages and for comparing a value instance with its
/// computed value).
fn json_of(g: &Given) -> Json {
    match g {
        Given::Null => Json::Null,
        Given::Bool(b) => Json::Bool(*b),
        Given::Int(i) => i64::try_from(*i)
            .map(Json::from)
            .or_else(|_| u64::try_from(*i).map(Json::from))
            .unwrap_or_else(|_| Json::String(i.to_string())),
        Given::Float(f) => serde_json::Number::from_f64(*f)
            .map(Json::Number)
            .unwrap_or(Json::Null),
        Given::Str(s) => Json::String(s.clone()),
        Given::List(items) => Json::Array(items.iter().map(json_of).collect()),
        Given::Map(m) => Json::Object(m.iter().map(|(k, v)| (k.clone(), json_of(v))).collect()),
    }
}

fn join(path: &str, k: &str) -> String {
    if path.is_empty() {
        k.to_owned()
    } else {
        format!("{path}.{k}")
    }
}

/// The first `seq` field where the value written (`a`) and the value read back (`b`)
/// differ, compared as `decode --schema` prints them (value instances left out), in
/// schema order: `frames[3].x: written 5, read back 6`, `x (missing on reading back)`.
pub fn first_difference(a: &DynValue, b: &DynValue, schema: &Schema, path: &str) -> Option<String> {
    match (a, b) {
        (DynValue::Struct(x), DynValue::Struct(y)) => struct_difference(x, y, schema, path),
        (DynValue::List(x), DynValue::List(y)) => {
            if x.len() != y.len() {
                return Some(format!(
                    "{path}: written {} element(s), read back {}",
                    x.len(),
                    y.len()
                ));
            }
            x.iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (v, w))| first_difference(v, w, schema, &format!("{path}[{i}]")))
        }
        _ => {
            let (ja, jb) = (to_json(a, schema), to_json(b, schema));
            (ja != jb).then(|| format!("{path}: written {ja}, read back {jb}"))
        }
    }
}

fn struct_difference(x: &DynStruct, y: &DynStruct, schema: &Schema, path: &str) -> Option<String> {
    let (fx, fy) = (
        shown_members(x, schema, false),
        shown_members(y, schema, false),
    );
    for (k, v) in x.members.iter().filter(|(k, _)| fx.contains(k)) {
        let p = join(path, k);
        match y.get(k).filter(|_| fy.contains(k)) {
            Some(w) => {
                if let Some(d) = first_difference(v, w, schema, &p) {
                    return Some(d);
                }
            }
            None => return Some(format!("{p} (missing on reading back)")),
        }
    }
    let extra = y
        .members
        .iter()
        .any(|(k, _)| fy.contains(k) && !fx.contains(k));
    extra.then(|| format!("{path} (extra members on reading back)"))
}

/// Checks the value instances given (as `decode --schema` prints them) against those the
/// bytes written read back to: an instance is computed from the fields, so a value given for
/// it must be the one computed. Errors: the path of the first instance whose given value
/// differs, with both values.
pub fn check_instances(given: &Given, back: &DynValue, schema: &Schema, path: &str) -> Result<()> {
    match (given, back) {
        (Given::Map(m), DynValue::Struct(s)) => {
            let instances: Vec<&str> = schema
                .types
                .iter()
                .find(|t| t.schema_name == s.type_name)
                .map(|t| t.instances.iter().map(|i| i.id.as_str()).collect())
                .unwrap_or_default();
            for (k, v) in &s.members {
                let Some((_, g)) = m.iter().find(|(n, _)| n == k) else {
                    continue;
                };
                let p = join(path, k);
                // An instance `decode --schema` could not read or compute shows its error.
                if matches!(g, Given::Map(e) if e.len() == 1 && e[0].0 == "__error") {
                    continue;
                }
                if instances.contains(k) {
                    let (computed, g) = (to_json(v, schema), json_of(g));
                    if computed != g {
                        bail!("{p}: a value instance, computed from the fields as {computed}, but the JSON gives {g}");
                    }
                } else {
                    check_instances(g, v, schema, &p)?;
                }
            }
            Ok(())
        }
        (Given::List(a), DynValue::List(items)) => {
            for (i, (g, v)) in a.iter().zip(items).enumerate() {
                check_instances(g, v, schema, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}
