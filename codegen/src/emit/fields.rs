//! One field of a type: its struct member, its read (condition, list, checks, trace,
//! position), its write and its length.

use super::*;

/// The values of one field that its member, read, write and length code share: its Rust
/// name, schema id and key path, whether the writer derives it, the name of its kept start
/// offset, its element, member and field types, its fixed array length.
struct FieldCx {
    id: proc_macro2::Ident,
    fid: String,
    kp: String,
    is_derived: bool,
    at: proc_macro2::Ident,
    elem_ty: TokenStream,
    arr: Option<usize>,
    full_ty: TokenStream,
    field_ty: TokenStream,
    is_contents: bool,
    is_leaf: bool,
}

/// What the read code of a field hands to its write code: the writer's presence test, whether
/// it is a list, its `valid` rule (constant and name), its unit in the fixed runs.
struct ReadOut {
    cond_w: Option<TokenStream>,
    repeated: bool,
    rule_const: Option<TokenStream>,
    rule_id: proc_macro2::Ident,
    run_unit: Option<runs::Unit>,
}

/// How the tracer leaves one element of field `f` (`is_leaf`: a number, string or bytes, traced
/// with its value): enums with their name and stored integer, offset-binary bit fields with
/// their code, `contents` with the bytes matched, other leaves with their value.
fn trace_leave(f: &Field, is_leaf: bool) -> TokenStream {
    if matches!(
        f.kind,
        FieldKind::Int {
            enum_name: Some(_),
            ..
        } | FieldKind::Bits {
            enum_name: Some(_),
            ..
        }
    ) {
        // Enum values are traced by their schema name and stored integer.
        quote!(__r.leave_enum(__v.name(), __v.to_i());)
    } else if let FieldKind::Bits {
        width,
        offset_binary,
        ..
    } = &f.kind
    {
        bits::bits_leave(*width, *offset_binary)
    } else if let FieldKind::Contents(c) = &f.kind {
        // Fixed contents are traced with the bytes they matched.
        let b = Literal::byte_string(c);
        quote!(__r.leave(Some(#b));)
    } else if is_leaf {
        quote!(__r.leave(Some(&__v));)
    } else {
        quote!(__r.leave::<()>(None);)
    }
}

/// True when the statements `code` can neither fail nor leave early (no `?`, no `return`,
/// no `break`): they need no closure around them to name their field in an error.
pub(super) fn infallible(code: &TokenStream) -> bool {
    code.clone().into_iter().all(|t| match t {
        proc_macro2::TokenTree::Punct(p) => p.as_char() != '?',
        proc_macro2::TokenTree::Ident(i) => i != "return" && i != "break" && i != "continue",
        proc_macro2::TokenTree::Group(g) => infallible(&g.stream()),
        proc_macro2::TokenTree::Literal(_) => true,
    })
}

/// Statements `put` writing one field, in a closure whose error `wrap` names the field when
/// they can fail; as they are when they cannot (a closure would catch nothing).
fn named_write(put: TokenStream, wrap: &TokenStream) -> TokenStream {
    if infallible(&put) {
        put
    } else {
        quote! {
            (|| -> Result<(), __io::EncodeError> { #put; Ok(()) })() #wrap;
        }
    }
}

/// The read of a field in one call, without checks (`elem_read` cannot fail or leave
/// early): a number, string or byte array through one `leaf` call, which enters, reads,
/// names the field in an error and leaves with the value (`leave`); a user type or switch
/// through one `node` call, which leaves without a value. `None` for another `leave`.
fn one_call_read(fid: &str, leave: &TokenStream, elem_read: &TokenStream) -> Option<TokenStream> {
    let leave_s = leave.to_string();
    if leave_s == quote!(__r.leave(Some(&__v));).to_string() {
        Some(quote!(__r.leaf(#fid, |__r| #elem_read)?))
    } else if leave_s == quote!(__r.leave::<()>(None);).to_string() {
        let read = fn_of_reader(elem_read).unwrap_or_else(|| quote!(|__r| #elem_read));
        Some(quote!(__r.node(#fid, #read)?))
    } else {
        None
    }
}

/// The function `f` when `code` is the call `f(__r)` of a path (`Header::read_from(__r)`),
/// which a reader helper takes as it is (a closure around it would be redundant).
fn fn_of_reader(code: &TokenStream) -> Option<TokenStream> {
    use proc_macro2::TokenTree as T;
    let mut toks: Vec<T> = code.clone().into_iter().collect();
    if let [T::Group(g)] = toks.as_slice() {
        if g.delimiter() == proc_macro2::Delimiter::Brace {
            toks = g.stream().into_iter().collect();
        }
    }
    let (T::Group(args), path) = toks.split_last()? else {
        return None;
    };
    let plain_path = !path.is_empty()
        && path.iter().all(|t| match t {
            T::Ident(_) => true,
            T::Punct(p) => p.as_char() == ':',
            _ => false,
        });
    (args.delimiter() == proc_macro2::Delimiter::Parenthesis
        && args.stream().to_string() == "__r"
        && plain_path)
        .then(|| path.iter().cloned().collect())
}

/// The call `x` when the statements `code` are one `x?` (in braces or not, with or without
/// a `;`) and `x` itself cannot fail or leave early: its error can be mapped in place.
fn single_try(code: &TokenStream) -> Option<TokenStream> {
    let mut toks: Vec<proc_macro2::TokenTree> = code.clone().into_iter().collect();
    if let [proc_macro2::TokenTree::Group(g)] = toks.as_slice() {
        if g.delimiter() == proc_macro2::Delimiter::Brace {
            toks = g.stream().into_iter().collect();
        }
    }
    if matches!(toks.last(), Some(proc_macro2::TokenTree::Punct(p)) if p.as_char() == ';') {
        toks.pop();
    }
    if !matches!(toks.last(), Some(proc_macro2::TokenTree::Punct(p)) if p.as_char() == '?') {
        return None;
    }
    toks.pop();
    let call: TokenStream = toks.into_iter().collect();
    let semis = call
        .clone()
        .into_iter()
        .any(|t| matches!(t, proc_macro2::TokenTree::Punct(ref p) if p.as_char() == ';'));
    (!call.is_empty() && !semis && infallible(&call)).then_some(call)
}

/// The statement binding field `f` as `id: field_ty`: its one `leaf` call, or its trace entry
/// and `read_value`; under its condition `cond`, if any.
fn read_stmt(
    f: &Field,
    (id, field_ty): (&proc_macro2::Ident, &TokenStream),
    cond: Option<&TokenStream>,
    leaf: Option<TokenStream>,
    read_value: TokenStream,
) -> TokenStream {
    let fid = &f.id;
    // A positional instance (not `io: value._io`) is entered at its position, inside
    // `instances::emit_read`, so its trace node starts where its bytes do.
    let enter = if f.at.as_ref().is_some_and(|a| a.io_of.is_none()) {
        quote!()
    } else {
        quote!(__r.enter(__io::PathSeg::Field(#fid));)
    };
    match (cond, leaf) {
        (Some(c), Some(leaf)) => quote! {
            let #id: #field_ty = if #c { Some(#leaf) } else { None };
        },
        (None, Some(leaf)) => quote! {
            let #id: #field_ty = #leaf;
        },
        (Some(c), None) => quote! {
            let #id: #field_ty = if #c { #enter Some(#read_value) } else { None };
        },
        (None, None) => quote! {
            #enter
            let #id: #field_ty = #read_value;
        },
    }
}

/// True when `code` names `ident` anywhere.
fn mentions(code: &TokenStream, ident: &str) -> bool {
    code.clone().into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => i == ident,
        proc_macro2::TokenTree::Group(g) => mentions(&g.stream(), ident),
        _ => false,
    })
}

impl Emitter<'_> {
    /// One field of `t`: its member, its read, its write and its length.
    pub(super) fn emit_field(
        &mut self,
        t: &TypeDef,
        f: &Field,
        derived: &HashMap<String, Derived>,
        p: &mut TypeParts,
    ) -> Option<()> {
        self.cur_field.replace(Some(f.id.clone()));
        // Left set by a field whose emission stopped at an error.
        self.own_io.set(false);
        self.field_align(f, p);
        let fc = self.field_cx(t, f, derived);
        self.field_member(t, f, &fc, p);
        let r = self.field_read(t, f, derived, &fc, p)?;
        if self.field_write(t, f, derived, &fc, r, p)? {
            self.field_len(f, &fc, p);
        }
        Some(())
    }

    /// Kaitai's alignment rule before field `f`: after a bit field, a field that is not one
    /// starts on the next byte (its padding bits kept under Kaitai's rules, zero under strict
    /// ones); tracks the `seq`'s bit phase.
    fn field_align(&mut self, f: &Field, p: &mut TypeParts) {
        let TypeParts {
            struct_fields,
            reads,
            writes,
            ctor,
            unaligned,
            phase,
            ..
        } = p;
        let fid = f.id.as_str();
        let bit_field = crate::bits::is_bit_field(f);
        // The bit fields before `f` fill whole bytes, and the reader is known to be at that
        // phase: no padding bits to skip or keep.
        let whole_bytes = self.aligned_ends && *phase == Some(0);
        if f.at.is_some() || whole_bytes {
            // Read at a position of its stream (the sequence's bit state is untouched), or
            // on a byte boundary already.
        } else if *unaligned && !bit_field && !f.strict {
            // Kaitai's rules: the padding bits may be anything; they are kept and put
            // back on write.
            let pad = temp_for("pad", &f.id);
            reads.push(quote!(let #pad: u8 = __r.align_to_byte_keep();));
            writes.push(quote!(__w.align_to_byte_with(self.#pad);));
            let d = format!(
                " The padding bits before `{}` (after bit fields), as read; written back.",
                f.id
            );
            struct_fields.push(quote! {
                #[doc = #d]
                #[serde(default)]
                pub #pad: u8
            });
            ctor.push(quote!(#pad));
        } else if *unaligned && !bit_field {
            reads.push(quote!(__r.align_to_byte().map_err(|e| e.in_field(#fid))?;));
            writes.push(quote!(__w.align_to_byte();));
        }
        if f.at.is_none() {
            *unaligned = bit_field;
            *phase = crate::bits::phase_after(*phase, f);
        }
    }

    /// The values the member, read, write and length code of field `f` share.
    fn field_cx(&self, t: &TypeDef, f: &Field, derived: &HashMap<String, Derived>) -> FieldCx {
        // The reader binds a `contents` field's `()` under `_` + its name: nothing uses it
        // (an expression that names the field gets its bytes, bound under the name itself).
        let id = if matches!(f.kind, FieldKind::Contents(_)) {
            format_ident!("_{}", f.id)
        } else {
            field_ident(&f.id)
        };
        let fid = f.id.clone();
        let kp = f.key_path.clone();
        let is_derived = derived.contains_key(&f.id);
        let at = temp_for("at", &f.id);
        let elem_ty = self.elem_rust_ty(t, f);
        let arr = Self::array_len(f);
        let full_ty = match (&f.repeat, arr) {
            _ if f.varint => quote!(u64),
            (Repeat::None, _) => elem_ty.clone(),
            (_, Some(n)) => {
                let n = lit_usize(n);
                quote!([#elem_ty; #n])
            }
            _ => quote!(::std::vec::Vec<#elem_ty>),
        };
        let field_ty = if f.cond.is_some() {
            quote!(::std::option::Option<#full_ty>)
        } else {
            full_ty.clone()
        };
        let is_contents = matches!(f.kind, FieldKind::Contents(_));
        let is_leaf = matches!(
            f.kind,
            FieldKind::Int { .. }
                | FieldKind::Bits { .. }
                | FieldKind::Float { .. }
                | FieldKind::Str { .. }
                | FieldKind::Bytes(_)
        );

        FieldCx {
            id,
            fid,
            kp,
            is_derived,
            at,
            elem_ty,
            arr,
            full_ty,
            field_ty,
            is_contents,
            is_leaf,
        }
    }

    /// The struct member of field `f` (none for a derived or `contents` field), with its
    /// kept bytes (terminator, padding, stored processed bytes) and, for a switch, its enum.
    fn field_member(&mut self, t: &TypeDef, f: &Field, fc: &FieldCx, p: &mut TypeParts) {
        let TypeParts {
            struct_fields,
            ctor,
            extra_items,
            ..
        } = p;
        let FieldCx {
            ref id,
            is_derived,
            ref field_ty,
            is_contents,
            ..
        } = *fc;
        // Switch fields of the same cases share the first one's enum.
        if matches!(f.kind, FieldKind::Switch { .. })
            && crate::shape::switch_enum_owner(t, f).id == f.id
        {
            extra_items.push(self.emit_switch_enum(t, f));
        }

        // --- struct member
        if !is_derived && !is_contents {
            let mut extra = String::new();
            if let Some(u) = &f.units {
                extra.push_str(&format!("Unit: {u}."));
            }
            if let Some(c) = &f.cond {
                extra.push_str(&format!(
                    "{}Present only when `{}`.",
                    if extra.is_empty() { "" } else { " " },
                    c.src
                ));
            }
            let doc = self.doc_for(f.doc.as_deref(), f.pos, &extra);
            let ser = if f.id.as_str() != id.to_string().trim_start_matches("r#") {
                let n = &f.id;
                quote!(#[serde(rename = #n)])
            } else {
                quote!()
            };
            // JSON numbers cannot hold NaN or infinities: floats use the runtime's
            // lossless form so that decode -> JSON -> encode keeps every bit.
            // Byte fields are hex strings in JSON (`bytes_json`), not one number per byte.
            let float_json = match f.kind {
                FieldKind::Float { .. } => {
                    quote!(#[serde(with = "__io::float_json")])
                }
                FieldKind::Bytes(_) => {
                    quote!(#[serde(with = "::statepack_runtime::bytes_json")])
                }
                _ => quote!(),
            };
            let member_ty = if self.is_lazy(f) {
                super::lazy::member_ty(field_ty)
            } else {
                field_ty.clone()
            };
            struct_fields.push(quote! { #doc #ser #float_json pub #id: #member_ty });
            ctor.push(quote!(#id));
            if let Some(prefix) = hidden_prefix(f) {
                let tail = temp_for(prefix, &f.id);
                if matches!(f.repeat, Repeat::None) {
                    let d = if prefix == "tail" {
                        format!(" The bytes `{}` took beyond its value when read (terminator, bytes after it, padding), written back as they were; `None` writes the terminator and padding the schema gives.", f.id)
                    } else {
                        format!(" The stored (processed) bytes of `{}` as read, written back while they still give the value; `None` (or bytes that no longer match) processes the value anew.", f.id)
                    };
                    struct_fields.push(quote! {
                        #[doc = #d]
                        #[serde(default, skip_serializing_if = "Option::is_none", with = "::statepack_runtime::bytes_json")]
                        pub #tail: ::std::option::Option<::std::vec::Vec<u8>>
                    });
                } else {
                    let d = format!(" For each element of `{}`, the bytes kept from reading (beyond the value, or as stored before `process`), written back as they were; an element without an entry is written from its value.", f.id);
                    struct_fields.push(quote! {
                        #[doc = #d]
                        #[serde(default, skip_serializing_if = "Vec::is_empty", with = "::statepack_runtime::bytes_json")]
                        pub #tail: ::std::vec::Vec<::std::vec::Vec<u8>>
                    });
                }
                ctor.push(quote!(#tail));
            }
        }
    }

    /// The reader's statement of field `f` (its condition, count, checks, trace and position),
    /// its entry in the fixed runs, and its `-sp-sum-of` check.
    fn field_read(
        &mut self,
        t: &TypeDef,
        f: &Field,
        derived: &HashMap<String, Derived>,
        fc: &FieldCx,
        p: &mut TypeParts,
    ) -> Option<ReadOut> {
        let TypeParts {
            struct_fields,
            reads,
            post_read_checks,
            write_pre,
            ctor,
            rscope,
            wscope,
            read_runs,
            ..
        } = p;
        let FieldCx {
            ref id,
            ref fid,
            ref kp,
            ref at,
            ref elem_ty,
            ref full_ty,
            ref field_ty,
            is_contents,
            is_leaf,
            ..
        } = *fc;
        // --- read
        let cond_r = match &f.cond {
            Some(c) => Some(self.expect_ty(c, &rscope, &format!("{kp}.if"), Ty::Bool)?),
            None => None,
        };
        // An instance read from another value's stream: `_io` in what follows is the type's
        // own stream (see `emit::io_of`).
        let own_io = f.at.as_ref().is_some_and(|a| a.io_of.is_some());
        self.own_io.set(own_io);
        let cond_w = match &f.cond {
            // `_io.eof` / `_io.size` are not known while writing: presence decides.
            Some(c) if crate::instances::uses_io_end(&c.expr) => Some(self.presence(f, id)),
            Some(c) => Some(self.expect_ty(c, &wscope, &format!("{kp}.if"), Ty::Bool)?),
            None => None,
        };
        let repeated = !matches!(f.repeat, Repeat::None) && !f.varint;
        if repeated {
            rscope.vars.push(("_index".into(), Ty::Int));
        }
        let elem_read = self.elem_read(t, f, &rscope, Side::Read);
        if repeated {
            rscope.vars.pop();
        }
        let elem_read = elem_read?;
        // A recursive type is read one level deeper, within the reader's bound.
        let elem_read = if f.recursive.is_empty() {
            elem_read
        } else {
            quote!(__r.enter_recursion().and_then(|()| { let __v = #elem_read; __r.leave_recursion(); __v }))
        };
        let wrap_field = quote!(.map_err(|e| e.in_field(#fid))?);
        let wrap_idx = quote!(.map_err(|e| e.in_index(__i).in_field(#fid))?);
        let valid_r = match &f.valid {
            Some(v) => Some(self.valid_check(v, f, &rscope, Side::Read)?),
            None => None,
        };
        let rule_id = temp_for("rule", &f.id);
        let rule_const = f.valid.as_ref().map(|v| {
            let d = v.describe();
            quote!(let #rule_id: &'static str = #d;)
        });
        let leave = trace_leave(f, is_leaf);
        let idx = if matches!(f.repeat, Repeat::None) {
            quote!()
        } else {
            quote!(.in_index(__i))
        };
        let shown = shown_value(self.s, f);
        let one_read = |wrap: &TokenStream| -> TokenStream {
            let check = valid_r.clone().map(|c| quote! {
                {
                    let __v = &__v;
                    if #c {
                        return Err(__io::DecodeError::not_valid(__el_at, #shown, #rule_id) #idx .in_field(#fid));
                    }
                }
            }).unwrap_or_default();
            let el_at = if valid_r.is_some() && matches!(f.kind, FieldKind::Bits { .. }) {
                // The byte holding the field's first bit (a partly read byte counts as read
                // in `offset()`).
                quote!(let __el_at = __r.bit_offset() / 8;)
            } else if valid_r.is_some() {
                quote!(let __el_at = __r.offset();)
            } else {
                quote!()
            };
            quote! {{
                #el_at
                let __v: #elem_ty = { #elem_read } #wrap;
                #check
                #leave
                __v
            }}
        };
        let read_value = match &f.repeat {
            _ if f.varint => bits::varint_read(f, fid),
            Repeat::None => one_read(&wrap_field),
            _ => self.list_read(
                f,
                fc,
                rscope,
                &one_read,
                (&wrap_field, &wrap_idx),
                valid_r.is_some(),
            )?,
        };
        let rep_leave = if matches!(f.repeat, Repeat::None) || f.varint {
            quote!()
        } else {
            quote!(__r.leave::<()>(None);)
        };
        let read_value = if matches!(f.repeat, Repeat::None) || f.varint {
            read_value
        } else {
            quote! {{ let __l = #read_value; #rep_leave __l }}
        };
        self.own_io.set(false);
        let (read_value, kept_pos) = match &f.at {
            Some(at) => {
                let (rv, kept) = positional::emit_read(self, f, at, &rscope, read_value)?;
                (rv, kept)
            }
            None => (read_value, None),
        };
        if let Some((decl, member, ctor_item)) = kept_pos {
            reads.push(decl);
            struct_fields.push(member);
            ctor.push(ctor_item);
        }
        let tail_decl = match (hidden_prefix(f), matches!(f.repeat, Repeat::None)) {
            (None, _) => quote!(),
            (Some(prefix), true) => {
                let tail = temp_for(prefix, &f.id);
                quote!(let mut #tail: ::std::option::Option<::std::vec::Vec<u8>> = ::std::option::Option::None;)
            }
            (Some(prefix), false) => {
                let tail = temp_for(prefix, &f.id);
                quote!(let mut #tail: ::std::vec::Vec<::std::vec::Vec<u8>> = ::std::vec::Vec::new();)
            }
        };
        let one_call = matches!(f.repeat, Repeat::None)
            && !f.varint
            && f.at.is_none()
            && valid_r.is_none()
            && infallible(&elem_read);
        let leaf = one_call
            .then(|| one_call_read(fid, &leave, &elem_read))
            .flatten();
        let read_stmt = read_stmt(f, (id, field_ty), cond_r.as_ref(), leaf, read_value);
        // The field's start offset is kept only where an error after the read needs it.
        let keep_at = matches!(derived.get(&f.id), Some(Derived::Sum(..)));
        let at_stmt = if keep_at {
            quote!(let #at = __r.offset();)
        } else {
            quote!()
        };
        let stmt = quote!(#at_stmt #rule_const #tail_decl #read_stmt);
        let stmt = super::io_later::keep_stream(self.s, t, f, stmt);
        reads.push(self.lazy_read(t, f, id, field_ty, stmt));
        let run_unit = self
            .run_unit(f)
            .filter(|_| !(is_contents && f.cond.is_some()));
        if let Some(unit) = run_unit.clone().filter(|_| !(keep_at && f.cond.is_some())) {
            read_runs.push(runs::Member {
                name: fid.to_owned(),
                stmt: reads.len() - 1,
                id: id.clone(),
                ty: full_ty.clone(),
                at: keep_at.then(|| at.clone()),
                src: quote!(),
                unit,
                cond: cond_r.clone(),
                presence: quote!(),
            });
        }
        if let Some(Derived::Sum(list, field)) = derived.get(&f.id) {
            let l = field_ident(list);
            let fi = field_ident(field);
            let msg = format!("{{}} stored, but the {list}[].{field} values sum to {{}}");
            // Unsigned elements of at most 16 bits are summed in u64: a list would need
            // more than 2^48 elements (more than the address space holds) to overflow it.
            // Wider or signed elements keep i128. The value printed is the same.
            let narrow = t
                .fields
                .iter()
                .find(|g| &g.id == list)
                .and_then(|g| match &g.kind {
                    FieldKind::User { ty: name, .. } => self.s.type_of(name),
                    _ => None,
                })
                .and_then(|et| et.fields.iter().find(|x| &x.id == field))
                .is_some_and(|x| {
                    matches!(
                        x.kind,
                        FieldKind::Int {
                            bytes: 1 | 2,
                            signed: false,
                            ..
                        }
                    )
                });
            let (acc, sum_wide) = if narrow {
                (quote!(u64), group(quote!(__sum as i128)))
            } else {
                (quote!(i128), quote!(__sum))
            };
            post_read_checks.push(quote! {
                let __sum: #acc = #l.iter().map(|__e| __e.#fi as #acc).sum();
                if #sum_wide != #id as i128 {
                    return Err(__io::DecodeError::new(#at, __io::DecodeErrorKind::Semantic(format!(#msg, #id, __sum))).in_field(#fid));
                }
            });
        }
        rscope.vars.push((f.id.clone(), self.field_ty(f)));
        // Fixed contents named by an expression (`if: magic.size == 4`) are their bytes,
        // on read and on write.
        if let FieldKind::Contents(c) = &f.kind {
            if f.cond.is_none()
                && matches!(f.repeat, Repeat::None)
                && crate::instances::type_names(t).contains(&f.id)
            {
                let b = Literal::byte_string(c);
                let id = field_ident(&f.id);
                reads.push(quote!(let #id: ::std::vec::Vec<u8> = ::std::vec::Vec::from(#b);));
                write_pre.push(quote!(let #id: &::std::vec::Vec<u8> = &::std::vec::Vec::from(#b);));
                wscope.vars.push((f.id.clone(), Ty::Bytes));
            }
        }

        Some(ReadOut {
            cond_w,
            repeated,
            rule_const,
            rule_id,
            run_unit,
        })
    }

    /// The reader of list field `f` (`repeat: expr`, `eos` or `until`): a fixed array, a list
    /// read in place with its element type's `read_into`, or elements read by `one_read`
    /// (given the error wrapping of a field and of an element, `wraps`). `has_valid`: the
    /// elements are checked against a `valid` rule.
    fn list_read(
        &mut self,
        f: &Field,
        fc: &FieldCx,
        rscope: &Scope,
        one_read: &dyn Fn(&TokenStream) -> TokenStream,
        wraps: (&TokenStream, &TokenStream),
        has_valid: bool,
    ) -> Option<TokenStream> {
        let (wrap_field, wrap_idx) = wraps;
        let FieldCx {
            ref fid,
            ref kp,
            ref elem_ty,
            arr,
            ..
        } = *fc;
        Some(match &f.repeat {
            Repeat::Expr(e) => {
                let count = self.expect_ty(e, &rscope, &format!("{kp}.repeat-expr"), Ty::Int)?;
                let body = one_read(&wrap_idx);
                let min = self.elem_min_len(f);
                let check = match &f.kind {
                    FieldKind::Bits { width, .. } => {
                        let w = u32::from(*width);
                        quote!(__r.check_count_bits(#count, #w))
                    }
                    _ => quote!(__r.check_count(#count, #min)),
                };
                if let Some(n) = arr {
                    let n = lit_usize(n);
                    quote! {{
                        let mut __a: [#elem_ty; #n] = Default::default();
                        for (__i, __slot) in __a.iter_mut().enumerate() {
                            __r.enter(__io::PathSeg::Index(__i));
                            *__slot = #body;
                        }
                        __a
                    }}
                } else {
                    match self.in_place_elem(f, has_valid) {
                        Some(ti) => quote! {{
                            let __n = #check #wrap_field;
                            let mut __list = ::std::vec::Vec::with_capacity(__n);
                            // The list's length is the element index: one counter.
                            while __list.len() < __n {
                                let __i = __list.len();
                                __r.enter(__io::PathSeg::Index(__i));
                                #ti::read_into(__r, |__v| __list.push(__v)) #wrap_idx;
                                __r.leave::<()>(None);
                            }
                            __list
                        }},
                        None => {
                            let push_body = push_of(f, &body);
                            quote! {{
                                let __n = #check #wrap_field;
                                let mut __list = ::std::vec::Vec::with_capacity(__n);
                                // The list's length is the element index: one counter.
                                while __list.len() < __n {
                                    let __i = __list.len();
                                    __r.enter(__io::PathSeg::Index(__i));
                                    #push_body
                                }
                                __list
                            }}
                        }
                    }
                }
            }
            Repeat::Eos | Repeat::Until(_) => {
                let body = one_read(&wrap_idx);
                let stop = match &f.repeat {
                    Repeat::Until(u) => {
                        let (ety, c) = self.until_cond(f, u, &rscope)?;
                        let bind = bind_elem(&ety, group(quote!(&__list[__list.len() - 1])));
                        quote! { { #bind if #c { break; } } }
                    }
                    _ => quote!(),
                };
                let head = match &f.repeat {
                    Repeat::Eos => quote!(while !__r.is_eof()),
                    _ => quote!(loop),
                };
                let open = self.open_list(f);
                // A plain user type without size, args or checks is read straight into
                // the list, as for a counted list.
                let push = match self.in_place_elem(f, has_valid) {
                    Some(ti) => quote! {
                        #ti::read_into(__r, |__v| __list.push(__v)) #wrap_idx;
                        __r.leave::<()>(None);
                    },
                    None => push_of(f, &body),
                };
                quote! {{
                    let mut __list = #open;
                    #head {
                        let __i = __list.len();
                        let __before = __r.bit_offset();
                        __r.enter(__io::PathSeg::Index(__i));
                        #push
                        // An empty element that ends the list is fine; one that does
                        // not would repeat forever.
                        #stop
                        if __r.bit_offset() == __before {
                            return Err(__io::DecodeError::new(__r.offset(), __io::DecodeErrorKind::Semantic("a repeated element took no bytes, so the list would never end".into())).in_index(__i).in_field(#fid));
                        }
                    }
                    __list
                }}
            }
            _ => unreachable!("a list field"),
        })
    }

    /// The write of one element of field `f`. A field whose bytes must be known before
    /// anything is written (a processed field whose size the writer derives: its stored
    /// bytes; a sized field of a type with context params whose size it derives: the value
    /// written with its context) gets them bound in `write_pre`, with the length field, and
    /// is written from them.
    fn field_elem_write(
        &mut self,
        t: &TypeDef,
        f: &Field,
        derived: &HashMap<String, Derived>,
        repeated: bool,
        wscope: &mut Scope,
        write_pre: &mut Vec<TokenStream>,
    ) -> Option<TokenStream> {
        // A processed field whose size the writer derives: its stored bytes are produced
        // before anything is written (the length field comes first) and written here.
        let produced = derived.iter().find_map(|(len, d)| match d {
            Derived::Stored(target, adj) if target == &f.id => {
                t.fields.iter().find(|g| &g.id == len).map(|g| (g, *adj))
            }
            _ => None,
        });
        if let Some(len) = produced {
            write_pre.push(self.produced_pre(f, len, wscope)?);
        }
        // A sized field of a type with context params whose size the writer derives: it is
        // written (with its context) before anything is, and its length gives the size.
        let measured = derived.iter().find_map(|(len, d)| match d {
            Derived::Bytes(target) if target == &f.id && self.measured_with_context(f) => {
                t.fields.iter().find(|g| &g.id == len)
            }
            _ => None,
        });
        if let Some(len) = measured {
            write_pre.push(self.measured_pre(f, len, wscope)?);
        }
        if repeated {
            wscope.vars.push(("_index".into(), Ty::Int));
        }
        let elem_write = match (produced, measured) {
            (Some(_), _) => {
                let bytes = temp_for("produced", &f.id);
                Some(quote!(__w.write_bytes(&#bytes)))
            }
            (None, Some(_)) => {
                let bytes = temp_for("measured", &f.id);
                Some(quote!(__w.write_bytes(&#bytes)))
            }
            (None, None) => self.elem_write(t, f, wscope),
        };
        if repeated {
            wscope.vars.pop();
        }
        elem_write
    }

    /// The bytes of field `f` written with its context (see
    /// [`Emitter::measured_with_context`]) and the derived length field `len` bound to
    /// their length, refused by name when it does not fit.
    fn measured_pre(&mut self, f: &Field, len: &Field, scope: &Scope) -> Option<TokenStream> {
        let FieldKind::Int { bytes, signed, .. } = &len.kind else {
            return None;
        };
        let (id, fid) = (field_ident(&f.id), &f.id);
        let (lid, lfid) = (field_ident(&len.id), &len.id);
        let (rty, tyname) = (int_ty(*bytes, *signed), int_ty_name(*bytes, *signed));
        let out = temp_for("measured", &f.id);
        let written = self.written_with_context(f, scope, quote!(__v))?;
        // A closure names the field in an error; bytes written without one need none.
        let measured = if infallible(&written) {
            quote!({
                let __v = &self.#id;
                #written
            })
        } else {
            quote!((|| -> ::std::result::Result<::std::vec::Vec<u8>, __io::EncodeError> {
                let __v = &self.#id;
                Ok(#written)
            })()
            .map_err(|e| e.in_field(#fid))?)
        };
        Some(quote! {
            let #out: ::std::vec::Vec<u8> = #measured;
            let #lid: #rty = __io::fit(#out.len() as i128, #tyname).map_err(|e| e.in_field(#lfid))?;
        })
    }

    /// The writer's statement of field `f`; `false` for a positional instance (queued for its
    /// position, with no length term in the `seq`).
    fn field_write(
        &mut self,
        t: &TypeDef,
        f: &Field,
        derived: &HashMap<String, Derived>,
        fc: &FieldCx,
        r: ReadOut,
        p: &mut TypeParts,
    ) -> Option<bool> {
        let TypeParts {
            write_pre,
            writes,
            wscope,
            pos_writes,
            write_runs,
            ..
        } = p;
        let FieldCx {
            ref id,
            ref fid,
            ref kp,
            is_derived,
            arr,
            ref full_ty,
            is_contents,
            ..
        } = *fc;
        let ReadOut {
            cond_w,
            repeated,
            rule_const,
            rule_id,
            run_unit,
        } = r;
        // --- write
        self.own_io
            .set(f.at.as_ref().is_some_and(|a| a.io_of.is_some()));
        let mut lazy_wrap = None;
        // A reference to the value written: `&src`, or the lazy instance's binding itself,
        // which is one already (so no `&*` of a reference).
        let mut src_ref = None;
        let mut src = if is_derived {
            quote!(#id)
        } else {
            quote!(self.#id)
        };
        if !is_derived && !is_contents {
            let ty = self.field_ty(f);
            let by_value = matches!(ty, Ty::Int | Ty::Float | Ty::Enum(_) | Ty::Bool);
            let bind = if self.is_lazy(f) {
                let (bind, value, wrap) = super::lazy::write_bind(id, by_value);
                src = value;
                if !by_value {
                    src_ref = Some(quote!(#id));
                }
                lazy_wrap = Some(wrap);
                bind
            } else if by_value {
                quote!(let #id = self.#id;)
            } else {
                quote!(let #id = &self.#id;)
            };
            write_pre.push(bind);
            wscope.vars.push((f.id.clone(), ty));
        }
        let elem_write = self.field_elem_write(t, f, derived, repeated, wscope, write_pre)?;
        let valid_w = match &f.valid {
            Some(v) => Some(self.valid_check(v, f, &wscope, Side::Write)?),
            None => None,
        };
        let shown = shown_value(self.s, f);
        let valid_w_none = valid_w.is_none();
        let wcheck = valid_w
            .map(|c| {
                quote! {
                    if #c {
                        return Err(__io::EncodeError::not_valid(#shown, #rule_id));
                    }
                }
            })
            .unwrap_or_default();
        let one_write = quote! { #wcheck #elem_write; Ok(()) };
        let wrap_w_field = quote!(.map_err(|e: __io::EncodeError| e.in_field(#fid))?);
        let wrap_w_idx = quote!(.map_err(|e: __io::EncodeError| e.in_index(__i).in_field(#fid))?);
        let body_write = match &f.repeat {
            _ if f.varint => named_write(bits::varint_write(f), &wrap_w_field),
            // A write that cannot fail needs no closure to name the field in its error.
            // A single value is bound as `__v` by the statement around (below).
            Repeat::None if valid_w_none && infallible(&elem_write) => quote! {
                #elem_write;
            },
            Repeat::None => match single_try(&elem_write).filter(|_| valid_w_none) {
                // One fallible call: its error is named without a closure.
                Some(call) => quote! {
                    #call #wrap_w_field;
                },
                None => quote! {
                    (|| -> Result<(), __io::EncodeError> { #one_write })() #wrap_w_field;
                },
            },
            rep => {
                let count_check = match rep {
                    Repeat::Expr(e)
                        if arr.is_none()
                            && !matches!(e.expr, Expr::Name(ref n) if derived.get(n).map(|d| matches!(d, Derived::Count(l) if l == &f.id)).unwrap_or(false)) =>
                    {
                        let c =
                            self.expect_ty(e, &wscope, &format!("{kp}.repeat-expr"), Ty::Int)?;
                        let found = group(quote!(__val.len() as i128));
                        quote! {
                            if #found != #c {
                                return Err(__io::EncodeError::new(__io::EncodeErrorKind::CountMismatch { expected: u64::try_from(#c).unwrap_or(u64::MAX), found: __val.len() }).in_field(#fid));
                            }
                        }
                    }
                    _ => quote!(),
                };
                let until_check = match rep {
                    // `_io.eof` / `_io.size` are not known while writing: the list's
                    // length decides.
                    Repeat::Until(u) if crate::instances::uses_io_end(&u.expr) => quote!(),
                    Repeat::Until(u) => {
                        let (ety, c) = self.until_cond(f, u, &wscope)?;
                        let bind = bind_elem(&ety, quote!(__e));
                        let src_u = &u.src;
                        quote! {
                            for (__j, __e) in __val.iter().enumerate() {
                                #bind
                                let __until: bool = #c;
                                if __until != (__j + 1 == __val.len()) {
                                    return Err(__io::EncodeError::new(__io::EncodeErrorKind::UntilMismatch { condition: #src_u }).in_index(__j).in_field(#fid));
                                }
                            }
                            if __val.is_empty() {
                                return Err(__io::EncodeError::new(__io::EncodeErrorKind::UntilMismatch { condition: #src_u }).in_field(#fid));
                            }
                        }
                    }
                    _ => quote!(),
                };
                // A reader stops a `repeat: eos` list at an element that takes no bytes, so
                // such an element could not be read back: refuse it.
                let (before, empty_check) = if matches!(rep, Repeat::Eos) {
                    (
                        quote!(let __before = __w.bit_len();),
                        quote! {
                            if __w.bit_len() == __before {
                                return Err(__io::EncodeError::new(__io::EncodeErrorKind::Semantic("an element of a `repeat: eos` list encodes to no bytes, so it could not be read back".into())).in_index(__i).in_field(#fid));
                            }
                        },
                    )
                } else {
                    (quote!(), quote!())
                };
                let plain = valid_w_none && infallible(&elem_write);
                let single = single_try(&elem_write).filter(|_| valid_w_none);
                let put = if plain {
                    quote!(#elem_write;)
                } else if let Some(call) = single {
                    quote!(#call #wrap_w_idx;)
                } else {
                    quote! {
                        (|| -> Result<(), __io::EncodeError> { #one_write })() #wrap_w_idx;
                    }
                };
                let each = if plain && !matches!(rep, Repeat::Eos) && !mentions(&elem_write, "__i")
                {
                    quote!(__v in __val.iter())
                } else {
                    quote!((__i, __v) in __val.iter().enumerate())
                };
                quote! {
                    #count_check
                    #until_check
                    for #each {
                        #before
                        #put
                        #empty_check
                    }
                }
            }
        };
        let cond_src = f.cond.as_ref().map(|c| c.src.clone()).unwrap_or_default();
        // The value written: a single value is the element (`__v`), a list `__val`.
        let binder = if matches!(f.repeat, Repeat::None) && !f.varint {
            quote!(__v)
        } else {
            quote!(__val)
        };
        let src_ref = src_ref.unwrap_or_else(|| quote!(&#src));
        let write_stmt = match (&cond_w, is_contents) {
            (_, true) => {
                let FieldKind::Contents(bytes) = &f.kind else {
                    unreachable!()
                };
                let b = Literal::byte_string(bytes);
                quote!(__w.write_bytes(#b);)
            }
            (Some(c), _) => quote! {
                if let ::std::option::Option::Some(#binder) = __io::present(#src_ref, #c, #fid, #cond_src)? {
                    #body_write
                }
            },
            (None, _) => quote! {
                { let #binder = #src_ref; #body_write }
            },
        };
        self.own_io.set(false);
        if let Some(at) = &f.at {
            let w =
                positional::emit_write(self, f, at, &wscope, quote! { #rule_const #write_stmt })?;
            pos_writes.push(match lazy_wrap {
                Some(wrap) => wrap(w),
                None => w,
            });
            return Some(false);
        }
        let stmt = quote! { #rule_const #write_stmt };
        let run_unit = match positional::holder_write(self, t, f, stmt.clone()) {
            Some((decl, stmt)) => {
                write_pre.push(decl);
                writes.push(stmt);
                None
            }
            None => {
                writes.push(stmt);
                run_unit
            }
        };
        if let Some(unit) = run_unit {
            write_runs.push(runs::Member {
                name: fid.to_owned(),
                stmt: writes.len() - 1,
                id: id.clone(),
                ty: full_ty.clone(),
                at: None,
                src: src.clone(),
                unit,
                cond: cond_w.clone(),
                presence: quote!(#fid, #cond_src),
            });
        }

        Some(true)
    }

    /// The term of field `f` in `encoded_len`, and its part of the exact bit count.
    fn field_len(&mut self, f: &Field, fc: &FieldCx, p: &mut TypeParts) {
        let TypeParts { lens, exact, .. } = p;
        let FieldCx {
            ref id, is_derived, ..
        } = *fc;
        // --- encoded length
        if is_derived {
            let FieldKind::Int { bytes, .. } = &f.kind else {
                exact.field(self.s, &self.whole_types, f, &id, true, None);
                return;
            };
            lens.push(lit_usize(*bytes as usize).into_token_stream_usize());
        } else if let FieldKind::Contents(c) = &f.kind {
            lens.push(lit_usize(c.len()).into_token_stream_usize());
        } else {
            // A plain field is measured on `self.x` itself, a conditional one on the value
            // in its `Option`; a fixed-size single value is a literal (summed with the
            // type's other literals in `encoded_len`).
            let (val, deref) = match &f.cond {
                Some(_) => (quote!(__val), quote!(*__val)),
                None => (quote!(self.#id), quote!(self.#id)),
            };
            let list_len = match (&f.repeat, self.fixed_elem_len(f)) {
                _ if f.varint => quote!(::statepack_runtime::bits::leb128_len(#deref)),
                (Repeat::None, Some(n)) => lit_usize(n).into_token_stream_usize(),
                (Repeat::None, _) => self.elem_len(f, &val),
                (_, Some(1)) => quote!(#val.len()),
                (_, Some(n)) => {
                    let n = lit_usize(n);
                    quote!(#val.len() * #n)
                }
                _ => {
                    let one = self.elem_len(f, &quote!(__v));
                    quote!(#val.iter().map(|__v| #one).sum::<usize>())
                }
            };
            lens.push(match &f.cond {
                Some(_)
                    if matches!((&f.repeat, self.fixed_elem_len(f)), (Repeat::None, Some(_)))
                        && !f.varint =>
                {
                    quote!(self.#id.as_ref().map_or(0, |_| #list_len))
                }
                Some(_) => quote!(self.#id.as_ref().map_or(0, |__val| #list_len)),
                None => list_len,
            });
        }
        exact.field(self.s, &self.whole_types, f, &id, is_derived, lens.last());
    }
}

/// The value a `valid` error shows: the value itself (`Debug`), or for a user type its
/// schema name (`a \`header\``), as the interpreter shows it.
fn shown_value(s: &Schema, f: &Field) -> TokenStream {
    match &f.kind {
        FieldKind::User { ty: name, .. } => {
            let written = s
                .type_of(name)
                .map_or(s.type_name(name), |t| t.schema_name.as_str());
            let text = format!("a `{written}`");
            quote!(::std::string::String::from(#text))
        }
        _ => quote!(format!("{:?}", __v)),
    }
}

/// Appends the element `body` reads to `__list`: a `contents` element (`()`) is checked,
/// then `()` is appended.
fn push_of(f: &Field, body: &TokenStream) -> TokenStream {
    if matches!(f.kind, FieldKind::Contents(_)) {
        quote!(#body; __list.push(());)
    } else {
        quote!(__list.push(#body);)
    }
}
