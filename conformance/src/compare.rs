//! Compares an assert's `actual` value with its `expected` value the way Kaitai Struct's
//! test translators do. Both sides are typed over the schema's root type by the check
//! stage's typer ([`statepack_codegen::typed::type_assert`]) and evaluated by the
//! generator's one evaluator ([`statepack_codegen::sem::eval_tree`]): `actual` over the
//! decoded value ([`ReflectEnv::new`]), `expected` without one ([`ReflectEnv::constants`]);
//! this module adds only the comparison rules of an assert.
//!
//! Comparison rules ([`check`]): when either side is a float, numbers agree within an
//! absolute [`FLOAT_TOLERANCE`] (Kaitai's Python and Java spec translators compare floats to
//! six decimal places); integers, strings, booleans and byte arrays must be identical; a byte
//! array and a list of integers compare element by element; enum values compare by enum and
//! integer (the literal `schema::animal::cat` is typed as the schema's enum `animal`; a value
//! the enum does not list equals its integer, as in Kaitai, and a listed one never does);
//! `expected: null` holds for an absent value; lists compare element-wise with the same
//! rules.

use statepack_codegen::ir::Schema;
use statepack_codegen::sem::{self, RefHandle, ReflectEnv, Val};
use statepack_runtime::reflect::{EnumValue, Reflect};
use std::path::Path;

/// The absolute difference within which two numbers compare equal when either is a float.
pub const FLOAT_TOLERANCE: f64 = 1e-6;

/// A value of an assert: the evaluator's value over a decoded root borrowed for `'a`.
pub type Ev<'a> = Val<RefHandle<'a>>;

/// Parses and types `text` over `schema`'s root type. Errors: the parser's or the typer's
/// message.
fn typed(schema: &Schema, text: &str) -> Result<statepack_codegen::typed::TExpr, String> {
    let e = statepack_codegen::expr::parse(text).map_err(|e| format!("does not parse: {e}"))?;
    statepack_codegen::typed::type_assert(schema, &e)
}

/// Evaluates `text` (an assert's `actual` side) over `root`, a decoded value of `schema`'s
/// root type. Errors: a message naming what could not be typed or evaluated.
pub fn eval_over<'a>(
    schema: &'a Schema,
    root: &'a dyn Reflect,
    text: &str,
) -> Result<Ev<'a>, String> {
    let e = typed(schema, text)?;
    sem::eval_tree(&e, &ReflectEnv::new(root, schema)).map(|v| v.into_owned())
}

/// Evaluates `text` (an assert's `expected` side), which needs no decoded value; `null`
/// is the absent value. Errors: a message naming what could not be typed or evaluated (a
/// name, for one).
pub fn eval_const<'a>(schema: &'a Schema, text: &str) -> Result<Ev<'a>, String> {
    if text.trim() == "null" {
        return Ok(Val::Null);
    }
    let e = typed(schema, text)?;
    sem::eval_tree(&e, &ReflectEnv::constants(schema)).map(|v| v.into_owned())
}

/// The schema a kst's asserts are typed over: `formats/<id>.ksy` of the suite at `suite`,
/// its imports found as the CLI finds them (`formats/ks_path` besides the schema's folder),
/// with the types and enums of the suite schemas that stand for its opaque types
/// (`hello_world` is `formats/hello_world.ksy`, as the suite's build maps them) appended.
/// Errors: the schema does not load or pass the check stage (the first message).
pub fn assert_schema(suite: &Path, id: &str) -> Result<Schema, String> {
    let load = |name: &str| -> Result<Schema, String> {
        let path = suite.join("formats").join(format!("{name}.ksy"));
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        statepack_codegen::load_checked(
            &text,
            &format!("{name}.ksy"),
            &path,
            &[suite.join("formats").join("ks_path")],
        )
        .map(|c| c.schema)
        .map_err(|d| d.first().map(|d| d.message.clone()).unwrap_or_default())
    };
    let mut schema = load(id)?;
    for name in schema.opaque.clone() {
        if let Ok(other) = load(&name) {
            schema.absorb(other);
        }
    }
    Ok(schema)
}

fn num(v: &Ev<'_>) -> Option<f64> {
    match v {
        Val::Int(i) => Some(*i as f64),
        Val::Float(f) => Some(*f),
        _ => None,
    }
}

