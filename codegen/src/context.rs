//! `_parent` and `_root`: lowered to context params before emit.
//!
//! Kaitai Struct lets an expression reach the fields of the types that enclose the one being
//! read (`_parent.header.len`, `_parent._parent.x`, `_root.sizes[i]`). statepack's generated
//! types hold no back-pointers, so each distinct path of that kind becomes a *context param*
//! of the type that uses it: a hidden entry of the type's `params` (named `__ctx_...`, kept as
//! a member like every param), and every field that reads the type gives its value as an
//! extra argument, written as an expression over the reading type (`_parent.header.len`
//! becomes `header.len` there; `_parent._parent.x` becomes `_parent.x`, which makes a context
//! param of the reading type in turn). On read the argument is evaluated from the fields
//! read so far; on write from the value being written, and the reader's writer checks it
//! against the member, as for every param.
//!
//! The pass also gives `type: struct` params their type from the arguments passed to them.
//!
//! Errors: a path that names a field read after the field that reads the type (naming both
//! places), a path through something that is not a field or param, `_parent` in the root
//! type, and readers that disagree on the type of a path.

use crate::diag::{Diag, Pos};
use crate::expr::Expr;
use crate::ir::*;
use std::collections::HashMap;

/// Rounds of the fixpoint (each round moves paths one type up; deeper nesting than this is
/// refused).
const MAX_ROUNDS: usize = 64;

/// A path from `_parent` or `_root`: the head and the member names after it (casts to user
/// types dropped: the reading type is known statically). With `arg`, the head is instead a
/// user-type param whose every reader gives `_root` or `_parent` (see [`whole_context_params`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Chain {
    root: bool,
    arg: Option<String>,
    steps: Vec<String>,
}

impl Chain {
    fn text(&self) -> String {
        let mut s = match &self.arg {
            Some(p) => p.clone(),
            None => String::from(if self.root { "_root" } else { "_parent" }),
        };
        for st in &self.steps {
            s.push('.');
            s.push_str(st);
        }
        s
    }
}

/// Where a context param of a type was first used.
#[derive(Debug, Clone)]
struct Use {
    pos: Pos,
    key_path: String,
}

/// The chain that `e` is, if it is one (`_parent.a.b`, `_root.a`, `p.a` for a param `p` in
/// `heads`, casts to user types allowed in between).
fn chain_of(e: &Expr, s: &Schema, heads: &[String]) -> Option<Chain> {
    let mut steps = Vec::new();
    let mut cur = e;
    loop {
        match cur {
            Expr::Attr(inner, a) => {
                steps.push(a.clone());
                cur = inner;
            }
            Expr::Cast(inner, t) if s.type_named(t).is_some() && !steps.is_empty() => cur = inner,
            Expr::Name(n) if (n == "_parent" || n == "_root") && !steps.is_empty() => {
                steps.reverse();
                return Some(Chain {
                    root: n == "_root",
                    arg: None,
                    steps,
                });
            }
            Expr::Name(n) if heads.contains(n) && !steps.is_empty() => {
                steps.reverse();
                return Some(Chain {
                    root: false,
                    arg: Some(n.clone()),
                    steps,
                });
            }
            _ => return None,
        }
    }
}

/// Rewrites every chain in `e` (outermost first) with `f`, which returns its replacement;
/// `heads` are the params of the type that stand for `_root` or `_parent` of a reader.
fn rewrite(
    e: &mut Expr,
    s: &Schema,
    heads: &[String],
    f: &mut dyn FnMut(Chain) -> Result<Expr, String>,
) -> Result<(), String> {
    if let Some(c) = chain_of(e, s, heads) {
        *e = f(c)?;
        return Ok(());
    }
    match e {
        Expr::Name(n) if n == "_parent" || n == "_root" => Err(format!(
            "`{n}` on its own (not followed by `.member`) is not supported here; it can be the whole argument of a user-type param"
        )),
        Expr::Name(n) if heads.contains(n) => Err(format!(
            "param `{n}` is given `_root` or `_parent`, so only its members (`{n}.member`) can be used"
        )),
        Expr::Cast(a, _) | Expr::Unary(_, a) | Expr::Attr(a, _) => rewrite(a, s, heads, f),
        Expr::Index(a, b) | Expr::Binary(_, a, b) => {
            rewrite(a, s, heads, f)?;
            rewrite(b, s, heads, f)
        }
        Expr::Call(a, _, args) => {
            rewrite(a, s, heads, f)?;
            for x in args {
                rewrite(x, s, heads, f)?;
            }
            Ok(())
        }
        Expr::List(items) => {
            for x in items {
                rewrite(x, s, heads, f)?;
            }
            Ok(())
        }
        Expr::Ternary(c, a, b) => {
            rewrite(c, s, heads, f)?;
            rewrite(a, s, heads, f)?;
            rewrite(b, s, heads, f)
        }
        _ => Ok(()),
    }
}

