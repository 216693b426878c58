//! Resolves names after loading: gives nested types and enums unique names and their ids
//! ([`TypeId`], [`EnumId`]: their indices in the schema), turns every type and enum
//! reference of the IR (field `type`, switch cases and their arguments, `enum`, params)
//! into the id of what it means under Kaitai Struct's scoping rules, and rewrites the names
//! in expressions (`enum::value`, `.as<t>`, `sizeof<t>`) to unique names, which the check
//! stage's typer turns into ids.
//!
//! Scoping: a name used inside type `T` is looked up among the types (or enums) nested in
//! `T`, then in `T`'s enclosing type, and so on out to the top level (the root type's
//! `types` and `enums`). A path `a::b` looks up `a` that way, then `b` inside `a`. The root
//! type can be named by its `meta.id`. A name that resolves to nothing is left as written
//! ([`TypeRef::Named`]): an opaque type, or an unknown name the checks report.

use crate::expr::Expr;
use crate::ir::*;
use crate::names::camel;
use std::collections::{HashMap, HashSet};

/// `base`, or `base_2`, `base_3` … : the first whose CamelCase name is not in `used`, which
/// then takes it.
fn free_name(base: String, used: &mut HashSet<String>) -> String {
    let mut name = base.clone();
    let mut n = 2;
    while used.contains(&camel(&name)) {
        name = format!("{base}_{n}");
        n += 1;
    }
    used.insert(camel(&name));
    name
}