/// Whether two values are equal under an assert's rules; floats within `tol` (absolute).
/// Errors: values that Kaitai does not compare (a user type with a number, a listed enum
/// value with an integer).
fn equal(l: &Ev<'_>, r: &Ev<'_>, tol: f64) -> Result<bool, String> {
    Ok(match (l, r) {
        (Val::Null, Val::Null) => true,
        (Val::Null, _) | (_, Val::Null) => false,
        (Val::Int(a), Val::Int(b)) => a == b,
        (Val::Float(_), Val::Int(_) | Val::Float(_)) | (Val::Int(_), Val::Float(_)) => {
            let (a, b) = (num(l).unwrap_or(f64::NAN), num(r).unwrap_or(f64::NAN));
            a == b || (a - b).abs() <= tol
        }
        (Val::List(a), Val::List(b)) => {
            if a.len() != b.len() {
                return Ok(false);
            }
            for (x, y) in a.iter().zip(b) {
                if !equal(x, y, tol)? {
                    return Ok(false);
                }
            }
            true
        }
        (Val::Enum(a), Val::Enum(b)) => a.enum_name == b.enum_name && a.value == b.value,
        // A value the enum does not list stays a plain integer in Kaitai's readers.
        (Val::Enum(a @ EnumValue { name: None, .. }), Val::Int(i))
        | (Val::Int(i), Val::Enum(a @ EnumValue { name: None, .. })) => a.value == *i,
        (Val::Enum(_), Val::Int(_)) | (Val::Int(_), Val::Enum(_)) => {
            return Err(format!("cannot compare {} with {}", l.kind(), r.kind()))
        }
        // Everything else as the expression language compares it.
        (l, r) => sem::equal(l, r)?,
    })
}