/// Every expression of a type, with the key path it belongs to.
pub(crate) fn type_exprs(t: &mut TypeDef) -> Vec<(&mut SrcExpr, String)> {
    let mut out: Vec<(&mut SrcExpr, String)> = Vec::new();
    for f in &mut t.fields {
        let kp = f.key_path.clone();
        if let Some(at) = f.at.as_mut() {
            if let Some(io) = at.io_of.as_mut() {
                out.push((io, format!("{kp}.io")));
            }
            out.push((&mut at.pos, format!("{kp}.pos")));
        }
        if let Some(c) = &mut f.cond {
            out.push((c, format!("{kp}.if")));
        }
        match &mut f.repeat {
            Repeat::Expr(e) => out.push((e, format!("{kp}.repeat-expr"))),
            Repeat::Until(e) => out.push((e, format!("{kp}.repeat-until"))),
            Repeat::None | Repeat::Eos => {}
        }
        match &mut f.valid {
            Some(Valid::Eq(e)) | Some(Valid::Expr(e)) => out.push((e, format!("{kp}.valid"))),
            Some(Valid::Range(a, b)) => {
                for x in [a, b].into_iter().flatten() {
                    out.push((x, format!("{kp}.valid")));
                }
            }
            Some(Valid::AnyOf(v)) => {
                for x in v {
                    out.push((x, format!("{kp}.valid")));
                }
            }
            Some(Valid::InEnum) | None => {}
        }
        match &mut f.process {
            Some(Process::Xor(ProcArg::Expr(e)))
            | Some(Process::Rol(e))
            | Some(Process::Ror(e)) => out.push((e, format!("{kp}.process"))),
            _ => {}
        }
        match &mut f.kind {
            FieldKind::Bytes(Size::Expr(e))
            | FieldKind::Str {
                size: Some(Size::Expr(e)),
                ..
            }
            | FieldKind::User {
                size: Some(Size::Expr(e)),
                ..
            } => out.push((e, format!("{kp}.size"))),
            FieldKind::Switch {
                on, size, cases, ..
            } => {
                if let Some(Size::Expr(e)) = size {
                    out.push((e, format!("{kp}.size")));
                }
                out.push((on, format!("{kp}.type.switch-on")));
                for (k, _) in cases {
                    out.push((k, format!("{kp}.type.cases")));
                }
            }
            _ => {}
        }
        for a in &mut f.args {
            out.push((a, format!("{kp}.type")));
        }
        for (_, args) in &mut f.switch_args {
            for a in args {
                out.push((a, format!("{kp}.type.cases")));
            }
        }
        for (_, args) in &mut f.ctx_args {
            for a in args.iter_mut().flatten() {
                out.push((a, format!("{kp}.type")));
            }
        }
    }
    if let Some(sw) = &mut t.endian_switch {
        out.push((&mut sw.on, format!("{}.switch-on", sw.key_path)));
    }
    for i in &mut t.instances {
        let kp = i.key_path.clone();
        out.push((&mut i.value, format!("{kp}.value")));
        if let Some(c) = &mut i.cond {
            out.push((c, format!("{kp}.if")));
        }
    }
    out
}

/// The user types of the schema a field reads (its type, or each case type of a switch
/// once; not a name no type defines).
fn read_types(f: &Field) -> Vec<TypeId> {
    match &f.kind {
        FieldKind::User { ty: name, .. } => name.id().into_iter().collect(),
        FieldKind::Switch { cases, default, .. } => {
            let mut v: Vec<TypeId> = Vec::new();
            for n in cases.iter().map(|(_, n)| n).chain(default.iter()) {
                if let Some(i) = n.id().filter(|i| !v.contains(i)) {
                    v.push(i);
                }
            }
            v
        }
        _ => Vec::new(),
    }
}

fn attr_chain(head: Expr, steps: &[String]) -> Expr {
    steps
        .iter()
        .fold(head, |e, st| Expr::Attr(Box::new(e), st.clone()))
}

/// Whether type `i` is the root type of its schema file: the importing schema's root (type 0)
/// or an imported schema's root (the type of another file directly under its schema id).
fn is_file_root(s: &Schema, i: usize) -> bool {
    i == 0 || (s.types[i].file != s.types[0].file && s.types[i].scope.len() == 1)
}

/// The root type of the schema file that defines type `i` (see [`is_file_root`]).
fn file_root_of(s: &Schema, i: usize) -> usize {
    (0..s.types.len())
        .find(|&r| is_file_root(s, r) && s.types[r].file == s.types[i].file)
        .unwrap_or(0)
}

/// The argument a field of type `pi` gives for chain `c` of the type it reads; `None` when
/// `parent: false` leaves nothing to give.
fn site_arg(c: &Chain, f: &Field, reader_is_root: bool) -> Option<Expr> {
    let own = || {
        so_far(f, &c.steps)
            .unwrap_or_else(|| attr_chain(Expr::Name(c.steps[0].clone()), &c.steps[1..]))
    };
    if c.root {
        return Some(if reader_is_root {
            own()
        } else {
            attr_chain(Expr::Name("_root".into()), &c.steps)
        });
    }
    match &f.parent {
        ParentSpec::Default => Some(own()),
        ParentSpec::None(_) => None,
        ParentSpec::Expr(e) => Some(attr_chain(e.expr.clone(), &c.steps)),
    }
}

/// The list being read, as read so far: inside an element of the repeated field `f`, the
/// path `f.size` (reached as `_parent.f.size` or `_root.f.size`) counts the elements read
/// before the current one, which is `_index` (as in Kaitai Struct, an element joins its list
/// only once it is read). `None` for every other path, which names `f` as a whole and is
/// refused as read too late.
fn so_far(f: &Field, steps: &[String]) -> Option<Expr> {
    let repeated = !matches!(f.repeat, Repeat::None) && !f.varint && f.at.is_none();
    (repeated && steps.len() == 2 && steps[0] == f.id && steps[1] == "size")
        .then(|| Expr::Name("_index".into()))
}

/// A param id for chain `c` not used in `t` yet.
fn param_id(c: &Chain, t: &TypeDef) -> String {
    let mut base = String::from("__ctx_");
    match &c.arg {
        Some(p) => {
            base.push_str("arg_");
            base.push_str(p.trim_start_matches('_'));
        }
        None => base.push_str(if c.root { "root" } else { "parent" }),
    }
    for st in &c.steps {
        base.push('_');
        base.push_str(st.trim_start_matches('_'));
    }
    let mut id = base.clone();
    let mut n = 2;
    while t.params.iter().any(|p| p.id == id) || t.fields.iter().any(|f| f.id == id) {
        id = format!("{base}_{n}");
        n += 1;
    }
    id
}

