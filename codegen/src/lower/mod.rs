//! From the YAML tree to the IR: every key is recognised or reported, scalars are read with
//! the KS expression grammar, and all problems are collected rather than stopping at the first.

use crate::diag::Pos;
use crate::expr::{self, Expr};
use crate::ir::*;
use crate::yaml::{Key, Node, NodeKind};

/// Keys allowed in `meta`.
pub const META_KEYS: &[&str] = &[
    "id",
    "title",
    "endian",
    "bit-endian",
    "encoding",
    "file-extension",
    "license",
    "ks-version",
    "ks-debug",
    "application",
    "xref",
    "tags",
    "imports",
    "ks-opaque-types",
];
/// Keys allowed at the top level of a schema.
pub const TOP_KEYS: &[&str] = &[
    "meta",
    "doc",
    "doc-ref",
    "seq",
    "types",
    "enums",
    "instances",
    "params",
    "to-string",
];
/// Extension keys allowed at the top level of a schema.
pub const TOP_SP_KEYS: &[&str] = &["-sp-column-sets"];
/// Keys allowed in a type under `types`.
pub const TYPE_KEYS: &[&str] = &[
    "meta",
    "seq",
    "doc",
    "doc-ref",
    "instances",
    "types",
    "enums",
    "params",
    "to-string",
];
/// Extension keys allowed in a type under `types`.
pub const TYPE_SP_KEYS: &[&str] = &["-sp-end-zeros"];
/// Keys allowed in a value instance.
pub const INSTANCE_KEYS: &[&str] = &["value", "if", "enum", "doc", "doc-ref"];
/// Keys of positional instances (read like a `seq` field, at `pos` of a stream).
pub(crate) const POSITIONAL_KEYS: &[&str] = &[
    "pos",
    "io",
    "type",
    "size",
    "size-eos",
    "repeat",
    "repeat-expr",
    "repeat-until",
    "contents",
    "encoding",
    "terminator",
    "consume",
    "include",
    "eos-error",
    "pad-right",
    "process",
    "valid",
];
/// Keys allowed in a `seq` entry.
pub const FIELD_KEYS: &[&str] = &[
    "id",
    "type",
    "size",
    "size-eos",
    "repeat",
    "repeat-expr",
    "repeat-until",
    "if",
    "enum",
    "contents",
    "encoding",
    "valid",
    "doc",
    "doc-ref",
    "terminator",
    "include",
    "consume",
    "eos-error",
    "pad-right",
    "process",
    "parent",
];
/// Extension keys allowed in a `seq` entry.
pub const FIELD_SP_KEYS: &[&str] = &[
    "-sp-units",
    "-sp-sum-of",
    "-sp-box",
    "-sp-offset-binary",
    "-sp-varint",
    "-sp-strict",
];
/// Extension keys allowed in `meta`.
pub const META_SP_KEYS: &[&str] = &["-sp-strict"];

mod bits;
mod endian;
mod state;

use state::is_ident;
pub(crate) use state::Lower;

/// Why the text of a case key `text` is not a key: it does not parse (the parser's words), it
/// names something (`AHEM` is not even a valid name; `ahem` is unknown, since keys are
/// constants), or it is an expression of another kind. `what` names the switch in the message
/// (`a switch type`, `meta.endian`).
pub(super) fn bad_case_key(text: &str, what: &str) -> String {
    match expr::parse(text) {
        Err(e) => format!("cannot parse the case key `{text}` of {what}: {e}"),
        Ok(Expr::Name(n)) if !is_ident(&n) => format!(
            "case key `{text}` is not a valid name (a name is lower-case letters, digits and `_`, starting with a letter) and not a literal"
        ),
        Ok(Expr::Name(_)) => format!(
            "case key `{text}` is an unknown name: the keys of {what} are constants (an integer, an enum value, a string, a byte array or a condition)"
        ),
        Ok(_) => format!(
            "case key `{text}` is not an integer, an enum value, a string, a byte array or a condition literal"
        ),
    }
}

impl<'a> Lower<'a> {
    /// Lowers a whole schema.
    pub fn schema(&mut self, root: &Node) -> Option<Schema> {
        let top = self.map(root, "", "the schema")?;
        let mut id = None;
        let mut title = None;
        let mut endian = None;
        let mut root_fields = Vec::new();
        let mut root_doc = None;
        let mut types = Vec::new();
        let mut enums = Vec::new();
        let mut have_seq = false;
        let mut column_sets = Vec::new();
        let mut root_instances = Vec::new();
        let mut root_positional = Vec::new();
        let mut imports = Vec::new();
        let mut root_params = Vec::new();
        let mut root_to_string = None;
        let mut opaque_types = false;
        let mut root_endian_switch = None;
        // Set when `meta` or its `id` is present but wrong (already reported).
        let mut id_reported = false;
        // `meta` first: its endian and encoding are defaults for every field.
        let ordered = top
            .iter()
            .filter(|(k, _)| k.text == "meta")
            .chain(top.iter().filter(|(k, _)| k.text != "meta"));
        for (k, v) in ordered {
            if k.text != "meta" && self.default_endian.is_none() {
                self.default_endian = endian;
            }
            match k.text.as_str() {
                "meta" => {
                    let meta = self.map(v, "meta", "`meta`");
                    id_reported |= meta.is_none();
                    if let Some(meta) = meta {
                        for (mk, mv) in meta {
                            let kp = format!("meta.{}", mk.text);
                            match mk.text.as_str() {
                                "id" => {
                                    id_reported = true;
                                    if let Some(s) = self.scalar(mv, &kp) {
                                        if is_ident(s) {
                                            id = Some(s.to_owned());
                                        } else {
                                            self.err(mv.pos, &kp, format!("`{s}` is not a valid id"), "ids are lower_snake_case: letters, digits and `_`, starting with a letter");
                                        }
                                    }
                                }
                                "title" => title = self.scalar(mv, &kp).map(str::to_owned),
                                "endian" if matches!(mv.kind, NodeKind::Map(_)) => {
                                    root_endian_switch = endian::parse(self, mv, &kp);
                                    endian = Some(Endian::Computed);
                                }
                                "endian" => match self.scalar(mv, &kp) {
                                    Some("le") => endian = Some(Endian::Le),
                                    Some("be") => endian = Some(Endian::Be),
                                    Some(o) => self.err(mv.pos, &kp, format!("endian `{o}` is not `le` or `be`"), "write `endian: le`, `endian: be`, or `endian: {switch-on: <expression>, cases: {<key>: le, _: be}}`"),
                                    None => {}
                                },
                                "bit-endian" => match self.scalar(mv, &kp) {
                                    Some("be") => self.bit_le = false,
                                    Some("le") => self.bit_le = true,
                                    Some(o) => self.err(mv.pos, &kp, format!("bit-endian `{o}` is not `be` or `le`"), "write `bit-endian: be` (MSB-first)"),
                                    None => {}
                                },
                                "encoding" => {
                                    if let Some(s) = self.scalar(mv, &kp) {
                                        self.default_encoding = self.encoding(s, mv.pos, &kp);
                                    }
                                }
                                "ks-version" => {
                                    if let NodeKind::Scalar { text, quoted } = &mv.kind {
                                        if let Err((m, h)) = crate::version::check_ks_version(text, *quoted) {
                                            self.err(mv.pos, &kp, m, h);
                                        }
                                    } else {
                                        self.err(mv.pos, &kp, format!("`ks-version` must be a version such as `0.11`, found {}", mv.shape()), "write `ks-version: '0.11'`");
                                    }
                                }
                                "-sp-strict" => {
                                    if let Some(b) = self.boolean(mv, &kp) {
                                        self.strict = b;
                                    }
                                }
                                "ks-opaque-types" => {
                                    if let Some(b) = self.boolean(mv, &kp) {
                                        opaque_types = b;
                                    }
                                }
                                "imports" => {
                                    if let NodeKind::Seq(items) = &mv.kind {
                                        for (i, it) in items.iter().enumerate() {
                                            if let Some(name) = self.scalar(it, &format!("{kp}[{i}]")) {
                                                imports.push((name.to_owned(), it.pos));
                                            }
                                        }
                                    } else {
                                        self.err(mv.pos, &kp, format!("`imports` must be a list, found {}", mv.shape()), "write `imports: [other_schema, ../dir/third]`");
                                    }
                                }
                                t if META_KEYS.contains(&t) => {}
                                _ => self.unknown_key(mk, "meta", META_KEYS, META_SP_KEYS),
                            }
                        }
                    }
                }
                "doc" => root_doc = self.scalar(v, "doc").map(str::to_owned),
                "doc-ref" => {}
                "seq" => {
                    have_seq = true;
                    root_fields = self.seq(v, "seq");
                }
                "types" => {
                    if let Some(m) = self.map(v, "types", "`types`") {
                        for (tk, tv) in m {
                            self.type_def(tk, tv, "types", &[], &mut types, &mut enums);
                        }
                    }
                }
                "enums" => {
                    if let Some(m) = self.map(v, "enums", "`enums`") {
                        for (ek, ev) in m {
                            if let Some(e) = self.enum_def(ek, ev, "enums", &[]) {
                                enums.push(e);
                            }
                        }
                    }
                }
                "-sp-column-sets" => {
                    column_sets = crate::columns::lower(v, self.file, &mut self.diags);
                }
                "instances" => {
                    root_instances = self.instances(v, "instances", &mut root_positional)
                }
                "params" => root_params = self.params(v, "params"),
                "to-string" => root_to_string = self.src_expr(v, "to-string"),
                t if t.starts_with('-') && !t.starts_with("-sp-") => {}
                _ => self.unknown_key(k, "", TOP_KEYS, TOP_SP_KEYS),
            }
        }
        let Some(id) = id else {
            if id_reported {
                return None;
            }
            self.err(
                root.pos,
                "meta.id",
                "the schema has no `meta.id`",
                "add `meta:` with `id: <snake_case_name>`; it names the root type",
            );
            return None;
        };
        // As in Kaitai Struct, a schema without a top-level `seq` has an empty root type (a
        // schema of types for others to import, or of instances only).
        let _ = have_seq;
        let mut all = vec![TypeDef {
            id: TypeId(0),
            name: id.clone(),
            schema_name: id.clone(),
            scope: Vec::new(),
            file: String::new(),
            doc: root_doc,
            pos: root.pos,
            key_path: String::new(),
            fields: crate::instances::merge(root_fields, root_positional, &root_instances),
            instances: root_instances,
            params: root_params,
            endian_switch: root_endian_switch,
            endian_inherited: false,
            to_string: root_to_string,
            end_zeros: None,
        }];
        all.extend(types);
        Some(Schema {
            id,
            file: self.file.to_owned(),
            title,
            endian,
            types: all,
            enums,
            column_sets,
            strict: self.strict,
            imports,
            opaque_types,
            opaque: Vec::new(),
            warnings: Vec::new(),
            names: Default::default(),
        })
    }