/// Gives nested definitions unique names and resolves every reference in `s`.
pub(crate) fn resolve(s: &mut Schema) {
    // Rust names: the root keeps its own, unless the generated code reserves it (`default`
    // → `DefaultType`); a top-level type or enum whose CamelCase name is
    // taken (by the root, an earlier top-level type, any top-level type for an enum, an
    // earlier enum, or a name the generated code reserves) gets `_type` or `_enum`, then
    // `_2`, `_3` … (`vec3` then `vec_3` → `Vec3`, `Vec3Type`; type and enum `frame` →
    // `Frame`, `FrameEnum`; a type named like the root `header` → `HeaderType`). Then nested
    // types and enums take their paths, switch fields' case enums `<type>_<field>` (else
    // `_switch`, `_2` …) and column sets `<set>_columns` (else `_2` …). Only the same path
    // defined twice (an imported schema whose `meta.id` is a top-level type here) keeps one
    // name, for the check stage to report.
    let mut used: HashSet<String> = crate::names::RESERVED_ITEMS
        .iter()
        .map(|n| n.to_string())
        .collect();
    let mut owner: HashMap<String, String> = HashMap::new();
    // The root is not the owner of its name: a top-level type named like it is another
    // definition (`type: header` inside the root names that type, not the root).
    if let Some(root) = s.types.first_mut() {
        if !used.insert(camel(&root.name)) {
            root.name = free_name(format!("{}_type", root.name), &mut used);
        }
    }
    let distinct = |name: &str,
                    suffix: &str,
                    used: &mut HashSet<String>,
                    owner: &mut HashMap<String, String>|
     -> String {
        let c = camel(name);
        if !used.contains(&c) || owner.get(&c).is_some_and(|o| o == name) {
            used.insert(c.clone());
            owner.insert(c, name.to_owned());
            return name.to_owned();
        }
        let cand = free_name(format!("{name}_{suffix}"), used);
        owner.insert(camel(&cand), cand.clone());
        cand
    };
    for t in s.types.iter_mut().skip(1).filter(|t| t.scope.len() == 1) {
        t.name = distinct(&t.name, "type", &mut used, &mut owner);
    }
    // Every top-level type is placed before an enum takes a name.
    for e in s.enums.iter_mut().filter(|e| e.scope.is_empty()) {
        let c = camel(&e.name);
        e.name = if owner.get(&c).is_some_and(|o| *o == e.name) {
            // An enum named like a type: distinct, not a duplicate.
            free_name(format!("{}_enum", e.name), &mut used)
        } else {
            distinct(&e.name, "enum", &mut used, &mut owner)
        };
    }
    for t in s.types.iter_mut().filter(|t| t.scope.len() > 1) {
        t.name = free_name(t.scope.join("_"), &mut used);
    }
    for e in s.enums.iter_mut().filter(|e| !e.scope.is_empty()) {
        e.name = free_name(
            format!("{}_{}", e.scope.join("_"), e.schema_name),
            &mut used,
        );
    }

    for t in &mut s.types {
        for f in &mut t.fields {
            if matches!(f.kind, FieldKind::Switch { .. }) {
                let base = format!("{}_{}", t.name, f.id);
                f.switch_enum = if used.insert(camel(&base)) {
                    base
                } else {
                    free_name(format!("{base}_switch"), &mut used)
                };
            }
        }
    }
    for c in &mut s.column_sets {
        c.rust_name = free_name(format!("{}_columns", c.name), &mut used);
    }

    s.index_names();
    let mut types: HashMap<Vec<String>, TypeId> = HashMap::new();
    for t in &s.types {
        types.entry(t.scope.clone()).or_insert(t.id);
    }
    let mut enums: HashMap<(Vec<String>, String), EnumId> = HashMap::new();
    for e in &s.enums {
        enums
            .entry((e.scope.clone(), e.schema_name.clone()))
            .or_insert(e.id);
    }
    let type_names: Vec<String> = s.types.iter().map(|t| t.name.clone()).collect();
    let enum_names: Vec<String> = s.enums.iter().map(|e| e.name.clone()).collect();
    // A name no scope resolves that is a unique name itself (`outer_inner`) means that
    // definition.
    let names = s.names.clone();
    let unique_type = |n: &str| names.type_id(n);
    let unique_enum = |n: &str| names.enum_id(n);
    let root_id = s.id.clone();
    let root = types.get(&Vec::new()).copied();
    let find_type = |scope: &[String], written: &str| -> Option<TypeId> {
        let path: Vec<String> = written.split("::").map(str::to_owned).collect();
        for k in (0..=scope.len()).rev() {
            let mut cand = scope[..k].to_vec();
            cand.extend(path.iter().cloned());
            if let Some(n) = types.get(&cand) {
                return Some(*n);
            }
        }
        (path.len() == 1 && path[0] == root_id)
            .then_some(root)
            .flatten()
    };
    let find_enum = |scope: &[String], written: &str| -> Option<EnumId> {
        let mut path: Vec<String> = written.split("::").map(str::to_owned).collect();
        let name = path.pop()?;
        for k in (0..=scope.len()).rev() {
            let mut cand = scope[..k].to_vec();
            cand.extend(path.iter().cloned());
            if let Some(n) = enums.get(&(cand, name.clone())) {
                return Some(*n);
            }
        }
        None
    };

    for t in &mut s.types {
        let scope = t.scope.clone();
        // References in the IR become ids; names in expressions (`e::v`, `.as<t>`,
        // `sizeof<t>`) become unique names.
        let ty = |r: &mut TypeRef| {
            if let TypeRef::Named(n) = r {
                if let Some(i) = find_type(&scope, n).or_else(|| unique_type(n)) {
                    *r = TypeRef::Id(i);
                }
            }
        };
        let en = |r: &mut EnumRef| {
            if let EnumRef::Named(n) = r {
                if let Some(i) = find_enum(&scope, n).or_else(|| unique_enum(n)) {
                    *r = EnumRef::Id(i);
                }
            }
        };
        let ty_text = |n: &mut String| {
            if let Some(i) = find_type(&scope, n) {
                *n = type_names[i.0 as usize].clone();
            }
        };
        let en_text = |n: &mut String| {
            if let Some(i) = find_enum(&scope, n) {
                *n = enum_names[i.0 as usize].clone();
            }
        };
        for f in &mut t.fields {
            match &mut f.kind {
                FieldKind::User { ty: r, .. } => ty(r),
                FieldKind::Switch { cases, default, .. } => {
                    for (_, n) in cases.iter_mut() {
                        ty(n);
                    }
                    if let Some(d) = default {
                        ty(d);
                    }
                }
                FieldKind::Int {
                    enum_name: Some(e), ..
                }
                | FieldKind::Bits {
                    enum_name: Some(e), ..
                } => en(e),
                _ => {}
            }
            for_each_expr(f, &mut |e| rewrite_enum_refs(e, &en_text, &ty_text));
            for a in &mut f.args {
                rewrite_enum_refs(&mut a.expr, &en_text, &ty_text);
            }
            for (n, args) in &mut f.switch_args {
                ty(n);
                for a in args {
                    rewrite_enum_refs(&mut a.expr, &en_text, &ty_text);
                }
            }
        }
        for p in &mut t.params {
            let mut k = &mut p.kind;
            while let ParamKind::List(inner) = k {
                k = inner;
            }
            match k {
                ParamKind::Enum(e) => en(e),
                ParamKind::User(n) => ty(n),
                _ => {}
            }
        }
        if let Some(sw) = &mut t.endian_switch {
            rewrite_enum_refs(&mut sw.on.expr, &en_text, &ty_text);
            for (k, _) in &mut sw.cases {
                rewrite_enum_refs(&mut k.expr, &en_text, &ty_text);
            }
        }
        for i in &mut t.instances {
            if let Some(e) = &mut i.enum_name {
                en(e);
            }
            rewrite_enum_refs(&mut i.value.expr, &en_text, &ty_text);
            if let Some(c) = &mut i.cond {
                rewrite_enum_refs(&mut c.expr, &en_text, &ty_text);
            }
        }
        if let Some(e) = &mut t.to_string {
            rewrite_enum_refs(&mut e.expr, &en_text, &ty_text);
        }
    }
}