/// The strongly connected components of the graph `edges` (type index -> the indices of the
/// types its fields read): each node's component number. Two passes of an iterative
/// depth-first search (Kosaraju's), so the cost is linear in the graph and no schema can
/// exhaust the stack.
fn components(edges: &[Vec<usize>]) -> Vec<usize> {
    let nodes = edges;
    let mut back: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (a, out) in edges.iter().enumerate() {
        for &b in out {
            back[b].push(a);
        }
    }
    // Pass 1: nodes in the order their depth-first search finishes.
    let mut done = vec![false; nodes.len()];
    let mut order = Vec::with_capacity(nodes.len());
    for start in 0..nodes.len() {
        if done[start] {
            continue;
        }
        done[start] = true;
        let mut stack = vec![(start, 0usize)];
        while let Some((n, next)) = stack.last_mut() {
            if let Some(&m) = edges[*n].get(*next) {
                *next += 1;
                if !done[m] {
                    done[m] = true;
                    stack.push((m, 0));
                }
            } else {
                order.push(*n);
                stack.pop();
            }
        }
    }
    // Pass 2: over the reversed edges, latest finisher first; each search is one component.
    let mut comp = vec![usize::MAX; nodes.len()];
    let mut count = 0;
    for &start in order.iter().rev() {
        if comp[start] != usize::MAX {
            continue;
        }
        comp[start] = count;
        let mut stack = vec![start];
        while let Some(n) = stack.pop() {
            for &m in &back[n] {
                if comp[m] == usize::MAX {
                    comp[m] = count;
                    stack.push(m);
                }
            }
        }
        count += 1;
    }
    comp
}

/// Lowers `_parent` / `_root` paths to context params and gives `struct` params their type.
/// Errors: see the module docs.
pub fn lower(s: &mut Schema) -> Vec<Diag> {
    let mut diags = Vec::new();
    mark_opaque(s);
    mark_recursive(s);
    forward_streams(s);
    let heads = whole_context_params(s);
    let Some(chains) = context_chains(s, &heads, &mut diags) else {
        return diags;
    };
    let mut kinds: HashMap<(usize, String), Option<(ParamKind, String)>> = HashMap::new();
    context_param_types(s, &chains, &mut kinds, &mut diags);
    struct_param_types(s, &mut kinds, &mut diags);
    diags
}

/// `io: _root.X._io` of a positional instance whose type the root reads before its field
/// `X` (a user-type value read with a `size`, once, without `if`): `X` has no value when the
/// type is read, so the path cannot be a context param. Kaitai Struct reads such an instance
/// on first use, when `X` is there; statepack does too: the instance is marked
/// `Positional::io_later` (always read on first use, from the substream the root's reader
/// keeps for `X`, see `emit::io_later`). Other paths to fields read later stay refused below.
fn forward_streams(s: &mut Schema) {
    if s.types.is_empty() {
        return;
    }
    // The types read (directly or not) by each root field.
    let reached: Vec<std::collections::HashSet<usize>> = s.types[0]
        .fields
        .iter()
        .map(|f| {
            let mut seen = std::collections::HashSet::new();
            let mut todo: Vec<usize> = read_types(f).iter().map(|n| n.0 as usize).collect();
            while let Some(k) = todo.pop() {
                if seen.insert(k) {
                    for g in &s.types[k].fields {
                        todo.extend(read_types(g).iter().map(|n| n.0 as usize));
                    }
                }
            }
            seen
        })
        .collect();
    let root_file = s.types[0].file.clone();
    let mut marks = Vec::new();
    for ti in 1..s.types.len() {
        if s.types[ti].file != root_file || file_root_of(s, ti) != 0 {
            continue;
        }
        for (fi, f) in s.types[ti].fields.iter().enumerate() {
            let Some(Expr::Attr(head, x)) =
                f.at.as_ref()
                    .and_then(|a| a.io_of.as_ref())
                    .map(|e| &e.expr)
            else {
                continue;
            };
            if !matches!(&**head, Expr::Name(r) if r == "_root") {
                continue;
            }
            let Some(k) = s.types[0].fields.iter().position(|g| &g.id == x) else {
                continue;
            };
            let g = &s.types[0].fields[k];
            let sized = matches!(
                &g.kind,
                FieldKind::User {
                    size: Some(Size::Expr(_) | Size::Eos),
                    ..
                }
            ) && matches!(g.repeat, Repeat::None)
                && g.cond.is_none()
                && g.at.is_none()
                && g.process.is_none();
            if sized && reached[..k].iter().any(|r| r.contains(&ti)) {
                marks.push((ti, fi, x.clone()));
            }
        }
    }
    for (ti, fi, x) in marks {
        if let Some(at) = s.types[ti].fields[fi].at.as_mut() {
            at.io_of = None;
            at.io_later = Some(x);
        }
    }
}

/// User-type params given `_root` or `_parent` as a whole (`type: t(_root)`).
struct Heads {
    /// Per type: its params that stand for a reader's `_root` or `_parent`.
    per_type: Vec<Vec<String>>,
    /// (reading type, reading field, read type, param) -> `_root` or `_parent`, as given.
    site: HashMap<(usize, usize, TypeId, String), Expr>,
}