/// Checks an assert: `Ok(())` when `actual` equals `expected` under the rules in the module
/// docs, else a message showing both values.
pub fn check(actual: &Ev<'_>, expected: &Ev<'_>) -> Result<(), String> {
    match equal(actual, expected, FLOAT_TOLERANCE) {
        Ok(true) => Ok(()),
        Ok(false) => Err(format!("got {actual}, expected {expected}")),
        Err(e) => Err(format!("{e} (got {actual}, expected {expected})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use statepack_runtime::reflect::{ToValue, Value};
    use std::rc::Rc;

    /// The schema of [`Root`], which the asserts are typed over.
    const SCHEMA: &str = "
meta:
  id: root_t
  endian: le
seq:
  - id: id
    type: u1
  - id: name
    type: strz
    encoding: UTF-8
  - id: blob
    size: 4
  - id: pet
    type: u1
    enum: animal
  - id: ratio
    type: f4
  - id: kids
    type: kid
    repeat: expr
    repeat-expr: 3
  - id: extra
    type: u1
    if: id == 0
types:
  kid:
    seq:
      - id: n
        type: s2
    instances:
      twin:
        pos: 0
        type: kid
        if: n != 0
enums:
  animal:
    4: cat
    7: chicken
  bird:
    7: chicken
";

    fn schema() -> Schema {
        statepack_codegen::load_checked(SCHEMA, "root_t.ksy", Path::new("root_t.ksy"), &[])
            .unwrap()
            .schema
    }

    /// A hand-written reflected type standing in for generated code:
    /// `{ id: u1, name: str, blob: bytes, pet: enum animal, ratio: f4, kids: kid[], extra: if false }`.
    #[derive(Debug)]
    struct Root {
        id: u8,
        name: String,
        blob: Vec<u8>,
        pet: u8,
        ratio: f32,
        kids: Vec<Kid>,
    }
    #[derive(Debug)]
    struct Kid {
        n: i16,
    }
    impl Reflect for Kid {
        fn schema_type(&self) -> &'static str {
            "kid"
        }
        fn member(&self, name: &str) -> Option<Value<'_>> {
            match name {
                "n" => Some(self.n.to_value()),
                // A computed member: a user type made on demand.
                "twin" => Some(Value::Owned(Rc::new(Kid { n: self.n * 2 }))),
                _ => None,
            }
        }
        fn member_names(&self) -> &'static [&'static str] {
            &["n", "twin"]
        }
    }
    impl Reflect for Root {
        fn schema_type(&self) -> &'static str {
            "root_t"
        }
        fn member(&self, name: &str) -> Option<Value<'_>> {
            Some(match name {
                "id" => self.id.to_value(),
                "name" => self.name.to_value(),
                "blob" => self.blob.to_value(),
                "pet" => Value::Enum(EnumValue {
                    enum_name: "animal",
                    name: match self.pet {
                        4 => Some("cat"),
                        7 => Some("chicken"),
                        _ => None,
                    },
                    value: self.pet as i128,
                }),
                "ratio" => self.ratio.to_value(),
                "kids" => Value::list_of(&self.kids),
                "extra" => Value::Null,
                _ => return None,
            })
        }
        fn member_names(&self) -> &'static [&'static str] {
            &["id", "name", "blob", "pet", "ratio", "kids", "extra"]
        }
    }

    fn sample() -> Root {
        Root {
            id: 0x42,
            name: "foo|bar".into(),
            blob: vec![0x50, 0x41, 0x43, 0x4b],
            pet: 7,
            ratio: 1.2345,
            kids: vec![Kid { n: -3 }, Kid { n: 5 }, Kid { n: 9 }],
        }
    }

    /// Evaluates `actual` over the sample and checks it against `expected`.
    fn assert_kst(actual: &str, expected: &str) -> Result<(), String> {
        let (root, schema) = (sample(), schema());
        let a = eval_over(&schema, &root, actual)?;
        let x = eval_const(&schema, expected)?;
        check(&a, &x)
    }

    #[test]
    fn members_indexing_and_methods() {
        assert_kst("id", "0x42").unwrap();
        assert_kst("id", "66").unwrap();
        assert_kst("name", "\"foo|bar\"").unwrap();
        assert_kst("name.length", "7").unwrap();
        assert_kst("name.reverse", "'rab|oof'").unwrap();
        assert_kst("name.substring(1, 3)", "'oo'").unwrap();
        assert_kst("blob", "[0x50, 0x41, 0x43, 0x4b]").unwrap();
        assert_kst("blob.size", "4").unwrap();
        assert_kst("blob[1]", "0x41").unwrap();
        assert_kst("blob.first", "0x50").unwrap();
        assert_kst("blob.last", "0x4b").unwrap();
        assert_kst("blob.min", "0x41").unwrap();
        assert_kst("blob.max", "0x50").unwrap();
        assert_kst("kids.size", "3").unwrap();
        assert_kst("kids[1].n", "5").unwrap();
        assert_kst("kids.last.n", "9").unwrap();
        assert_kst("kids[0].twin.twin.n", "-12").unwrap();
        assert_kst("kids[2].as<root_t::kid>.n", "9").unwrap();
        assert_kst("_root.kids[0].n", "-3").unwrap();
        let err = assert_kst("kids[0]._root", "null").unwrap_err();
        assert!(err.contains("has no field or instance `_root`"), "{err}");
        assert_kst("id.to_s", "'66'").unwrap();
        assert_kst("pet.to_i", "7").unwrap();
        assert_kst("extra", "null").unwrap();
    }

    #[test]
    fn enums_compare_by_enum_and_value() {
        assert_kst("pet", "root_t::animal::chicken").unwrap();
        assert_kst("pet", "animal::chicken").unwrap();
        assert!(assert_kst("pet", "root_t::animal::cat").is_err());
        assert!(
            assert_kst("pet", "root_t::bird::chicken").is_err(),
            "the same integer of another enum"
        );
        assert!(assert_kst("pet", "root_t::fish::chicken").is_err());
        assert!(
            assert_kst("pet", "7").is_err(),
            "a listed enum value never equals a bare integer"
        );
        let unlisted: Ev<'_> = Val::Enum(EnumValue {
            enum_name: "animal",
            name: None,
            value: 111,
        });
        check(&unlisted, &Val::Int(111)).unwrap();
        assert!(check(&unlisted, &Val::Int(112)).is_err());
    }

    #[test]
    fn floats_within_tolerance_ints_exact() {
        assert_kst("ratio", "1.2345").unwrap();
        assert_kst("ratio", "1.2345003").unwrap();
        assert!(assert_kst("ratio", "1.2346").is_err());
        assert_kst("ratio.to_i", "1").unwrap();
        assert!(assert_kst("id", "67").is_err());
        assert!(assert_kst("blob", "[0x50, 0x41, 0x43]").is_err());
        assert!(assert_kst("name", "'foo|baR'").is_err());
        assert!(assert_kst("extra", "0").is_err());
    }

    #[test]
    fn arithmetic_follows_kaitai() {
        assert_kst("-52947 / 13", "-4073").unwrap();
        assert_kst("52947 / 13", "4072").unwrap();
        assert_kst("-7 % 3", "2").unwrap();
        assert_kst("7 % -3", "-2").unwrap();
        assert_kst("1 + 4 + 2 * 2", "9").unwrap();
        assert_kst("(1 << 4) | 0b11", "19").unwrap();
        assert_kst("id == 0x42 and not (id > 0x42)", "true").unwrap();
        assert_kst("name + '!'", "'foo|bar!'").unwrap();
        assert_kst("id < 3 ? 'small' : 'big'", "'big'").unwrap();
        assert_kst("blob < [0x51]", "true").unwrap();
        assert_kst("1 / 2.0", "0.5").unwrap();
        assert!(assert_kst("1 / 0", "0").is_err());
    }

    #[test]
    fn byte_arrays_lists_and_casts() {
        assert_kst("[0 + 1, 2, 3]", "[1, 2, 3]").unwrap();
        assert_kst("[0x10, 0x20].as<bytes>", "[0x10, 0x20]").unwrap();
        assert_kst("blob.size - 4", "0").unwrap();
        assert_kst("blob.size - 4", "[].as<bytes>.size").unwrap();
        assert_kst("kids[0].n.as<u1>", "-3").unwrap();
        assert_kst("0.5.as<f4>", "0.5").unwrap();
        assert!(
            assert_kst("kids[0].as<root_t::other>.n", "-3").is_err(),
            "a cast checks the type"
        );
    }

    #[test]
    fn unknown_names_say_what_exists() {
        let err = assert_kst("kids[0].nope", "1").unwrap_err();
        assert!(
            err.contains("`kid` has no field or instance `nope`"),
            "{err}"
        );
        let err = assert_kst("kids[3].n", "1").unwrap_err();
        assert!(
            err.contains("index 3 is outside a list of 3 element(s)"),
            "{err}"
        );
        assert!(eval_const(&schema(), "foo").is_err());
    }
}