/// Calls `f` on every expression of a field.
pub(crate) fn for_each_expr(field: &mut Field, f: &mut dyn FnMut(&mut Expr)) {
    if let Some(p) = &mut field.at {
        f(&mut p.pos.expr);
        if let Some(io) = &mut p.io_of {
            f(&mut io.expr);
        }
    }
    if let Some(c) = &mut field.cond {
        f(&mut c.expr);
    }
    match &mut field.repeat {
        Repeat::Expr(e) | Repeat::Until(e) => f(&mut e.expr),
        Repeat::None | Repeat::Eos => {}
    }
    match &mut field.valid {
        Some(Valid::Eq(e)) | Some(Valid::Expr(e)) => f(&mut e.expr),
        Some(Valid::Range(a, b)) => {
            for x in [a, b].into_iter().flatten() {
                f(&mut x.expr);
            }
        }
        Some(Valid::AnyOf(v)) => {
            for x in v {
                f(&mut x.expr);
            }
        }
        Some(Valid::InEnum) | None => {}
    }
    match &mut field.kind {
        FieldKind::Bytes(Size::Expr(e))
        | FieldKind::Str {
            size: Some(Size::Expr(e)),
            ..
        }
        | FieldKind::User {
            size: Some(Size::Expr(e)),
            ..
        } => f(&mut e.expr),
        FieldKind::Switch {
            on, cases, size, ..
        } => {
            if let Some(Size::Expr(e)) = size {
                f(&mut e.expr);
            }
            f(&mut on.expr);
            for (k, _) in cases {
                f(&mut k.expr);
            }
        }
        _ => {}
    }
}

/// Rewrites the enum of every `enum::value` in `e` with `en`, and the type of every
/// `.as<type>` and `sizeof<type>` with `ty` (iteratively: expressions are bounded in depth,
/// but this needs no recursion limit at all).
fn rewrite_enum_refs(e: &mut Expr, en: &dyn Fn(&mut String), ty: &dyn Fn(&mut String)) {
    let mut todo = vec![e];
    while let Some(e) = todo.pop() {
        match e {
            Expr::EnumRef(name, _) => en(name),
            Expr::Cast(a, t) => {
                ty(t);
                todo.push(a);
            }
            Expr::SizeOf(t) => ty(t),
            Expr::Unary(_, a) | Expr::Attr(a, _) => todo.push(a),
            Expr::Index(a, b) => {
                todo.push(a);
                todo.push(b);
            }
            Expr::Call(a, _, args) => {
                todo.push(a);
                todo.extend(args.iter_mut());
            }
            Expr::List(items) => todo.extend(items.iter_mut()),
            Expr::Binary(_, a, b) => {
                todo.push(a);
                todo.push(b);
            }
            Expr::Ternary(c, a, b) => {
                todo.push(c);
                todo.push(a);
                todo.push(b);
            }
            Expr::Int(_)
            | Expr::Float(_)
            | Expr::Str(_)
            | Expr::Bool(_)
            | Expr::Null
            | Expr::Name(_) => {}
        }
    }
}