/// Finds the user-type (or `struct`) params that every field reading their type gives
/// `_root` or `_parent` on its own, and takes them out of the type and its readers' arguments.
/// Such a param cannot be a member (generated types hold no back-pointers and the type that
/// gives it is still being read), so it becomes what the type uses of it: each path
/// `p.a.b` becomes a context param, given as `_root.a.b` (or `_parent.a.b`) by each reader,
/// lowered in turn like every such path.
fn whole_context_params(s: &mut Schema) -> Heads {
    let mut heads = Heads {
        per_type: vec![Vec::new(); s.types.len()],
        site: HashMap::new(),
    };
    for ci in 0..s.types.len() {
        let tn = TypeId(ci as u32);
        // Readers through a switch give arguments per case; those keep the param.
        let switched = s
            .types
            .iter()
            .flat_map(|t| &t.fields)
            .any(|f| matches!(f.kind, FieldKind::Switch { .. }) && read_types(f).contains(&tn));
        if switched {
            continue;
        }
        let mut j = 0;
        while j < s.types[ci].params.len() {
            let p = &s.types[ci].params[j];
            let whole = |e: &Expr| matches!(e, Expr::Name(n) if n == "_root" || n == "_parent");
            let mut sites = Vec::new();
            let mut all =
                p.context.is_none() && matches!(p.kind, ParamKind::User(_) | ParamKind::Struct);
            for (pi, t) in s.types.iter().enumerate() {
                for (fi, f) in t.fields.iter().enumerate() {
                    if matches!(&f.kind, FieldKind::User { ty: name, .. } if name.id() == Some(tn))
                    {
                        match f.args.get(j) {
                            Some(a) if whole(&a.expr) => sites.push((pi, fi, a.expr.clone())),
                            _ => all = false,
                        }
                    }
                }
            }
            if !all || sites.is_empty() {
                j += 1;
                continue;
            }
            let id = s.types[ci].params.remove(j).id;
            for (pi, fi, e) in sites {
                s.types[pi].fields[fi].args.remove(j);
                heads.site.insert((pi, fi, tn, id.clone()), e);
            }
            heads.per_type[ci].push(id);
        }
    }
    heads
}

/// Opaque types (`ks-opaque-types: true`): the names no type defines become `s.opaque`, and
/// the fields reading them are read with the strict sized rule.
fn mark_opaque(s: &mut Schema) {
    // Opaque types (`ks-opaque-types: true`): names no type defines. Such a field is read
    // with statepack's strict sized rule (the external type keeps no unread tail).
    if s.opaque_types {
        let mut opaque = Vec::new();
        for t in &mut s.types {
            for f in &mut t.fields {
                if let FieldKind::User {
                    ty: TypeRef::Named(name),
                    ..
                } = &f.kind
                {
                    if !crate::num_type::looks_like_number_type(name) {
                        if !opaque.contains(name) {
                            opaque.push(name.clone());
                        }
                        f.strict = true;
                    }
                }
            }
        }
        s.opaque = opaque;
    }
}

/// Marks every field that reads a type leading back to the field's own type (boxed when it
/// holds one value).
fn mark_recursive(s: &mut Schema) {
    // Recursive types: a field reading a type that leads back to the field's own type.
    let reads: Vec<Vec<usize>> = s
        .types
        .iter()
        .map(|t| {
            t.fields
                .iter()
                .flat_map(read_types)
                .map(|n| n.0 as usize)
                .collect::<Vec<_>>()
        })
        .collect();
    // A read type leads back to the reading type exactly when both lie in one strongly
    // connected component of the "reads" graph (the reading type reads it directly).
    let component = components(&reads);
    for (ti, t) in s.types.iter_mut().enumerate() {
        let own = component[ti];
        for f in &mut t.fields {
            let rec: Vec<TypeId> = read_types(f)
                .into_iter()
                .filter(|n| n.0 as usize == ti || component[n.0 as usize] == own)
                .collect();
            if !rec.is_empty() && matches!(f.kind, FieldKind::User { .. }) {
                f.boxed = true;
            }
            f.recursive = rec;
        }
    }
}