    fn encoding(&mut self, s: &str, pos: Pos, kp: &str) -> Option<&'static str> {
        let up = s.to_ascii_uppercase().replace('_', "-");
        Some(match up.as_str() {
            "UTF-8" | "UTF8" => "UTF-8",
            "ASCII" | "US-ASCII" => "ASCII",
            "UTF-16LE" => "UTF-16LE",
            "UTF-16BE" => "UTF-16BE",
            "SJIS" | "SHIFT-JIS" | "CP932" | "MS932" => "SHIFT_JIS",
            "IBM437" | "CP437" => "IBM437",
            "ISO-8859-1" | "LATIN1" | "ISO8859-1" => "ISO-8859-1",
            "ISO-8859-2" => "ISO-8859-2",
            "ISO-8859-3" => "ISO-8859-3",
            "ISO-8859-4" => "ISO-8859-4",
            "ISO-8859-5" => "ISO-8859-5",
            "ISO-8859-6" => "ISO-8859-6",
            "ISO-8859-7" => "ISO-8859-7",
            "ISO-8859-8" => "ISO-8859-8",
            "ISO-8859-10" => "ISO-8859-10",
            "ISO-8859-13" => "ISO-8859-13",
            "ISO-8859-14" => "ISO-8859-14",
            "ISO-8859-15" => "ISO-8859-15",
            "ISO-8859-16" => "ISO-8859-16",
            "WINDOWS-1250" | "CP1250" => "windows-1250",
            "WINDOWS-1251" | "CP1251" => "windows-1251",
            "WINDOWS-1252" | "CP1252" => "windows-1252",
            "WINDOWS-1253" | "CP1253" => "windows-1253",
            "WINDOWS-1254" | "CP1254" => "windows-1254",
            "WINDOWS-1255" | "CP1255" => "windows-1255",
            "WINDOWS-1256" | "CP1256" => "windows-1256",
            "WINDOWS-1257" | "CP1257" => "windows-1257",
            "WINDOWS-1258" | "CP1258" => "windows-1258",
            "KOI8-R" => "KOI8-R",
            "KOI8-U" => "KOI8-U",
            "EUC-JP" => "EUC-JP",
            "EUC-KR" => "EUC-KR",
            "GBK" | "GB2312" => "GBK",
            "BIG5" => "Big5",
            _ => {
                // As in Kaitai Struct: accepted with a warning; the generated reader and
                // writer refuse the field when they meet it (`BadString`, "unknown
                // encoding"), and a schema that never reaches it reads the rest.
                self.warnings.push(crate::diag::Diag::warn(
                    self.file,
                    pos,
                    kp,
                    format!("unknown encoding `{s}`: reading or writing this text fails"),
                    "use UTF-8, ASCII, UTF-16LE/BE, ISO-8859-x, windows-125x, SJIS, IBM437, KOI8-R/U, EUC-JP, EUC-KR, GBK or Big5",
                ));
                crate::sem::intern(s)
            }
        })
    }

    /// Lowers one type and, after it, the types nested in it (depth first); its enums and
    /// theirs go to `enums`. `prefix` is the key path of the `types` mapping, `outer` the
    /// scope of the enclosing type.
    fn type_def(
        &mut self,
        key: &Key,
        node: &Node,
        prefix: &str,
        outer: &[String],
        types: &mut Vec<TypeDef>,
        enums: &mut Vec<EnumDef>,
    ) {
        let kp = format!("{prefix}.{}", key.text);
        let mut scope = outer.to_vec();
        scope.push(key.text.clone());
        if !is_ident(&key.text) {
            self.err(
                key.pos,
                &kp,
                format!("`{}` is not a valid type name", key.text),
                "type names are lower_snake_case",
            );
        }
        let Some(m) = self.map(node, &kp, "a type") else {
            return;
        };
        // A type's own `meta` (`endian`, `encoding`, `bit-endian`) sets the defaults for its
        // fields and the types nested in it.
        let saved = (self.default_endian, self.default_encoding, self.bit_le);
        // Numbers of a type nested in one whose byte order is a switch take the decided order
        // from the field reading them, unless the type has a `meta.endian` of its own.
        let mut endian_inherited = self.default_endian == Some(Endian::Computed);
        let mut endian_switch = None;
        if let Some((_, meta)) = m.iter().find(|(k, _)| k.text == "meta") {
            let mp = format!("{kp}.meta");
            if let Some(mm) = self.map(meta, &mp, "`meta`") {
                for (mk, mv) in mm {
                    let p = format!("{mp}.{}", mk.text);
                    if mk.text == "endian" {
                        endian_inherited = false;
                    }
                    match mk.text.as_str() {
                        "endian" if matches!(mv.kind, NodeKind::Map(_)) => {
                            endian_switch = endian::parse(self, mv, &p);
                            self.default_endian = Some(Endian::Computed);
                        }
                        "endian" => match self.scalar(mv, &p) {
                            Some("le") => self.default_endian = Some(Endian::Le),
                            Some("be") => self.default_endian = Some(Endian::Be),
                            Some(o) => self.err(
                                mv.pos,
                                &p,
                                format!("endian `{o}` is not `le` or `be`"),
                                "write `endian: le`, `endian: be`, or `endian: {switch-on: <expression>, cases: {<key>: le, _: be}}`",
                            ),
                            None => {}
                        },
                        "encoding" => {
                            if let Some(e) = self.scalar(mv, &p) {
                                self.default_encoding = self.encoding(e, mv.pos, &p);
                            }
                        }
                        "bit-endian" => match self.scalar(mv, &p) {
                            Some("be") => self.bit_le = false,
                            Some("le") => self.bit_le = true,
                            Some(o) => self.err(
                                mv.pos,
                                &p,
                                format!("bit-endian `{o}` is not `be` or `le`"),
                                "write `bit-endian: be` (MSB-first)",
                            ),
                            None => {}
                        },
                        _ => self.unknown_key(mk, &mp, &["endian", "encoding", "bit-endian"], &[]),
                    }
                }
            }
        }
        let mut doc = None;
        let mut fields = Vec::new();
        let mut instances = Vec::new();
        let mut positional = Vec::new();
        let mut params = Vec::new();
        let mut to_string = None;
        let mut end_zeros = None;
        let at = types.len();
        for (k, v) in m {
            match k.text.as_str() {
                "params" => params = self.params(v, &format!("{kp}.params")),
                "seq" => fields = self.seq(v, &format!("{kp}.seq")),
                "instances" => {
                    instances = self.instances(v, &format!("{kp}.instances"), &mut positional)
                }
                "doc" => doc = self.scalar(v, &format!("{kp}.doc")).map(str::to_owned),
                "to-string" => to_string = self.src_expr(v, &format!("{kp}.to-string")),
                "-sp-end-zeros" => {
                    end_zeros = self.small_count(v, &format!("{kp}.-sp-end-zeros"), 0)
                }
                "doc-ref" | "meta" => {}
                "types" => {
                    let np = format!("{kp}.types");
                    if let Some(nm) = self.map(v, &np, "`types`") {
                        for (tk, tv) in nm {
                            self.type_def(tk, tv, &np, &scope, types, enums);
                        }
                    }
                }
                "enums" => {
                    let np = format!("{kp}.enums");
                    if let Some(nm) = self.map(v, &np, "`enums`") {
                        for (ek, ev) in nm {
                            if let Some(e) = self.enum_def(ek, ev, &np, &scope) {
                                enums.push(e);
                            }
                        }
                    }
                }
                t if t.starts_with('-') && !t.starts_with("-sp-") => {}
                _ => self.unknown_key(k, &kp, TYPE_KEYS, TYPE_SP_KEYS),
            }
        }
        (self.default_endian, self.default_encoding, self.bit_le) = saved;
        // The type goes before the types nested in it.
        types.insert(
            at,
            TypeDef {
                id: TypeId(0),
                name: key.text.clone(),
                schema_name: key.text.clone(),
                scope,
                file: String::new(),
                doc,
                pos: key.pos,
                key_path: kp,
                fields: crate::instances::merge(fields, positional, &instances),
                instances,
                params,
                endian_switch,
                endian_inherited,
                to_string,
                end_zeros,
            },
        );
    }

    fn enum_def(
        &mut self,
        key: &Key,
        node: &Node,
        prefix: &str,
        scope: &[String],
    ) -> Option<EnumDef> {
        let kp = format!("{prefix}.{}", key.text);
        if !is_ident(&key.text) {
            self.err(
                key.pos,
                &kp,
                format!("`{}` is not a valid enum name", key.text),
                "enum names are lower_snake_case",
            );
        }
        let m = self.map(node, &kp, "an enum")?;
        let mut values: Vec<EnumValue> = Vec::new();
        for (k, v) in m {
            if k.text.starts_with('-') && expr::parse_int_literal(&k.text).is_none() {
                continue;
            }
            let vp = format!("{kp}.{}", k.text);
            let Some(num) = expr::parse_int_literal(&k.text) else {
                self.err(
                    k.pos,
                    &vp,
                    format!("enum key `{}` is not an integer", k.text),
                    "enum keys are the stored integers, e.g. `4: absolute`",
                );
                continue;
            };
            let (name, doc) = match &v.kind {
                NodeKind::Scalar {
                    text,
                    quoted: false,
                } if matches!(text.as_str(), "null" | "Null" | "NULL" | "~" | "") => {
                    self.err(
                        v.pos,
                        &vp,
                        "enum value is null (YAML reads an unquoted `null`, `~` or nothing as no value)",
                        "quote the name (`4: 'null'`) or give it another one",
                    );
                    continue;
                }
                NodeKind::Scalar { text, .. } => (text.clone(), None),
                NodeKind::Map(entries) => {
                    let mut id = None;
                    let mut doc = None;
                    for (ek, ev) in entries {
                        match ek.text.as_str() {
                            "id" => id = ev.as_str().map(str::to_owned),
                            "doc" => doc = ev.as_str().map(str::to_owned),
                            "doc-ref" => {}
                            _ => self.unknown_key(ek, &vp, &["id", "doc", "doc-ref"], &[]),
                        }
                    }
                    match id {
                        Some(id) => (id, doc),
                        None => {
                            self.err(
                                v.pos,
                                &vp,
                                "enum value has no `id`",
                                "write `4: absolute` or `4: {id: absolute, doc: ...}`",
                            );
                            continue;
                        }
                    }
                }
                NodeKind::Seq(_) => {
                    self.err(
                        v.pos,
                        &vp,
                        "enum value must be a name",
                        "write `4: absolute`",
                    );
                    continue;
                }
            };
            if !is_ident(&name) {
                self.err(
                    v.pos,
                    &vp,
                    format!("`{name}` is not a valid enum value name"),
                    "enum value names are lower_snake_case",
                );
                continue;
            }
            if let Some(first) = values.iter().find(|x| x.name == name).map(|x| x.pos) {
                self.err_twice(
                    v.pos,
                    first,
                    &vp,
                    format!("enum value name `{name}` is used twice"),
                    "give each value its own name",
                );
                continue;
            }
            values.push(EnumValue {
                value: num,
                name,
                doc,
                pos: v.pos,
            });
        }
        if values.is_empty() {
            self.err(
                node.pos,
                &kp,
                "enum has no values",
                "add `<integer>: <name>` entries",
            );
        }
        Some(EnumDef {
            id: EnumId(0),
            name: key.text.clone(),
            schema_name: key.text.clone(),
            scope: scope.to_vec(),
            pos: key.pos,
            values,
        })
    }

    /// Lowers an `instances` mapping: value instances, and positional ones as fields (with
    /// [`Field::at`]) into `positional`.
    fn instances(&mut self, node: &Node, kp: &str, positional: &mut Vec<Field>) -> Vec<Instance> {
        let Some(m) = self.map(node, kp, "`instances`") else {
            return Vec::new();
        };
        let mut out: Vec<Instance> = Vec::new();
        let mut no_pos: Option<&Key> = None;
        for (k, v) in m {
            let ip = format!("{kp}.{}", k.text);
            if !is_ident(&k.text) {
                self.err(
                    k.pos,
                    &ip,
                    format!("`{}` is not a valid instance name", k.text),
                    "instance names are lower_snake_case",
                );
                continue;
            }
            let Some(im) = self.map(v, &ip, "an instance") else {
                continue;
            };
            let get = |name: &str| im.iter().find(|(k, _)| k.text == name).map(|(_, v)| v);
            if get("value").is_none()
                && im
                    .iter()
                    .any(|(k, _)| POSITIONAL_KEYS.contains(&k.text.as_str()))
            {
                if get("pos").is_none() {
                    // Kaitai Struct reads a second instance without `pos` where the first one's
                    // read ended, if it is used after it: the value depends on the order of use.
                    if let Some(first) = no_pos {
                        self.err(
                            k.pos,
                            &ip,
                            format!("a second instance without `pos` in one type (the first is `{}`)", first.text),
                            "give every instance but one a `pos` (`pos: _io.pos` reads where the `seq` ends)",
                        );
                        continue;
                    }
                    no_pos = Some(k);
                }
                if let Some(f) = lower_positional(self, k, v, im, &ip) {
                    positional.push(f);
                }
                continue;
            }
            for (ik, _) in im {
                if !INSTANCE_KEYS.contains(&ik.text.as_str()) {
                    self.unknown_key(ik, &ip, INSTANCE_KEYS, &[]);
                }
            }
            let Some(vn) = get("value") else {
                self.err(
                    v.pos,
                    &ip,
                    "instance has no `value`",
                    "add `value: <expression>`",
                );
                continue;
            };
            let Some(value) = self.src_expr(vn, &format!("{ip}.value")) else {
                continue;
            };
            let cond = match get("if") {
                Some(c) => match self.src_expr(c, &format!("{ip}.if")) {
                    Some(c) => Some(c),
                    None => continue,
                },
                None => None,
            };
            let enum_name = match get("enum") {
                Some(e) => match self.scalar(e, &format!("{ip}.enum")) {
                    Some(e) => Some(EnumRef::Named(e.to_owned())),
                    None => continue,
                },
                None => None,
            };
            out.push(Instance {
                id: k.text.clone(),
                doc: get("doc").and_then(|d| d.as_str()).map(str::to_owned),
                pos: k.pos,
                key_path: ip,
                value,
                cond,
                enum_name,
            });
        }
        out
    }

    fn seq(&mut self, node: &Node, kp: &str) -> Vec<Field> {
        let Some(items) = node.as_seq() else {
            self.err(
                node.pos,
                kp,
                format!("`seq` must be a list, found {}", node.shape()),
                "write each field as a `- id: ...` list item",
            );
            return Vec::new();
        };
        let mut out: Vec<Field> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let fp = format!("{kp}[{i}]");
            if let Some(f) = self.field(item, &fp) {
                if let Some(first) = out.iter().find(|o| o.id == f.id).map(|o| o.pos) {
                    self.err_twice(
                        f.pos,
                        first,
                        &fp,
                        format!("field id `{}` is used twice in this type", f.id),
                        "give each field its own id",
                    );
                    continue;
                }
                out.push(f);
            }
        }
        out
    }

    fn int_type(name: &str, default: Option<Endian>) -> Option<(bool, u8, Option<Endian>, bool)> {
        // returns (is_float, bytes, endian, signed)
        let (base, endian) = if let Some(b) = name.strip_suffix("le") {
            (b, Some(Endian::Le))
        } else if let Some(b) = name.strip_suffix("be") {
            (b, Some(Endian::Be))
        } else {
            (name, default)
        };
        let (kind, width) = base.split_at_checked(1)?;
        let bytes: u8 = match width {
            "1" => 1,
            "2" => 2,
            "4" => 4,
            "8" => 8,
            _ => return None,
        };
        match kind {
            "u" => Some((false, bytes, endian, false)),
            "s" => Some((false, bytes, endian, true)),
            "f" if bytes >= 4 => Some((true, bytes, endian, true)),
            _ => None,
        }
    }

    /// A switch case's type name with a number type made explicit (`u2` under `endian: le`
    /// is `u2le`; see `crate::num_type::case_number`); other names unchanged. `None` (reported) for a
    /// multi-byte number type without a byte order.
    fn case_number_type(&mut self, tn: &str, pos: Pos, kp: &str) -> Option<String> {
        let Some((float, bytes, endian, signed)) = Self::int_type(tn, self.default_endian) else {
            return Some(tn.to_owned());
        };
        let base = format!(
            "{}{}",
            if float {
                'f'
            } else if signed {
                's'
            } else {
                'u'
            },
            bytes
        );
        if bytes == 1 {
            return Some(base);
        }
        match endian {
            Some(Endian::Le) => Some(format!("{base}le")),
            Some(Endian::Be) => Some(format!("{base}be")),
            Some(Endian::Computed) => {
                self.err(
                    pos,
                    kp,
                    format!("case type `{tn}` takes its byte order from a `meta.endian` switch, which a switch of number types cannot follow"),
                    format!("write `{base}le` or `{base}be`"),
                );
                None
            }
            None => {
                self.err(
                    pos,
                    kp,
                    format!("case type `{tn}` needs a byte order"),
                    format!("write `{base}le` or `{base}be`, or set `meta.endian`"),
                );
                None
            }
        }
    }

    /// The field's size, if it has one; `Err` when the size keys are wrong (already reported).
    fn size_of(&mut self, m: &[(Key, Node)], fp: &str) -> Result<Option<Size>, ()> {
        let size = m.iter().find(|(k, _)| k.text == "size");
        let eos = m.iter().find(|(k, _)| k.text == "size-eos");
        match (size, eos) {
            (Some((k, _)), Some(_)) => {
                self.err(
                    k.pos,
                    &format!("{fp}.size"),
                    "both `size` and `size-eos` are given",
                    "keep only one of them",
                );
                Err(())
            }
            (Some((_, v)), None) => match self.src_expr(v, &format!("{fp}.size")) {
                Some(e) => Ok(Some(Size::Expr(e))),
                None => Err(()),
            },
            (None, Some((_, v))) => match self.boolean(v, &format!("{fp}.size-eos")) {
                Some(true) => Ok(Some(Size::Eos)),
                Some(false) => Ok(None),
                None => Err(()),
            },
            (None, None) => Ok(None),
        }
    }

    /// Lowers a type's `params` list: entries `{id, type, enum, doc}`.
    fn params(&mut self, node: &Node, kp: &str) -> Vec<Param> {
        let NodeKind::Seq(items) = &node.kind else {
            self.err(
                node.pos,
                kp,
                format!("`params` must be a list, found {}", node.shape()),
                "write `params: [{id: len, type: u4}]`",
            );
            return Vec::new();
        };
        let mut out: Vec<Param> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let ip = format!("{kp}[{i}]");
            let Some(m) = self.map(item, &ip, "a param") else {
                continue;
            };
            let get = |name: &str| m.iter().find(|(k, _)| k.text == name).map(|(_, v)| v);
            for (k, _) in m {
                if !["id", "type", "enum", "doc", "doc-ref"].contains(&k.text.as_str()) {
                    self.unknown_key(k, &ip, &["id", "type", "enum", "doc", "doc-ref"], &[]);
                }
            }
            let Some(id) = get("id")
                .and_then(|v| self.scalar(v, &format!("{ip}.id")))
                .map(str::to_owned)
            else {
                self.err(
                    item.pos,
                    &ip,
                    "a param without `id`",
                    "give it `id: <snake_case_name>`",
                );
                continue;
            };
            if !is_ident(&id) || out.iter().any(|p| p.id == id) {
                self.err(
                    item.pos,
                    &format!("{ip}.id"),
                    if is_ident(&id) {
                        format!("duplicate param `{id}`: another param of this type already has that name")
                    } else {
                        format!("`{id}` is not a valid param name")
                    },
                    "params are lower_snake_case and distinct",
                );
                continue;
            }
            let ty = get("type").and_then(|v| v.as_str()).unwrap_or("");
            let en = get("enum").and_then(|v| v.as_str()).map(str::to_owned);
            let kind = match (ty, en) {
                (t, Some(e))
                    if Self::int_type(t, Some(Endian::Le)).is_some_and(|x| !x.0)
                        || crate::bits::bit_type(t).is_some() =>
                {
                    ParamKind::Enum(EnumRef::Named(e))
                }
                ("bool" | "b1", None) => ParamKind::Bool,
                ("str" | "strz", None) => ParamKind::Str,
                ("bytes", None) => ParamKind::Bytes,
                ("f4" | "f8", None) => ParamKind::Float,
                (t, None)
                    if Self::int_type(t, Some(Endian::Le)).is_some()
                        || crate::bits::bit_type(t).is_some() =>
                {
                    ParamKind::Int
                }
                (t, None) if Self::param_elem_kind(t).is_some() => {
                    Self::param_elem_kind(t).unwrap_or(ParamKind::Struct)
                }
                (t, None)
                    if t.strip_suffix("[]")
                        .and_then(Self::param_elem_kind)
                        .is_some() =>
                {
                    ParamKind::List(Box::new(
                        t.strip_suffix("[]")
                            .and_then(Self::param_elem_kind)
                            .unwrap_or(ParamKind::Struct),
                    ))
                }
                (t, _) => {
                    self.err(get("type").map_or(item.pos, |v| v.pos), &format!("{ip}.type"), format!("param type `{t}` is not supported"), "params may be integers (`u1`..`s8`, `bN`), `bool`, `f4`/`f8`, `str`, `bytes`, an integer with `enum`, a user type, `struct` (any user type), `io` (a stream), or a list of one of these (`u2[]`, `block[]`, `io[]`)");
                    continue;
                }
            };
            let doc = get("doc").and_then(|v| v.as_str()).map(str::to_owned);
            out.push(Param {
                id,
                doc,
                pos: item.pos,
                kind,
                context: None,
                optional: false,
            });
        }
        out
    }

    /// The kind of a param written as `t` without `enum` (also the element of `t[]`): a
    /// number type, `bool`, `str`, `bytes`, `struct` or a user type name (checked when
    /// names are resolved). `None` for what no param can be (`io` and other keywords).
    fn param_elem_kind(t: &str) -> Option<ParamKind> {
        Some(match t {
            "bool" | "b1" => ParamKind::Bool,
            "str" | "strz" => ParamKind::Str,
            "bytes" => ParamKind::Bytes,
            "f4" | "f8" => ParamKind::Float,
            "struct" => ParamKind::Struct,
            "io" => ParamKind::Io,
            "any" => return None,
            t if Self::int_type(t, Some(Endian::Le)).is_some()
                || crate::bits::bit_type(t).is_some() =>
            {
                ParamKind::Int
            }
            t if !t.is_empty() && t.split("::").all(|p| is_ident(p)) => {
                ParamKind::User(TypeRef::Named(t.to_owned()))
            }
            _ => return None,
        })
    }

    pub(crate) fn field(&mut self, node: &Node, fp: &str) -> Option<Field> {
        let m = self.map(node, fp, "a seq entry")?;
        let get = |name: &str| m.iter().find(|(k, _)| k.text == name).map(|(_, v)| v);
        for (k, _) in m {
            let t = k.text.as_str();
            if !(FIELD_KEYS.contains(&t)
                || FIELD_SP_KEYS.contains(&t)
                || (t.starts_with('-') && !t.starts_with("-sp-")))
            {
                self.unknown_key(k, fp, FIELD_KEYS, FIELD_SP_KEYS);
            }
        }
        let id = match get("id") {
            Some(v) => {
                let s = self.scalar(v, &format!("{fp}.id"))?;
                if !is_ident(s) {
                    self.err(v.pos, &format!("{fp}.id"), format!("`{s}` is not a valid field id"), "field ids are lower_snake_case: letters, digits and `_`, starting with a letter");
                    return None;
                }
                s.to_owned()
            }
            None => {
                // As in Kaitai Struct, an unnamed field is `_unnamed<index>`; expressions
                // cannot name it.
                match fp.rsplit_once('[').and_then(|(_, i)| i.strip_suffix(']')) {
                    Some(i) if i.bytes().all(|b| b.is_ascii_digit()) => format!("_unnamed{i}"),
                    _ => {
                        self.err(
                            node.pos,
                            fp,
                            "field has no `id`",
                            "add `id: <snake_case_name>`",
                        );
                        return None;
                    }
                }
            }
        };
        let doc = get("doc").and_then(|v| v.as_str()).map(str::to_owned);
        let units = get("-sp-units")
            .and_then(|v| self.scalar(v, &format!("{fp}.-sp-units")))
            .map(str::to_owned);
        let sum_of = match get("-sp-sum-of") {
            Some(v) => {
                let kp = format!("{fp}.-sp-sum-of");
                let s = self.scalar(v, &kp)?;
                match s.split_once('.') {
                    Some((a, b)) if is_ident(a) && is_ident(b) => {
                        Some((a.to_owned(), b.to_owned(), v.pos))
                    }
                    _ => {
                        self.err(
                            v.pos,
                            &kp,
                            format!("`{s}` is not `<list field>.<field>`"),
                            "write e.g. `-sp-sum-of: frames.dt_ms`",
                        );
                        None
                    }
                }
            }
            None => None,
        };
        let boxed = match get("-sp-box") {
            Some(v) => Some((self.boolean(v, &format!("{fp}.-sp-box"))?, v.pos)),
            None => None,
        };
        let cond = match get("if") {
            Some(v) => Some(self.src_expr(v, &format!("{fp}.if"))?),
            None => None,
        };
        // Kaitai Struct refuses the count key of another repeat kind.
        if let Some(kind) = get("repeat").and_then(|v| v.as_str()) {
            for (k, owner) in [("repeat-expr", "expr"), ("repeat-until", "until")] {
                if let (Some(v), true) = (get(k), kind != owner) {
                    self.err(
                        v.pos,
                        &format!("{fp}.{k}"),
                        format!("key `{k}` does not apply to `repeat: {kind}`"),
                        format!("remove `{k}`, or write `repeat: {owner}`"),
                    );
                }
            }
        }
        let repeat = match get("repeat").map(|v| (v, v.as_str())) {
            None => {
                for k in ["repeat-expr", "repeat-until"] {
                    if let Some(v) = get(k) {
                        self.err(
                            v.pos,
                            &format!("{fp}.{k}"),
                            format!("`{k}` without `repeat`"),
                            format!("add `repeat: {}`", &k[7..]),
                        );
                    }
                }
                Repeat::None
            }
            Some((v, Some("expr"))) => match get("repeat-expr") {
                Some(e) => Repeat::Expr(self.src_expr(e, &format!("{fp}.repeat-expr"))?),
                None => {
                    self.err(
                        v.pos,
                        &format!("{fp}.repeat"),
                        "`repeat: expr` needs `repeat-expr`",
                        "add `repeat-expr: <count expression>`",
                    );
                    return None;
                }
            },
            Some((v, Some("until"))) => match get("repeat-until") {
                Some(e) => Repeat::Until(self.src_expr(e, &format!("{fp}.repeat-until"))?),
                None => {
                    self.err(
                        v.pos,
                        &format!("{fp}.repeat"),
                        "`repeat: until` needs `repeat-until`",
                        "add `repeat-until: <condition on _>`",
                    );
                    return None;
                }
            },
            Some((_, Some("eos"))) => Repeat::Eos,
            Some((v, _)) => {
                self.err(
                    v.pos,
                    &format!("{fp}.repeat"),
                    "`repeat` must be `expr`, `eos` or `until`",
                    "write one of `repeat: expr`, `repeat: eos`, `repeat: until`",
                );
                return None;
            }
        };
        let valid = match get("valid") {
            None => None,
            Some(v) => Some(self.valid(v, &format!("{fp}.valid"))?),
        };
        let enum_name = get("enum")
            .and_then(|v| self.scalar(v, &format!("{fp}.enum")))
            .map(str::to_owned);
        let size = self.size_of(m, fp).ok()?;
        let has_size = size.is_some();
        let encoding = match get("encoding") {
            Some(v) => {
                let kp = format!("{fp}.encoding");
                let s = self.scalar(v, &kp)?;
                Some(self.encoding(s, v.pos, &kp)?)
            }
            None => None,
        };

        // Terminator and padding keys (strings and raw bytes).
        let term = self.terminator(m, node, fp, encoding, &size)?;
        let process = match get("process") {
            Some(v) => Some(self.process(v, &format!("{fp}.process"))?),
            None => None,
        };
        let mut args: Vec<SrcExpr> = Vec::new();
        let mut switch_args: Vec<(TypeRef, Vec<SrcExpr>)> = Vec::new();
        let kind = if let Some(c) = get("contents") {
            if get("type").is_some() {
                self.err(
                    c.pos,
                    &format!("{fp}.contents"),
                    "`contents` with a `type`",
                    "drop `type`: contents are raw bytes",
                );
                return None;
            }
            FieldKind::Contents(self.contents(c, &format!("{fp}.contents"))?)
        } else {
            match get("type") {
                None => match size {
                    Some(s) => FieldKind::Bytes(s),
                    None if term.is_some() => FieldKind::Bytes(Size::Terminator),
                    None => {
                        self.err(node.pos, fp, format!("field `{id}` has no `type`, `size` or `contents`"), "give it a `type` (u1, s2le, f4, str, a user type ...), or a `size` for raw bytes");
                        return None;
                    }
                },
                Some(tnode) => match &tnode.kind {
                    NodeKind::Map(sw) => {
                        self.switch_type(tnode, sw, fp, (&size, encoding), &mut switch_args)?
                    }
                    _ => {
                        self.named_type(tnode, fp, size, &term, &enum_name, encoding, &mut args)?
                    }
                },
            }
        };
        self.kind_keys_apply(
            m,
            node,
            fp,
            &kind,
            (&enum_name, encoding, has_size),
            boxed,
            &repeat,
        );
        let (kind, varint) = self.bit_keys(m, fp, kind, &repeat)?;
        self.process_applies(
            m,
            node,
            fp,
            process.as_ref(),
            &kind,
            &repeat,
            term.is_some(),
        )?;
        let strict = match get("-sp-strict") {
            Some(v) => self.boolean(v, &format!("{fp}.-sp-strict"))?,
            None => self.strict,
        };
        let parent = match get("parent") {
            None => ParentSpec::Default,
            Some(v) if v.as_str() == Some("false") => ParentSpec::None(v.pos),
            Some(v) => ParentSpec::Expr(self.src_expr(v, &format!("{fp}.parent"))?),
        };
        Some(Field {
            args,
            parent,
            ctx_args: Vec::new(),
            recursive: Vec::new(),
            switch_args,
            process,
            term,
            strict,
            boxed: matches!(boxed, Some((true, _))),
            id,
            doc,
            pos: node.pos,
            key_path: fp.to_owned(),
            value_pos: m.iter().map(|(k, v)| (k.text.clone(), v.pos)).collect(),
            kind,
            switch_enum: String::new(),
            repeat,
            cond,
            valid,
            units,
            sum_of,
            varint,
            at: None,
        })
    }

    /// Reports the keys of field `fp` that its kind does not take: `enum` on a non-integer,
    /// `encoding` on a non-string, `size` on a number, `-sp-box` on what is not one user-type
    /// value. `keys` are the field's `enum`, `encoding` and whether it has a size.
    fn kind_keys_apply(
        &mut self,
        m: &[(Key, Node)],
        node: &Node,
        fp: &str,
        kind: &FieldKind,
        keys: (&Option<String>, Option<&'static str>, bool),
        boxed: Option<(bool, Pos)>,
        repeat: &Repeat,
    ) {
        let (enum_name, encoding, has_size) = keys;
        let get = |name: &str| m.iter().find(|(k, _)| k.text == name).map(|(_, v)| v);
        // These point at the offending key's value, not at the start of the entry.
        let at = |key: &str| get(key).map_or(node.pos, |v| v.pos);
        if enum_name.is_some()
            && !matches!(
                kind,
                FieldKind::Int { .. } | FieldKind::Float { .. } | FieldKind::Bits { .. }
            )
        {
            self.err(
                at("enum"),
                &format!("{fp}.enum"),
                "`enum` on a field that is not an integer",
                "enums apply to integer types only",
            );
        }
        if encoding.is_some() && matches!(kind, FieldKind::Switch { encoding: None, .. }) {
            self.err(
                at("encoding"),
                &format!("{fp}.encoding"),
                "`encoding` on a switch without a `str` or `strz` case",
                "drop `encoding`, or give the switch a string case (`1: strz`)",
            );
        } else if encoding.is_some()
            && !matches!(kind, FieldKind::Str { .. } | FieldKind::Switch { .. })
        {
            self.err(
                at("encoding"),
                &format!("{fp}.encoding"),
                "`encoding` on a field that is not a string",
                "drop `encoding`, or make the field `type: str`",
            );
        }
        if has_size && matches!(kind, FieldKind::Int { .. } | FieldKind::Float { .. }) {
            let key = if get("size").is_some() {
                "size"
            } else {
                "size-eos"
            };
            self.err(
                at(key),
                &format!("{fp}.{key}"),
                "`size` on a number field",
                "number types have their own size; drop `size`",
            );
        }
        if let Some((true, at)) = boxed {
            if !matches!(kind, FieldKind::User { .. }) || !matches!(repeat, Repeat::None) {
                self.err(
                    at,
                    &format!("{fp}.-sp-box"),
                    "`-sp-box` applies only to a single (not repeated) field of a user type",
                    "drop `-sp-box`, or use it on a field whose `type` names a type from `types`",
                );
            }
        }
    }

    /// Checks that `process` applies to field `fp`: raw bytes or a user type with a size (or
    /// `size-eos`), and with a terminator or padding (`terminated`) only a processor that maps
    /// byte to byte. `None` (reported) when it does not.
    #[allow(clippy::too_many_arguments)]
    fn process_applies(
        &mut self,
        m: &[(Key, Node)],
        node: &Node,
        fp: &str,
        process: Option<&Process>,
        kind: &FieldKind,
        repeat: &Repeat,
        terminated: bool,
    ) -> Option<()> {
        let get = |name: &str| m.iter().find(|(k, _)| k.text == name).map(|(_, v)| v);
        if process.is_some() {
            // With a terminator or padding, the bytes before the terminator are processed
            // (see `emit/proc_term.rs`); a switch of user types is processed with a size.
            let ok = matches!(
                (kind, repeat),
                (
                    FieldKind::Bytes(Size::Expr(_) | Size::Eos | Size::Terminator),
                    _
                ) | (FieldKind::User { .. }, _)
            ) && (terminated
                || !matches!(
                    kind,
                    FieldKind::Bytes(Size::Terminator) | FieldKind::User { size: None, .. }
                ))
                || !terminated
                    && matches!(
                        kind,
                        FieldKind::Switch {
                            size: Some(Size::Expr(_) | Size::Eos),
                            ..
                        }
                    );
            let builtin = matches!(kind, FieldKind::Switch { cases, default, .. }
                if cases.iter().map(|(_, n)| n).chain(default.iter()).any(|n| matches!(n, TypeRef::Named(n) if crate::num_type::case_builtin(n))));
            if ok && builtin {
                self.err(
                    get("process").map_or(node.pos, |v| v.pos),
                    &format!("{fp}.process"),
                    "`process` on a switch with a number, `str` or `strz` case is not supported yet",
                    "process a byte field, and read the switch from a type over its bytes",
                );
                return None;
            }
            if !ok {
                self.err(
                    get("process").map_or(node.pos, |v| v.pos),
                    &format!("{fp}.process"),
                    "`process` applies to raw bytes, a user type or a switch of types with a `size` (or `size-eos`), or bytes or a user type with a terminator",
                    "give the field a `size`, or move `process` to the field that holds the bytes",
                );
                return None;
            }
        }
        Some(())
    }

    /// The terminator and padding keys of field `fp` (`terminator`, `include`, `consume`,
    /// `eos-error`, `pad-right`; `strz` implies a terminator): `Some(None)` when it has none,
    /// `None` (reported) when they do not apply to it.
    fn terminator(
        &mut self,
        m: &[(Key, Node)],
        node: &Node,
        fp: &str,
        encoding: Option<&'static str>,
        size: &Option<Size>,
    ) -> Option<Option<TermSpec>> {
        let get = |name: &str| m.iter().find(|(k, _)| k.text == name).map(|(_, v)| v);
        let mut term = None;
        let term_keys = ["terminator", "include", "consume", "eos-error", "pad-right"];
        let is_strz = get("type").and_then(|t| t.as_str()) == Some("strz");
        let wide = is_strz
            && matches!(
                encoding.or(self.default_encoding),
                Some("UTF-16LE" | "UTF-16BE")
            );
        if term_keys.iter().any(|k| get(k).is_some()) || (is_strz && (size.is_some() || wide)) {
            let byte = |me: &mut Self, k: &str| -> Option<Option<u8>> {
                match get(k) {
                    None => Some(None),
                    Some(v) => {
                        let kp = format!("{fp}.{k}");
                        let t = me.scalar(v, &kp)?;
                        match expr::parse_int_literal(t) {
                            Some(b) if (0..=255).contains(&b) => Some(Some(b as u8)),
                            _ => {
                                me.err(
                                    v.pos,
                                    &kp,
                                    format!("`{t}` is not a byte"),
                                    "write a byte value 0..255, e.g. `0` or `0x20`",
                                );
                                None
                            }
                        }
                    }
                }
            };
            let flag = |me: &mut Self, k: &str, default: bool| -> Option<bool> {
                match get(k) {
                    None => Some(default),
                    Some(v) => me.boolean(v, &format!("{fp}.{k}")),
                }
            };
            let terminator = byte(self, "terminator")?.or(is_strz.then_some(0));
            term = Some(TermSpec {
                terminator,
                include: flag(self, "include", false)?,
                consume: flag(self, "consume", true)?,
                eos_error: flag(self, "eos-error", true)?,
                pad_right: byte(self, "pad-right")?,
                width: if wide && get("terminator").is_none() {
                    2
                } else {
                    1
                },
            });
            let t = get("type").and_then(|t| t.as_str());
            let builtin = |t: &str| {
                Self::int_type(t, Some(Endian::Le)).is_some() || crate::bits::bit_type(t).is_some()
            };
            // A user type may be terminated too: its bytes run to the terminator.
            let user = matches!(t, Some(n) if n != "str" && n != "strz" && !builtin(n));
            if !(matches!(t, None | Some("str") | Some("strz")) || user)
                || get("contents").is_some()
            {
                let k = term_keys
                    .iter()
                    .find(|k| get(k).is_some())
                    .copied()
                    .unwrap_or("type");
                self.err(
                    get(k).map_or(node.pos, |v| v.pos),
                    &format!("{fp}.{k}"),
                    format!("`{k}` on a field that is not a string, raw bytes or a user type"),
                    "terminators and padding apply to `str`, `strz`, raw byte fields and user types",
                );
                return None;
            }
            if terminator.is_none() && size.is_none() {
                self.err(
                    node.pos,
                    fp,
                    "a field with `pad-right` but no `terminator` needs a `size`",
                    "add `size`, or a `terminator`",
                );
                return None;
            }
        }
        Some(term)
    }

    /// The `type` of field `fp` given as a switch (`switch-on`, `cases`): its cases, with
    /// the arguments of each case type in `switch_args`. `None` (reported) when unusable.
    fn switch_type(
        &mut self,
        tnode: &Node,
        sw: &[(Key, Node)],
        fp: &str,
        (size, encoding): (&Option<Size>, Option<&'static str>),
        switch_args: &mut Vec<(TypeRef, Vec<SrcExpr>)>,
    ) -> Option<FieldKind> {
        let tp = format!("{fp}.type");
        let reported = self.diags.len();
        let mut on = None;
        let mut cases = Vec::new();
        let mut default = None;
        for (sk, sv) in sw {
            match sk.text.as_str() {
                "switch-on" => on = self.src_expr(sv, &format!("{tp}.switch-on")),
                "cases" => {
                    if let Some(cm) = self.map(sv, &format!("{tp}.cases"), "`cases`") {
                        for (ck, cv) in cm {
                            let cp = format!("{tp}.cases.{}", ck.text);
                            let Some(tn) = self.scalar(cv, &cp) else {
                                continue;
                            };
                            // `block(a, b)`: a case type with `params`.
                            let tn = match tn.split_once('(') {
                                Some((name, rest)) => {
                                    let name = name.trim().to_owned();
                                    let parsed = rest
                                        .strip_suffix(')')
                                        .map(|inner| expr::parse(&format!("[{inner}]")));
                                    let args: Vec<SrcExpr> = match parsed {
                                        Some(Ok(Expr::List(items))) => items
                                            .into_iter()
                                            .map(|e| SrcExpr {
                                                src: e.to_string(),
                                                expr: e,
                                                pos: cv.pos,
                                            })
                                            .collect(),
                                        Some(Err(e)) => {
                                            self.err(
                                                cv.pos,
                                                &cp,
                                                format!("bad arguments in `{tn}`: {e}"),
                                                "arguments are expressions separated by `,`",
                                            );
                                            continue;
                                        }
                                        _ => {
                                            self.err(cv.pos, &cp, format!("cannot parse the type `{tn}`: expected `)` to close its arguments"), "write `name(arg1, arg2)`");
                                            continue;
                                        }
                                    };
                                    match switch_args
                                        .iter()
                                        .find(|(n, _): &&(TypeRef, Vec<SrcExpr>)| matches!(n, TypeRef::Named(n) if *n == name))
                                    {
                                        Some((_, prev))
                                            if prev
                                                .iter()
                                                .map(|a| &a.src)
                                                .ne(args.iter().map(|a| &a.src)) =>
                                        {
                                            self.err(cv.pos, &cp, format!("`{name}` is given other arguments by another case"), "statepack gives a case type the same arguments in every case that names it; use one case with several keys, or two types");
                                            continue;
                                        }
                                        Some(_) => {}
                                        None => switch_args.push((TypeRef::Named(name.clone()), args)),
                                    }
                                    name
                                }
                                None => tn.to_owned(),
                            };
                            let Some(tn) = self.case_number_type(&tn, cv.pos, &cp) else {
                                continue;
                            };
                            let tn = tn.as_str();
                            if ck.text == "_" {
                                default = Some(TypeRef::Named(tn.to_owned()));
                                continue;
                            }
                            match expr::parse(&ck.text) {
                                Ok(e @ (Expr::Int(_) | Expr::EnumRef(_, _) | Expr::Str(_) | Expr::Bool(_))) => cases.push((SrcExpr { expr: e, src: ck.text.clone(), pos: ck.pos }, TypeRef::Named(tn.to_owned()))),
                                // A byte-array literal (`'[0x49]'`) for a switch on bytes.
                                Ok(Expr::List(items)) if !items.is_empty() && items.iter().all(|x| matches!(x, Expr::Int(v) if (0..=255).contains(v))) => cases.push((SrcExpr { expr: Expr::List(items), src: ck.text.clone(), pos: ck.pos }, TypeRef::Named(tn.to_owned()))),
                                // Any other expression (`_root.kind_a`, `1 + 2`), as Kaitai
                                // Struct allows: evaluated and compared in the order written
                                // (a bare name must be a valid one).
                                Ok(e) if !matches!(&e, Expr::Name(n) if !is_ident(n)) => cases.push((SrcExpr { expr: e, src: ck.text.clone(), pos: ck.pos }, TypeRef::Named(tn.to_owned()))),
                                _ => self.err(ck.pos, &cp, bad_case_key(&ck.text, "a switch type"), "case keys are expressions: integer literals, `enum_name::value`, string literals (`'\"abc\"'`), byte arrays (`'[0x49]'`), `true`/`false`, names of fields read before the switch, or `_` for the default"),
                            }
                        }
                    }
                }
                _ => self.unknown_key(sk, &tp, &["switch-on", "cases"], &[]),
            }
        }
        // A `switch-on` or `cases` whose problems were reported above is not
        // reported again as missing.
        let Some(on) = on else {
            if !sw.iter().any(|(k, _)| k.text == "switch-on") {
                self.err(
                    tnode.pos,
                    &tp,
                    "a switch type needs `switch-on`",
                    "add `switch-on: <expression>`",
                );
            }
            return None;
        };
        if cases.is_empty() && default.is_none() {
            if self.diags.len() == reported {
                self.err(
                    tnode.pos,
                    &tp,
                    "a switch type needs `cases`",
                    "add `cases:` mapping values to type names",
                );
            }
            return None;
        }
        // A switch may mix number types, `str`/`strz` and user types (`cases: {1: u4, 2:
        // point, 3: strz}`): each case is a variant of the field's switch enum. Only a switch
        // of numbers alone is a number in expressions. With a `size`, the case is read in a
        // substream of that size (numbers and strings alike), and what it leaves unread is
        // kept.
        let strings: Vec<&str> = cases
            .iter()
            .map(|(_, n)| n)
            .chain(default.iter())
            .filter_map(|n| match n {
                TypeRef::Named(n) if crate::num_type::case_string(n).is_some() => Some(n.as_str()),
                _ => None,
            })
            .collect();
        if size.is_none() && strings.contains(&"str") {
            self.err(
                tnode.pos,
                &tp,
                "a `str` case needs the switch's `size` (or `size-eos`)",
                "give the field a `size`, or use `strz` for a zero-terminated string",
            );
            return None;
        }
        let encoding = if strings.is_empty() {
            None
        } else {
            match encoding.or(self.default_encoding) {
                Some(e) => Some(e),
                None => {
                    self.err(
                        tnode.pos,
                        &tp,
                        "a switch with a `str` or `strz` case has no encoding",
                        "add `encoding: UTF-8` to the field or to `meta`",
                    );
                    return None;
                }
            }
        };
        Some(FieldKind::Switch {
            on,
            cases,
            default,
            size: size.clone(),
            encoding,
        })
    }

    /// The `type` of field `fp` given as a name: a number, bit, string or user type (with
    /// its arguments in `args`). `None` (reported) when unusable.
    #[allow(clippy::too_many_arguments)]
    fn named_type(
        &mut self,
        tnode: &Node,
        fp: &str,
        size: Option<Size>,
        term: &Option<TermSpec>,
        enum_name: &Option<String>,
        encoding: Option<&'static str>,
        args: &mut Vec<SrcExpr>,
    ) -> Option<FieldKind> {
        let tp = format!("{fp}.type");
        let mut t = self.scalar(tnode, &tp)?.to_owned();
        // `name(arg, ...)`: a type with `params`.
        if let Some(open) = t.find('(') {
            let inner = t[open + 1..].strip_suffix(')').map(str::to_owned);
            let Some(inner) = inner else {
                self.err(
                    tnode.pos,
                    &tp,
                    format!("cannot parse the type `{t}`: expected `)` to close its arguments"),
                    "write `type: name(arg1, arg2)`",
                );
                return None;
            };
            match expr::parse(&format!("[{inner}]")) {
                Ok(Expr::List(items)) => {
                    *args = items
                        .into_iter()
                        .map(|expr| SrcExpr {
                            src: expr.to_string(),
                            expr,
                            pos: tnode.pos,
                        })
                        .collect();
                }
                Ok(_) => {}
                Err(e) => {
                    self.err(
                        tnode.pos,
                        &tp,
                        format!("bad arguments in `{t}`: {e}"),
                        "arguments are expressions separated by `,`",
                    );
                    return None;
                }
            }
            t = t[..open].trim().to_owned();
        }
        Some(
            if let Some((is_float, bytes, endian, signed)) = Self::int_type(&t, self.default_endian)
            {
                let endian = if bytes == 1 { Some(Endian::Le) } else { endian };
                let endian = match endian {
                    Some(e) => e,
                    None => {
                        self.err(
                            tnode.pos,
                            &tp,
                            format!("`{t}` has no byte order"),
                            format!("set `meta.endian`, or write `{t}le` / `{t}be`"),
                        );
                        Endian::Le
                    }
                };
                if is_float {
                    if enum_name.is_some() {
                        self.err(
                            tnode.pos,
                            &tp,
                            "`enum` on a float",
                            "enums apply to integer types only",
                        );
                    }
                    FieldKind::Float { bytes, endian }
                } else {
                    FieldKind::Int {
                        bytes,
                        signed,
                        endian,
                        enum_name: enum_name.clone().map(EnumRef::Named),
                    }
                }
            } else if t == "str" || t == "strz" {
                let encoding = encoding.or(self.default_encoding).unwrap_or_else(|| {
                    self.err(
                        tnode.pos,
                        &tp,
                        "string field has no encoding",
                        "add `encoding: UTF-8` to the field or to `meta`",
                    );
                    "UTF-8"
                });
                if t == "str" && size.is_none() && term.is_none() {
                    self.err(tnode.pos, &tp, "`type: str` needs `size` or `size-eos`", "add `size: <length field>`, or use `type: strz` for a zero-terminated string");
                }
                if t == "strz" && size.is_some() && term.is_none() {
                    self.err(
                        tnode.pos,
                        &tp,
                        "`strz` with a `size` is not supported",
                        "use `type: str` with `size`, or `strz` alone",
                    );
                }
                FieldKind::Str {
                    size: if t == "str" || term.is_some() {
                        size
                    } else {
                        None
                    },
                    encoding,
                }
            } else if let Some(width) = crate::bits::bit_type(&t) {
                match width {
                    Some(w) => FieldKind::Bits {
                        width: w,
                        offset_binary: false,
                        le: crate::bits::explicit_bit_le(&t).unwrap_or(self.bit_le),
                        enum_name: enum_name.clone().map(EnumRef::Named),
                    },
                    None => {
                        self.err(
                            tnode.pos,
                            &tp,
                            format!("`{t}` is not a bit type of 1 to 64 bits"),
                            "bit types are b1 .. b64 (the `be` bit order of `meta.bit-endian`)",
                        );
                        return None;
                    }
                }
            } else {
                // A name like `u3` is a user type when `types` defines it; else the
                // reference check reports it as a mistyped number type.
                FieldKind::User {
                    ty: TypeRef::Named(t),
                    size,
                }
            },
        )
    }

    /// `process: zlib`, `xor(key)`, `rol(n)`, `ror(n)`.
    fn process(&mut self, node: &Node, kp: &str) -> Option<Process> {
        let text = self.scalar(node, kp)?.trim().to_owned();
        if text == "zlib" {
            return Some(Process::Zlib);
        }
        let parsed = text.split_once('(').and_then(|(name, rest)| {
            rest.strip_suffix(')')
                .map(|arg| (name.trim().to_owned(), arg.trim().to_owned()))
        });
        let Some((name, arg)) = parsed else {
            // A bare name: a custom processor without arguments.
            if Self::processor_name_ok(&text) && !["xor", "rol", "ror"].contains(&text.as_str()) {
                return Some(Process::Custom {
                    name: text,
                    args: Vec::new(),
                });
            }
            self.err(
                node.pos,
                kp,
                format!("`{text}` is not a processor name"),
                "use zlib, xor(key), rol(n), ror(n), or a custom processor `name(args)` (names are snake_case, dotted for nested modules)",
            );
            return None;
        };
        let expr = |me: &mut Self| -> Option<SrcExpr> {
            match expr::parse(&arg) {
                Ok(e) => Some(SrcExpr {
                    expr: e,
                    src: arg.clone(),
                    pos: node.pos,
                }),
                Err(e) => {
                    me.err(
                        node.pos,
                        kp,
                        format!("bad argument `{arg}`: {e}"),
                        "give an integer expression or a field name",
                    );
                    None
                }
            }
        };
        match name.as_str() {
            "xor" => {
                if let Some(list) = arg.strip_prefix('[').and_then(|a| a.strip_suffix(']')) {
                    let mut key = Vec::new();
                    for item in list.split(',').map(str::trim).filter(|x| !x.is_empty()) {
                        match expr::parse_int_literal(item) {
                            Some(b) if (0..=255).contains(&b) => key.push(b as u8),
                            _ => {
                                self.err(
                                    node.pos,
                                    kp,
                                    format!("`{item}` in the xor key is not a byte"),
                                    "key bytes are 0..255",
                                );
                                return None;
                            }
                        }
                    }
                    Some(Process::Xor(ProcArg::Bytes(key)))
                } else {
                    Some(Process::Xor(ProcArg::Expr(expr(self)?)))
                }
            }
            "rol" => Some(Process::Rol(expr(self)?)),
            "ror" => Some(Process::Ror(expr(self)?)),
            _ if Self::processor_name_ok(&name) => match expr::parse(&format!("[{arg}]")) {
                Ok(Expr::List(items)) => Some(Process::Custom {
                    name,
                    args: items
                        .into_iter()
                        .map(|e| SrcExpr {
                            src: e.to_string(),
                            expr: e,
                            pos: node.pos,
                        })
                        .collect(),
                }),
                Ok(_) => None,
                Err(e) => {
                    self.err(
                        node.pos,
                        kp,
                        format!("bad arguments `{arg}`: {e}"),
                        "arguments are expressions separated by `,`",
                    );
                    None
                }
            },
            _ => {
                self.err(
                    node.pos,
                    kp,
                    format!("`{name}` is not a processor name"),
                    "use zlib, xor(key), rol(n), ror(n), or a custom processor `name(args)` (names are snake_case, dotted for nested modules)",
                );
                None
            }
        }
    }

    /// A custom processor's name: snake_case parts separated by `.` (`my_fx`,
    /// `nested.deeply.my_fx`).
    fn processor_name_ok(name: &str) -> bool {
        !name.is_empty() && name.split('.').all(is_ident)
    }

    fn contents(&mut self, node: &Node, kp: &str) -> Option<Vec<u8>> {
        match &node.kind {
            NodeKind::Scalar { text, .. } => Some(text.as_bytes().to_vec()),
            NodeKind::Seq(items) => {
                let mut out = Vec::new();
                for it in items {
                    let s = self.scalar(it, kp)?;
                    match expr::parse_int_literal(s) {
                        Some(v) if (0..=255).contains(&v) => out.push(v as u8),
                        Some(_) => {
                            self.err(
                                it.pos,
                                kp,
                                format!("`{s}` is not a byte"),
                                "bytes are 0..255",
                            );
                            return None;
                        }
                        None => out.extend_from_slice(s.as_bytes()),
                    }
                }
                Some(out)
            }
            NodeKind::Map(_) => {
                self.err(
                    node.pos,
                    kp,
                    "`contents` must be a string or a list of bytes",
                    "write `contents: SNAPV1.3` or `contents: [0x53, 0x4e]`",
                );
                None
            }
        }
    }

    fn valid(&mut self, node: &Node, kp: &str) -> Option<Valid> {
        match &node.kind {
            NodeKind::Scalar { .. } => Some(Valid::Eq(self.src_expr(node, kp)?)),
            NodeKind::Map(m) => {
                let mut min = None;
                let mut max = None;
                let mut out = None;
                for (k, v) in m {
                    let p = format!("{kp}.{}", k.text);
                    match k.text.as_str() {
                        "eq" => out = Some(Valid::Eq(self.src_expr(v, &p)?)),
                        "min" => min = Some(self.src_expr(v, &p)?),
                        "max" => max = Some(self.src_expr(v, &p)?),
                        "expr" => out = Some(Valid::Expr(self.src_expr(v, &p)?)),
                        "any-of" => {
                            let Some(items) = v.as_seq() else {
                                self.err(
                                    v.pos,
                                    &p,
                                    "`any-of` must be a list",
                                    "write `any-of: [1, 2, 3]`",
                                );
                                return None;
                            };
                            let mut all = Vec::new();
                            for it in items {
                                all.push(self.src_expr(it, &p)?);
                            }
                            out = Some(Valid::AnyOf(all));
                        }
                        "in-enum" => match v.as_str() {
                            Some("true") => out = Some(Valid::InEnum),
                            Some(o) => {
                                self.err(
                                    v.pos,
                                    &p,
                                    format!("`in-enum` must be `true`, found `{o}`"),
                                    "only `true` is supported; to check nothing, drop `valid`",
                                );
                                return None;
                            }
                            None => {
                                self.err(
                                    v.pos,
                                    &p,
                                    format!("`in-enum` must be `true`, found {}", v.shape()),
                                    "write `in-enum: true`",
                                );
                                return None;
                            }
                        },
                        _ => self.unknown_key(
                            k,
                            kp,
                            &["eq", "min", "max", "any-of", "expr", "in-enum"],
                            &[],
                        ),
                    }
                }
                if min.is_some() || max.is_some() {
                    if out.is_some() {
                        self.err(
                            node.pos,
                            kp,
                            "`min`/`max` combined with another rule",
                            "use one kind of rule per field",
                        );
                    }
                    return Some(Valid::Range(min, max));
                }
                if out.is_none() {
                    self.err(
                        node.pos,
                        kp,
                        "`valid` has no rule",
                        "use one of eq, min, max, any-of, expr",
                    );
                }
                out
            }
            NodeKind::Seq(_) => {
                self.err(
                    node.pos,
                    kp,
                    "`valid` must be a value or a mapping",
                    "write `valid: 4` or `valid: {any-of: [1, 2]}`",
                );
                None
            }
        }
    }
}

/// The user-type value whose stream `io` names: `v` for `v._io` (a name with members,
/// indexes and casts), `c ? a : b` for `c ? a._io : b._io` (each branch such a stream, or
/// another choice of them); `None` for any other expression.
fn io_value(e: &Expr) -> Option<Expr> {
    match e {
        Expr::Attr(a, io) if io == "_io" && crate::instances::plain_value(a) => Some((**a).clone()),
        Expr::Ternary(c, a, b) => Some(Expr::Ternary(
            c.clone(),
            Box::new(io_value(a)?),
            Box::new(io_value(b)?),
        )),
        _ => None,
    }
}

/// Lowers one positional instance `key: {pos: ..., type: ..., ...}` to a field, or reports
/// why it cannot be read.
pub(crate) fn lower_positional(
    lw: &mut Lower<'_>,
    key: &Key,
    node: &Node,
    entries: &[(Key, Node)],
    ip: &str,
) -> Option<Field> {
    let get = |name: &str| entries.iter().find(|(k, _)| k.text == name).map(|(_, v)| v);
    let pos = match get("pos") {
        Some(pos_node) => lw.src_expr(pos_node, &format!("{ip}.pos"))?,
        // Without `pos` the instance is read where its stream is when it is read (Kaitai
        // Struct reads it at the stream's position at first use; statepack reads instances
        // at their first use or after the `seq`, so the two agree): `pos: _io.pos`.
        None if get("io").is_none() => SrcExpr {
            expr: Expr::Attr(Box::new(Expr::Name("_io".into())), "pos".into()),
            src: "_io.pos".into(),
            pos: node.pos,
        },
        None => {
            lw.err(
                node.pos,
                ip,
                "an instance with `io` needs `pos`",
                "add `pos: <expression>` (the byte offset in that stream, from its start)",
            );
            return None;
        }
    };
    let mut io_of = None;
    let whole = match get("io") {
        None => false,
        Some(io) => {
            let e = lw.src_expr(io, &format!("{ip}.io"))?;
            match &e.expr {
                Expr::Name(n) if n == "_io" => false,
                Expr::Attr(a, io)
                    if io == "_io" && matches!(&**a, Expr::Name(r) if r == "_root") =>
                {
                    true
                }
                // `io: value._io`, `io: c ? a._io : b._io`: the substream of another value
                // (see `emit::io_of`), kept as the value (`value`, `c ? a : b`).
                x if io_value(x).is_some() => {
                    let v = io_value(x).unwrap_or_else(|| x.clone());
                    io_of = Some(crate::ir::SrcExpr {
                        src: v.to_string(),
                        expr: v,
                        pos: e.pos,
                    });
                    false
                }
                _ => {
                    lw.err(
                        io.pos,
                        &format!("{ip}.io"),
                        format!("`io: {}` is not supported yet", e.src),
                        "positional instances read from `_io` (the type's own stream), `_root._io` (the whole input), `value._io` (the substream of a user-type value read with a `size`) or a choice `c ? a._io : b._io` of such substreams",
                    );
                    return None;
                }
            }
        }
    };
    // `-sp-lazy: false`: read by the type's reader even when nothing names it.
    let lazy = match get("-sp-lazy") {
        Some(v) => lw.boolean(v, &format!("{ip}.-sp-lazy"))?,
        None => true,
    };
    // `-sp-align: N`: where the writer places the instance (see `crate::derive`).
    let align = match get("-sp-align") {
        Some(v) => Some(lw.small_count(v, &format!("{ip}.-sp-align"), 1)?),
        None => None,
    };
    // The instance reads like a `seq` entry with its name as `id` (without `pos` and `io`).
    let mut m: Vec<(Key, Node)> = vec![(
        Key {
            text: "id".into(),
            pos: key.pos,
        },
        Node {
            pos: key.pos,
            kind: NodeKind::Scalar {
                text: key.text.clone(),
                quoted: false,
            },
        },
    )];
    m.extend(
        entries
            .iter()
            .filter(|(k, _)| {
                !["pos", "io", "id", "-sp-lazy", "-sp-align"].contains(&k.text.as_str())
            })
            .cloned(),
    );
    let synthetic = Node {
        pos: node.pos,
        kind: NodeKind::Map(m),
    };
    let mut f = lw.field(&synthetic, ip)?;
    f.pos = key.pos;
    // An instance may hold the type it belongs to (a chain of positions): its member is a
    // `Box` so that the struct has a size.
    if matches!(f.kind, FieldKind::User { .. }) && matches!(f.repeat, Repeat::None) {
        f.boxed = true;
    }
    f.at = Some(Box::new(Positional {
        pos,
        whole,
        io_of,
        io_later: None,
        lazy,
        align,
    }));
    Some(f)
}