/// Rewrites the `_parent`/`_root` paths of every type into context params and gives every
/// field that reads a type its arguments for them, until nothing changes. Returns, per type,
/// its chains with their param ids and first uses; `None` when a path cannot be lowered
/// (reported in `diags`).
fn context_chains(
    s: &mut Schema,
    heads: &Heads,
    diags: &mut Vec<Diag>,
) -> Option<Vec<Vec<(Chain, String, Use)>>> {
    // `_root` is the root type of the schema file that defines the type (as in Kaitai
    // Struct: an imported schema's types see its own root): the importing schema's root,
    // or an imported schema's root type (the one of its file directly under the schema id).
    let file_root: Vec<bool> = (0..s.types.len()).map(|i| is_file_root(s, i)).collect();
    // A file's root that a type of the same file reads holds a `_root` of its own only at
    // the top: such a root takes `_root.x` from its reader, or its own `x` when it is the top.
    let root_recursive: Vec<bool> = (0..s.types.len())
        .map(|ri| {
            file_root[ri]
                && s.types.iter().any(|t| {
                    t.file == s.types[ri].file
                        && t.fields
                            .iter()
                            .any(|f| read_types(f).contains(&TypeId(ri as u32)))
                })
        })
        .collect();
    let file = s.file.clone();
    // Per type: chain -> param id, and where it was first used.
    let mut chains: Vec<Vec<(Chain, String, Use)>> = vec![Vec::new(); s.types.len()];
    for _round in 0..MAX_ROUNDS {
        let mut changed = false;
        // 1. Rewrite chains in every type into names of context params.
        let snapshot = s.clone();
        for (ti, t) in s.types.iter_mut().enumerate() {
            let mut new_params = Vec::new();
            let tname = t.name.clone();
            let mut probe = t.clone();
            for (e, kp) in type_exprs(t) {
                let pos = e.pos;
                let mut err = None;
                let r = rewrite(
                    &mut e.expr,
                    &snapshot,
                    &heads.per_type[ti],
                    &mut |c: Chain| {
                        let own = attr_chain(Expr::Name(c.steps[0].clone()), &c.steps[1..]);
                        if c.root && file_root[ti] && !root_recursive[ti] {
                            return Ok(own);
                        }
                        if !c.root && c.arg.is_none() && ti == 0 && !root_recursive[0] {
                            return Err("the root type has no `_parent`".into());
                        }
                        // In a recursive root type, `_root.x` is the top level's `x`: given by
                        // the reading field, or the type's own `x` at the top level.
                        let in_root = c.root && file_root[ti];
                        let wrap = move |id: String| {
                            if in_root {
                                Expr::Call(
                                    Box::new(Expr::Name(id)),
                                    "__or_self".into(),
                                    vec![own.clone()],
                                )
                            } else {
                                Expr::Name(id)
                            }
                        };
                        if let Some((_, id, _)) = chains[ti].iter().find(|(k, _, _)| *k == c) {
                            return Ok(wrap(id.clone()));
                        }
                        let id = param_id(&c, &probe);
                        probe.params.push(Param {
                            id: id.clone(),
                            doc: None,
                            pos,
                            kind: ParamKind::Int,
                            context: Some(c.text()),
                            optional: false,
                        });
                        chains[ti].push((
                            c.clone(),
                            id.clone(),
                            Use {
                                pos,
                                key_path: kp.clone(),
                            },
                        ));
                        new_params.push((c, id.clone(), pos));
                        Ok(wrap(id))
                    },
                );
                if let Err(m) = r {
                    err = Some(m);
                }
                if let Some(m) = err {
                    diags.push(Diag::new(
                        &file,
                        pos,
                        &kp,
                        format!("in `{}`: {m}", e.src),
                        "use `_parent.<member>` or `_root.<member>` paths",
                    ));
                }
            }
            for (c, id, pos) in new_params {
                changed = true;
                t.params.push(Param {
                    id,
                    doc: Some(format!(
                        "Context: the value of `{}` in `{}`, given by the field that reads this type; not stored in the data.",
                        c.text(),
                        tname
                    )),
                    pos,
                    kind: ParamKind::Int,
                    context: Some(c.text()),
                    optional: false,
                });
            }
        }
        if !diags.is_empty() {
            return None;
        }
        // 2. Every field that reads a type gives each of its context params.
        for pi in 0..s.types.len() {
            for fi in 0..s.types[pi].fields.len() {
                for tn in read_types(&s.types[pi].fields[fi]) {
                    let ci = tn.0 as usize;
                    let f = &s.types[pi].fields[fi];
                    let done = f
                        .ctx_args
                        .iter()
                        .find(|(n, _)| *n == tn)
                        .map_or(0, |(_, a)| a.len());
                    if s.types[pi].file != s.types[ci].file {
                        if let Some((c, _, u)) = chains[ci][done..].iter().find(|(c, _, _)| c.root)
                        {
                            // `_root` here would be the reader's root, of another file.
                            diags.push(Diag::new(&s.types[ci].file, u.pos, &u.key_path, format!(
                                "`{}` in `{}` is the root of {}, but `{}` of {} reads the type directly",
                                c.text(), s.types[ci].schema_name, s.types[ci].file, f.key_path, s.types[pi].file
                            ), format!("read `{}` through the root type of its schema, or pass the value as a param", s.types[ci].schema_name)));
                            return None;
                        }
                    }
                    let reader_is_root = file_root[pi] && !root_recursive[pi];
                    let todo: Vec<Option<SrcExpr>> = chains[ci][done..]
                        .iter()
                        .map(|(c, _, _)| {
                            let arg = match &c.arg {
                                Some(p) => heads
                                    .site
                                    .get(&(pi, fi, tn, p.clone()))
                                    .map(|h| attr_chain(h.clone(), &c.steps)),
                                None => site_arg(c, f, reader_is_root),
                            };
                            arg.map(|expr| SrcExpr {
                                src: expr.to_string(),
                                expr,
                                pos: f.pos_of("type"),
                            })
                        })
                        .collect();
                    if todo.is_empty() {
                        continue;
                    }
                    changed = true;
                    let f = &mut s.types[pi].fields[fi];
                    match f.ctx_args.iter_mut().find(|(n, _)| *n == tn) {
                        Some((_, a)) => a.extend(todo),
                        None => f.ctx_args.push((tn, todo)),
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    Some(chains)
}

/// Gives every context param the type of the arguments given for it, which must name fields
/// read before the reading field (`kinds` memoizes the types of expressions).
fn context_param_types(
    s: &mut Schema,
    chains: &[Vec<(Chain, String, Use)>],
    kinds: &mut HashMap<(usize, String), Option<(ParamKind, String)>>,
    diags: &mut Vec<Diag>,
) {
    let file = s.file.clone();
    // 3. Types: every context param takes the type of the arguments given for it, which
    // must name fields read before the reading field.
    for ci in 0..s.types.len() {
        for (j, (c, id, u)) in chains[ci].clone().iter().enumerate() {
            let mut found: Option<(ParamKind, String)> = None;
            let mut optional = false;
            let mut sites = 0usize;
            let mut other_files = 0usize;
            for (pi, p) in s.types.iter().enumerate() {
                for (fi, f) in p.fields.iter().enumerate() {
                    let Some((_, args)) = f.ctx_args.iter().find(|(n, _)| n.0 as usize == ci)
                    else {
                        continue;
                    };
                    if p.file != s.types[ci].file {
                        other_files += 1;
                    }
                    let Some(arg) = args.get(j) else { continue };
                    sites += 1;
                    let Some(arg) = arg else {
                        optional = true;
                        continue;
                    };
                    match kind_of(s, pi, Some(fi), &arg.expr, kinds, 0) {
                        Ok(k) => match &found {
                            Some((k0, at)) if *k0 != k => {
                                diags.push(Diag::new(&file, u.pos, &u.key_path, format!(
                                    "`{}` in `{}` is {} where `{}` reads it but {} where {} reads it",
                                    c.text(), s.types[ci].schema_name, kind_text(s, &k), f.key_path, kind_text(s, k0), at
                                ), "read the type from places where the path has one type"));
                            }
                            Some(_) => {}
                            None => found = Some((k, f.key_path.clone())),
                        },
                        Err(m) => diags.push(Diag::new(
                            &file,
                            u.pos,
                            &u.key_path,
                            format!("`{}` (in `{}`): {m}", c.text(), s.types[ci].schema_name),
                            format!(
                                "the path is evaluated where `{}` reads the type ({}:{}:{})",
                                f.key_path, file, f.pos.line, f.pos.col
                            ),
                        )),
                    }
                }
            }
            if !c.root && c.arg.is_none() && !optional && sites > 0 && other_files == sites {
                // `_parent` is typed within the type's own schema file, as Kaitai Struct does.
                let t = &s.types[ci];
                diags.push(Diag::new(&t.file, u.pos, &u.key_path, format!("`{}` in `{}` has no type: the parent of `{}` is unknown in its own schema file (no field of that file reads the type; {other_files} field(s) of other schemas do, but a type's `_parent` is known only from the file that defines it)", c.text(), t.schema_name, t.schema_name), format!("read the type from a field of {}, or pass the value as a param", t.file)));
                continue;
            }
            if found.is_none() && sites > 0 && !optional {
                // Reported for each reading field above.
                continue;
            }
            if found.is_none() && !optional && c.root {
                // No field reads the type: `_root` still has one type.
                let e = attr_chain(Expr::Name(c.steps[0].clone()), &c.steps[1..]);
                match kind_of(s, file_root_of(s, ci), None, &e, kinds, 0) {
                    Ok(k) => found = Some((k, String::new())),
                    Err(m) => diags.push(Diag::new(
                        &file,
                        u.pos,
                        &u.key_path,
                        format!("`{}` (in `{}`): {m}", c.text(), s.types[ci].schema_name),
                        "name a field of the root type",
                    )),
                }
            }
            let Some((k, _)) = found else {
                if !optional {
                    diags.push(Diag::new(&s.types[ci].file, u.pos, &u.key_path, format!("`{}` in `{}` has no type: the parent of `{}` is unknown, since no field reads it", c.text(), s.types[ci].schema_name, s.types[ci].schema_name), "read the type from a field, or do not use `_parent` in it"));
                    continue;
                }
                diags.push(Diag::new(&file, u.pos, &u.key_path, format!("`{}` in `{}` has no value: every field reading the type has `parent: false`", c.text(), s.types[ci].schema_name), "drop `parent: false`, or do not use `_parent` in the type"));
                continue;
            };
            let p = s.types[ci]
                .params
                .iter_mut()
                .find(|p| &p.id == id)
                .expect("context param");
            p.kind = k;
            // The top level gives a recursive root type none of its context params.
            p.optional = optional || ci == 0;
        }
    }
}

/// Gives every `struct` param the user type of the arguments given for it.
fn struct_param_types(
    s: &mut Schema,
    kinds: &mut HashMap<(usize, String), Option<(ParamKind, String)>>,
    diags: &mut Vec<Diag>,
) {
    let file = s.file.clone();
    // 4. `struct` params: the type of the arguments given.
    for ci in 0..s.types.len() {
        for j in 0..s.types[ci].params.len() {
            if s.types[ci].params[j].context.is_some() {
                continue;
            }
            let is_struct = |k: &ParamKind| match k {
                ParamKind::Struct => true,
                ParamKind::List(i) => **i == ParamKind::Struct,
                _ => false,
            };
            if !is_struct(&s.types[ci].params[j].kind) {
                continue;
            }
            let mut found: Option<ParamKind> = None;
            for (pi, p) in s.types.iter().enumerate() {
                for (fi, f) in p.fields.iter().enumerate() {
                    if !matches!(&f.kind, FieldKind::User { ty: name, .. } if name.id() == Some(TypeId(ci as u32)))
                    {
                        continue;
                    }
                    let Some(a) = f.args.get(j) else { continue };
                    match kind_of(s, pi, Some(fi), &a.expr, kinds, 0) {
                        Ok(k)
                            if !is_struct(&k)
                                && matches!(k, ParamKind::User(_) | ParamKind::List(_)) =>
                        {
                            if found.as_ref().is_some_and(|f0| *f0 != k) {
                                diags.push(Diag::new(&file, a.pos, &format!("{}.type", f.key_path), format!("`struct` param `{}` of `{}` is given {} here and {} elsewhere", s.types[ci].params[j].id, s.types[ci].schema_name, kind_text(s, &k), kind_text(s, found.as_ref().unwrap_or(&k))), "statepack gives a `struct` param one user type: pass values of one type"));
                            }
                            found = Some(k);
                        }
                        Ok(k) => diags.push(Diag::new(
                            &file,
                            a.pos,
                            &format!("{}.type", f.key_path),
                            format!(
                                "argument `{}` is {} but param `{}` is a `struct`",
                                a.src,
                                kind_text(s, &k),
                                s.types[ci].params[j].id
                            ),
                            "pass a user type value",
                        )),
                        Err(m) => diags.push(Diag::new(
                            &file,
                            a.pos,
                            &format!("{}.type", f.key_path),
                            format!("argument `{}` of a `struct` param: {m}", a.src),
                            "pass a field (or param) holding a user type",
                        )),
                    }
                }
            }
            match found {
                Some(k) => {
                    let want_list = matches!(s.types[ci].params[j].kind, ParamKind::List(_));
                    if want_list == matches!(k, ParamKind::List(_)) {
                        s.types[ci].params[j].kind = k;
                    }
                }
                None => {
                    let p = &s.types[ci].params[j];
                    // The root type's key path is empty: its params are at `params`.
                    let kp = match s.types[ci].key_path.as_str() {
                        "" => "params".to_owned(),
                        t => format!("{t}.params"),
                    };
                    match cast_types(&s.types[ci], &p.id).as_slice() {
                        // Never given, but cast to one user type (`p.as<t>`): Kaitai reads it
                        // as any user type, and every use sees it as that one.
                        [t] if !matches!(p.kind, ParamKind::List(_)) => {
                            // A unique name (resolve made it one), or a name no type has.
                            let r = s.names.type_id(t).map_or_else(|| TypeRef::Named(t.clone()), TypeRef::Id);
                            s.types[ci].params[j].kind = ParamKind::User(r);
                        }
                        [] => diags.push(Diag::new(&file, p.pos, &kp, format!("`struct` param `{}` of `{}` is never given nor cast to a user type (`{}.as<t>`), so its type is unknown", p.id, s.types[ci].schema_name, p.id), "read the type from a field that passes a user type value, or name the type instead of `struct`")),
                        ts => diags.push(Diag::new(&file, p.pos, &kp, format!("`struct` param `{}` of `{}` is never given, and is cast to {} user types ({}), so its type is unknown", p.id, s.types[ci].schema_name, ts.len(), ts.join(", ")), "name the type instead of `struct`, or read the type from a field that passes a user type value")),
                    }
                }
            }
        }
    }
}

/// The user types that the expressions of `t` cast its param `id` to (`id.as<name>`), each
/// once.
fn cast_types(t: &TypeDef, id: &str) -> Vec<String> {
    let mut probe = t.clone();
    let mut out: Vec<String> = Vec::new();
    for (e, _) in type_exprs(&mut probe) {
        crate::instances::visit(&e.expr, &mut |x| {
            if let Expr::Cast(a, name) = x {
                if matches!(&**a, Expr::Name(n) if n == id) && !out.contains(name) {
                    out.push(name.clone());
                }
            }
        });
    }
    out
}

/// Words for a param kind in messages.
fn kind_text(s: &Schema, k: &ParamKind) -> String {
    match k {
        ParamKind::Int => "an integer".into(),
        ParamKind::Bool => "a condition".into(),
        ParamKind::Float => "a float".into(),
        ParamKind::Str => "a string".into(),
        ParamKind::Bytes => "bytes".into(),
        ParamKind::Enum(e) => format!("an `{}`", s.enum_name(e)),
        ParamKind::User(t) => format!("a `{}`", s.type_name(t)),
        ParamKind::Struct => "a struct".into(),
        ParamKind::AnyUser(ts) => format!(
            "one of `{}`",
            ts.iter()
                .map(|t| s.ty(*t).name.as_str())
                .collect::<Vec<_>>()
                .join("`, `")
        ),
        ParamKind::List(i) => format!("a list of {}", kind_text(s, i)),
        ParamKind::Io => "a stream".into(),
    }
}

/// The kind of a field's value.
fn field_kind(f: &Field) -> Result<ParamKind, String> {
    let base = if f.varint {
        ParamKind::Int
    } else {
        match &f.kind {
            FieldKind::Int {
                enum_name: Some(e), ..
            }
            | FieldKind::Bits {
                enum_name: Some(e), ..
            } => ParamKind::Enum(e.clone()),
            FieldKind::Bits {
                width: 1,
                offset_binary: false,
                ..
            } => ParamKind::Bool,
            FieldKind::Bits { .. } | FieldKind::Int { .. } => ParamKind::Int,
            FieldKind::Float { .. } => ParamKind::Float,
            FieldKind::Bytes(_) | FieldKind::Contents(_) => ParamKind::Bytes,
            FieldKind::Str { .. } => ParamKind::Str,
            FieldKind::User { ty: name, .. } => ParamKind::User(name.clone()),
            FieldKind::Switch { .. } => {
                return Err(format!(
                    "`{}` is a switch, which cannot be passed down yet",
                    f.id
                ))
            }
        }
    };
    Ok(match f.repeat {
        Repeat::None => base,
        _ => ParamKind::List(Box::new(base)),
    })
}

/// The kind of `e` (a name followed by members) evaluated in type `ti`, before field `before`
/// when given (only fields read earlier are available).
fn kind_of(
    s: &Schema,
    ti: usize,
    before: Option<usize>,
    e: &Expr,
    memo: &mut HashMap<(usize, String), Option<(ParamKind, String)>>,
    depth: usize,
) -> Result<ParamKind, String> {
    if depth > MAX_ROUNDS {
        return Err("the path is nested too deeply".into());
    }
    let t = &s.types[ti];
    match e {
        // The index of the element being read, given by `so_far` only to the reading field.
        Expr::Name(n) if n == "_index" && before.is_some() => Ok(ParamKind::Int),
        Expr::Name(n) => {
            if let Some((fi, f)) = t.fields.iter().enumerate().find(|(_, f)| &f.id == n) {
                if let Some(b) = before {
                    if fi == b && !matches!(f.repeat, Repeat::None) {
                        return Err(format!(
                            "`{n}` of `{}` ({}:{}:{}) is the list being read; inside its elements only `.size` (the elements read before the current one) can be used",
                            t.schema_name, s.file, f.pos.line, f.pos.col
                        ));
                    }
                    if fi >= b {
                        let reader = &t.fields[b];
                        return Err(format!(
                            "`{n}` of `{}` ({}:{}:{}) is read after `{}` ({}:{}:{}), the field that reads the type, so it has no value yet",
                            t.schema_name, s.file, f.pos.line, f.pos.col, reader.id, s.file, reader.pos.line, reader.pos.col
                        ));
                    }
                }
                return field_kind(f);
            }
            if let Some(p) = t.params.iter().find(|p| &p.id == n) {
                if p.context.is_none() {
                    return Ok(p.kind.clone());
                }
                // A context param of `t`: the type of what its readers give.
                let key = (ti, n.clone());
                if let Some(k) = memo.get(&key) {
                    return k
                        .clone()
                        .map(|x| x.0)
                        .ok_or_else(|| "the path depends on itself".to_owned());
                }
                memo.insert(key.clone(), None);
                let j = t
                    .params
                    .iter()
                    .filter(|q| q.context.is_some())
                    .position(|q| &q.id == n)
                    .unwrap_or(0);
                let mut out = Err(format!(
                    "no field reads `{}`, so `{}` has no value",
                    t.schema_name,
                    p.context.as_deref().unwrap_or(n)
                ));
                'sites: for (pi, pt) in s.types.iter().enumerate() {
                    for (fi, f) in pt.fields.iter().enumerate() {
                        let Some((_, args)) = f.ctx_args.iter().find(|(x, _)| x.0 as usize == ti)
                        else {
                            continue;
                        };
                        if let Some(Some(a)) = args.get(j) {
                            out = kind_of(s, pi, Some(fi), &a.expr, memo, depth + 1);
                            break 'sites;
                        }
                    }
                }
                if let Ok(k) = &out {
                    memo.insert(key, Some((k.clone(), String::new())));
                }
                return out;
            }
            if let Some(i) = t.instances.iter().find(|i| &i.id == n) {
                if let Some(e) = &i.enum_name {
                    return Ok(ParamKind::Enum(e.clone()));
                }
                return kind_of(s, ti, None, &i.value.expr, memo, depth + 1)
                    .map_err(|m| format!("value instance `{n}` of `{}`: {m}", t.schema_name));
            }
            Err(format!(
                "`{}` has no member `{n}` (no field, instance or param of that name)",
                t.schema_name
            ))
        }
        Expr::Attr(inner, a) => {
            let k = kind_of(s, ti, before, inner, memo, depth + 1)?;
            match (a.as_str(), &k) {
                ("size", ParamKind::List(_) | ParamKind::Bytes)
                | ("length", ParamKind::Bytes | ParamKind::Str)
                | ("to_i", _) => Ok(ParamKind::Int),
                ("to_s", _) => Ok(ParamKind::Str),
                ("first" | "last", ParamKind::List(i)) => Ok((**i).clone()),
                (_, ParamKind::User(tn)) => {
                    let Some(ui) = tn.id().map(|i| i.0 as usize) else {
                        return Err(format!("unknown type `{}`", s.type_name(tn)));
                    };
                    kind_of(s, ui, None, &Expr::Name(a.clone()), memo, depth + 1)
                }
                _ => Err(format!(
                    "`.{a}` cannot be used on {} in a path",
                    kind_text(s, &k)
                )),
            }
        }
        Expr::Cast(inner, _) => kind_of(s, ti, before, inner, memo, depth + 1),
        Expr::Call(_, m, args) if m == "__or_self" && args.len() == 1 => {
            kind_of(s, ti, before, &args[0], memo, depth + 1)
        }
        Expr::Binary(op, a, b) => {
            use crate::expr::BinOp;
            if op.is_comparison() || matches!(op, BinOp::And | BinOp::Or) {
                return Ok(ParamKind::Bool);
            }
            let (ka, kb) = (
                kind_of(s, ti, before, a, memo, depth + 1)?,
                kind_of(s, ti, before, b, memo, depth + 1)?,
            );
            Ok(match (ka, kb) {
                (ParamKind::Float, _) | (_, ParamKind::Float) => ParamKind::Float,
                (k, _) => k,
            })
        }
        Expr::Unary(_, a) => kind_of(s, ti, before, a, memo, depth + 1),
        Expr::Ternary(_, a, _) => kind_of(s, ti, before, a, memo, depth + 1),
        // A list literal of user-type values: one of their types (as the typer says).
        Expr::List(items) if !items.is_empty() => {
            let mut users: Vec<TypeId> = Vec::new();
            for x in items {
                match kind_of(s, ti, before, x, memo, depth + 1)? {
                    ParamKind::User(TypeRef::Id(u)) => {
                        if !users.contains(&u) {
                            users.push(u);
                        }
                    }
                    k => {
                        return Err(format!(
                            "`{e}` lists {}; only lists of user-type values are passed as `struct`",
                            kind_text(s, &k)
                        ))
                    }
                }
            }
            users.sort_by(|a, b| s.ty(*a).name.cmp(&s.ty(*b).name));
            Ok(ParamKind::List(Box::new(ParamKind::AnyUser(users))))
        }
        Expr::Float(_) => Ok(ParamKind::Float),
        Expr::Bool(_) => Ok(ParamKind::Bool),
        Expr::Int(_) => Ok(ParamKind::Int),
        Expr::Str(_) => Ok(ParamKind::Str),
        _ => Err(format!("cannot tell the type of `{e}`")),
    }
}
