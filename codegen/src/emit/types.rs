//! One schema type's struct and impl: its params, the reader's and writer's bodies, the
//! root type's `decode`/`encode`, and the items beside it.

use super::*;

impl Emitter<'_> {
    pub(super) fn emit_type(&mut self, t: &TypeDef, is_root: bool) -> Option<TokenStream> {
        self.cur_instances = t.instances.clone();
        self.cur_lazy = crate::lazy::lazy_instances(self.s, t, &self.refs);
        self.cur_type.set(t.id);
        let derived = self.derived(t);
        let name = type_ident(&t.name);
        let min_len = lit_usize(*self.min_len.get(&t.id).unwrap_or(&0));
        let mut p = TypeParts::new();
        self.type_params(t, &derived, &mut p)?;
        for f in &t.fields {
            self.emit_field(t, f, &derived, &mut p)?;
        }
        let has_bits = t
            .fields
            .iter()
            .any(|f| f.at.is_none() && crate::bits::is_bit_field(f));
        let TypeParts {
            mut struct_fields,
            mut reads,
            post_read_checks,
            write_pre,
            mut writes,
            mut lens,
            mut exact,
            mut ctor,
            extra_items,
            param_args,
            param_tys,
            ctx_write_args,
            ctx_members,
            unaligned,
            phase,
            pos_writes,
            read_runs,
            write_runs,
            ..
        } = p;

        if self.unread_types.contains(&t.id) {
            unread_members(
                &mut struct_fields,
                &mut ctor,
                &mut writes,
                &mut lens,
                &mut exact,
            );
        }
        // Under Kaitai's rules a type may end inside a byte: the enclosing type goes on from
        // that bit (a bit field) or from the next byte (anything else), as Kaitai Struct's
        // generated code does.
        if is_root && unaligned && phase != Some(0) && !self.s.strict {
            // The root type ends inside a byte: the bits after its last field are kept.
            reads.push(quote!(let __end_pad: u8 = __r.align_to_byte_keep();));
            writes.push(quote!(__w.align_to_byte_with(self.__end_pad);));
            struct_fields.push(quote! {
                #[doc = " The bits after the last bit field, up to the end of its byte, as read; written back."]
                #[serde(default)]
                pub __end_pad: u8
            });
            ctor.push(quote!(__end_pad));
        }
        if unaligned && phase != Some(0) && self.s.strict {
            let kp = if t.key_path.is_empty() {
                "seq".to_owned()
            } else {
                format!("{}.seq", t.key_path)
            };
            let last = t.fields.last().map_or(t.pos, |f| f.pos);
            self.err(
                last,
                &kp,
                format!(
                    "type `{}` may end inside a byte (its bit fields do not add up to whole bytes)",
                    t.name
                ),
                crate::bits::unaligned_end_hint(),
            );
        }
        // A plain type (no params, instances, positions or computed byte order) has one
        // reader body, `read_into`. Every fused run reads its bytes in one step and, for a
        // tracer or a failure, its fields one by one from the run's table in the runtime
        // (`ByteReader::run`), so no reader holds a field-by-field copy of a run.
        let whole_fallback = self.plain_reader(t) && t.end_zeros.is_none();
        runs::fuse_reads(&mut reads, &read_runs);
        runs::fuse_writes(&mut writes, &write_runs);
        writes.extend(pos_writes);
        let write_pre = used_binds(write_pre, &writes);
        if let Some((read, member, item)) = positional::io_end_member(t, self.member_io) {
            reads.push(read);
            struct_fields.push(member);
            ctor.push(item);
        }
        if is_root && self.has_positional() {
            // The bytes after the seq up to the furthest positional instance belong to the
            // root: kept and written back under the instances, which the root lays out last.
            let tail = self.beyond_read();
            reads.push(quote!(let __beyond: ::std::vec::Vec<u8> = __r.#tail().to_vec();));
            struct_fields.push(quote! {
                #[doc = " The bytes after the last `seq` field up to the furthest byte a positional instance"]
                #[doc = " read, as read: written back under the positional instances (which must agree with"]
                #[doc = " every byte written in sequence and with each other)."]
                #[serde(default, skip_serializing_if = "Vec::is_empty", with = "::statepack_runtime::bytes_json")]
                pub __beyond: ::std::vec::Vec<u8>
            });
            ctor.push(quote!(__beyond));
            writes.push(quote!(__w.lay_out_positional(&self.__beyond)?;));
            exact.fallback("positional instances are laid out by the root's writer");
        }
        // A type with bit fields counts its bits (see `exact_len`); kept bytes and encoded
        // strings are measured by writing.
        let (len_doc, len_body) = if t.end_zeros.is_some() {
            exact_len::fallback_body(
                "positional instances laid out by the type and its trailing zero bytes",
            )
        } else if t.fields.iter().any(|f| {
            hidden_prefix(f).is_some()
                || matches!(f.kind, FieldKind::Str { encoding, .. } if !plain_encoding(encoding))
        }) {
            exact_len::fallback_body("kept terminator or processed bytes, or a string in an encoding other than UTF-8 and ASCII")
        } else if has_bits {
            exact.body()
        } else {
            (quote!(), len_sum(&lens))
        };
        let doc = self.doc_for(
            t.doc.as_deref(),
            t.pos,
            if is_root {
                "The root type of the schema."
            } else {
                ""
            },
        );
        self.cur_field.replace(None);
        let (inst_methods, inst_members) = self.emit_instances(t, &derived)?;
        let display = self.emit_to_string(t, &derived, &name)?;
        let io_end = crate::instances::keeps_io_end(t, self.member_io);
        let reflect = reflect::type_impls(t, &derived, (&inst_members, io_end), &self.cur_lazy);
        let produced_lens = Self::produced_len_methods(t, &derived);
        let interop = binrw::impls(
            &self.opts,
            &binrw::TypeShape {
                name: &name,
                params: param_tys,
                has_bits,
                bits_first: t.fields.first().is_some_and(crate::bits::is_bit_field),
                aligned_end: is_root || !unaligned || phase == Some(0),
            },
        );
        let bitfield_conv = self.bitfield_view(t, &name);
        let root_api = Self::root_api(self.s, t, &name, is_root);
        let (read_inline, mut read_body, read_into) =
            Self::reader_bodies((&reads, &post_read_checks, &ctor), whole_fallback);
        if let Some(n) = t.end_zeros {
            // The type lays out the instances placed in its stream and ends with `n` zero
            // bytes; its reader checks that the rest of the stream is that layout of the
            // `-sp-align` instances it read.
            let zeros = lit_usize(n as usize);
            read_body = quote! {
                let __mark = __r.aligned_mark();
                let __v: Self = (|| -> Result<Self, __io::DecodeError> { #read_body })()?;
                let __seq_end = __r.offset() as usize;
                __r.check_packed_rest(__mark, __seq_end, #zeros)?;
                Ok(__v)
            };
            let n = lit_usize(n as usize);
            writes.insert(0, quote!(let __mark = __w.placed_mark();));
            writes.push(quote!(__w.end_with_zeros(__mark, #n)?;));
        }
        let writer = if ctx_write_args.is_empty() {
            quote! {
                #[doc = " Writes this value (counts, lengths and sums derived); an [`EncodeError`](::statepack_runtime::io::EncodeError) names the field."]
                pub fn write_to(&self, __w: &mut __io::ByteWriter) -> Result<(), __io::EncodeError> {
                    #(#write_pre)*
                    #(#writes)*
                    Ok(())
                }
            }
        } else {
            quote! {
                #[doc = " Writes this value on its own, with its `__ctx_` members as the values of its"]
                #[doc = " `_parent`/`_root` paths (the enclosing type's writer gives them instead, see"]
                #[doc = " [`Self::write_with_context`]); counts, lengths and sums are derived from the data."]
                #[doc = ""]
                #[doc = " Errors: [`EncodeError`](::statepack_runtime::io::EncodeError) naming the field, never a wrapped value."]
                pub fn write_to(&self, __w: &mut __io::ByteWriter) -> Result<(), __io::EncodeError> {
                    self.write_with_context(__w #(, #ctx_members)*)
                }

                #[doc = " Writes this value with the values of its `_parent`/`_root` paths (its context"]
                #[doc = " params, in the order of its `__ctx_` members) as the enclosing type computes them"]
                #[doc = " from the value being written; the `__ctx_` members are not used."]
                #[doc = ""]
                #[doc = " Errors: [`EncodeError`](::statepack_runtime::io::EncodeError) naming the field, never a wrapped value."]
                pub fn write_with_context(&self, __w: &mut __io::ByteWriter #(, #ctx_write_args)*) -> Result<(), __io::EncodeError> {
                    #(#write_pre)*
                    #(#writes)*
                    Ok(())
                }
            }
        };
        let schema_allows = schema_lint_allows(t);
        let derive_default = self.default_derive();
        let ((derive_eq, eq_impl), (derive_debug, debug_impl)) =
            super::eq::kept_out(&name, &mut struct_fields);
        Some(quote! {
            #doc
            #[derive(#derive_debug Clone, #derive_default #derive_eq serde::Serialize, serde::Deserialize)]
            pub struct #name { #(#struct_fields,)* }
            #eq_impl
            #debug_impl

            #schema_allows
            impl #name {
                #[doc = " The smallest number of bytes this type can take; list counts are checked against it before anything is allocated."]
                pub const MIN_LEN: usize = #min_len;

                #[doc = " Reads one value at the reader's position; a [`DecodeError`](::statepack_runtime::io::DecodeError) names the field path and byte offset."]
                #read_inline
                pub fn read_from<T: __io::Tracer>(__r: &mut __io::ByteReader<'_, T> #(, #param_args)*) -> Result<Self, __io::DecodeError> {
                    #read_body
                }
                #read_into

                #writer

                #[doc = " The number of bytes [`Self::write_to`] writes."]
                #len_doc
                pub fn encoded_len(&self) -> usize {
                    #len_body
                }

                #(#inst_methods)*
            }
            #root_api
            #reflect
            #interop
            #bitfield_conv
            #display
            #produced_lens
            #(#extra_items)*
        })
    }

    /// For the root type: `decode`, `decode_traced` and `encode`, and its `RootType` impl when it
    /// takes no `params` (nothing for another type).
    pub(super) fn root_api(
        s: &Schema,
        t: &TypeDef,
        name: &proc_macro2::Ident,
        is_root: bool,
    ) -> TokenStream {
        let root_params: Vec<TokenStream> = t
            .params
            .iter()
            .filter(|p| p.context.is_none())
            .map(|p| {
                let id = field_ident(&p.id);
                let (rty, _) = param_rust_ty(s, &p.kind);
                if p.optional {
                    quote!(#id: ::std::option::Option<#rty>)
                } else {
                    quote!(#id: #rty)
                }
            })
            .collect();
        let top_args: Vec<TokenStream> = t
            .params
            .iter()
            .map(|p| {
                if p.context.is_some() {
                    quote!(::std::option::Option::None)
                } else {
                    let id = field_ident(&p.id);
                    quote!(#id)
                }
            })
            .collect();
        // At the top level a recursive root's `_parent`/`_root` paths have no value.
        let top_ctx: Vec<TokenStream> = t
            .params
            .iter()
            .filter(|p| p.context.is_some())
            .map(|_| quote!(&::std::option::Option::None))
            .collect();
        let top_write = if top_ctx.is_empty() {
            quote!(self.write_to(&mut w))
        } else {
            quote!(self.write_with_context(&mut w #(, #top_ctx)*))
        };
        let params_doc = if root_params.is_empty() {
            quote!()
        } else {
            quote!(#[doc = ""] #[doc = " The root type's `params` are the arguments after `bytes`, in schema order."])
        };
        let root_trait = if root_params.is_empty() {
            root_type::root_type_impl(&name, top_args.len())
        } else {
            quote!()
        };
        let root_api = if is_root {
            quote! {
                impl #name {
                    #[doc = " Decodes a whole file: the data must end exactly where the root type ends."]
                    #[doc = ""]
                    #[doc = " Errors: any [`DecodeError`](::statepack_runtime::io::DecodeError), naming the field path and byte offset."]
                    #params_doc
                    pub fn decode(bytes: &[u8] #(, #root_params)*) -> Result<Self, __io::DecodeError> {
                        let mut r = __io::ByteReader::new(bytes);
                        let v = Self::read_from(&mut r #(, #top_args)*)?;
                        r.finish()?;
                        Ok(v)
                    }
                    #[doc = " Decodes a whole file while recording its structure (every field's byte range and value)."]
                    #[doc = " The tree is returned even when decoding fails, up to the failing field."]
                    pub fn decode_traced(bytes: &[u8] #(, #root_params)*) -> (Result<Self, __io::DecodeError>, __io::TraceNode) {
                        let mut r = __io::ByteReader::with_tracer(bytes, __io::TreeTracer::new(SCHEMA_ID));
                        let v = Self::read_from(&mut r #(, #top_args)*).and_then(|v| { r.finish()?; Ok(v) });
                        let end = r.offset();
                        (v, r.tracer.finish(end))
                    }
                    #[doc = " Encodes to a new byte vector; counts, lengths and sums are derived from the data."]
                    #[doc = ""]
                    #[doc = " Errors: [`EncodeError`](::statepack_runtime::io::EncodeError) when a value does not fit its stored type or breaks a schema rule."]
                    pub fn encode(&self) -> Result<::std::vec::Vec<u8>, __io::EncodeError> {
                        let mut w = __io::ByteWriter::with_capacity(self.encoded_len());
                        #top_write?;
                        Ok(w.into_bytes())
                    }
                }
                #root_trait
            }
        } else {
            quote!()
        };
        root_api
    }

    /// The body of `read_from` and the items beside it. For a `whole_fallback` type,
    /// `read_from` calls `read_into`, the one reader body, which hands the value to a closure
    /// (lists push it straight into the list: returning it through a `Result` made LLVM
    /// build it in a stack slot and copy it, measured 2x slower in the SNAP decode bench).
    /// Else `read_from` holds the statements. `parts`: the reader's statements, the checks
    /// after the fields and the constructor's entries.
    pub(super) fn reader_bodies(
        parts: (&[TokenStream], &[TokenStream], &[TokenStream]),
        whole_fallback: bool,
    ) -> (TokenStream, TokenStream, TokenStream) {
        let (reads, post_read_checks, ctor) = parts;
        if !whole_fallback {
            let body = quote! {
                #(#reads)*
                #(#post_read_checks)*
                Ok(Self { #(#ctor,)* })
            };
            return (quote!(), body, quote!());
        }
        // The reader is small and called from the enclosing reader's list loops: inlining
        // it keeps an element read inside its loop.
        let into = quote! {
            #[doc = " As [`Self::read_from`], handing the value to `__put` (not called on an error)."]
            #[inline(always)]
            pub fn read_into<T: __io::Tracer, __R, __F: FnOnce(Self) -> __R>(__r: &mut __io::ByteReader<'_, T>, __put: __F) -> Result<__R, __io::DecodeError> {
                #(#reads)*
                #(#post_read_checks)*
                Ok(__put(Self { #(#ctor,)* }))
            }
        };
        (
            quote!(#[inline(always)]),
            quote!(Self::read_into(__r, |__v| __v)),
            into,
        )
    }

    /// The params of `t` (members, reader arguments, scope entries), its `meta.endian` switch
    /// and the values its writer derives (computed before anything is written).
    pub(super) fn type_params(
        &mut self,
        t: &TypeDef,
        derived: &HashMap<String, Derived>,
        p: &mut TypeParts,
    ) -> Option<()> {
        let TypeParts {
            struct_fields,
            reads,
            write_pre,
            ctor,
            rscope,
            wscope,
            param_args,
            param_tys,
            ctx_write_args,
            ctx_members,
            ..
        } = p;
        // A root type with `params` (a schema for others to import, as in Kaitai) takes them
        // in `decode`; its context params (a recursive root's `_parent`/`_root` paths) are
        // `None` at the top.
        for p in &t.params {
            // A param is a member like a field or an instance: one name, one member.
            let clash = t
                .fields
                .iter()
                .map(|f| (f.id.as_str(), f.pos, "field"))
                .chain(
                    t.instances
                        .iter()
                        .map(|i| (i.id.as_str(), i.pos, "instance")),
                )
                .find(|(n, _, _)| *n == p.id);
            if let Some((n, pos, what)) = clash {
                self.err(
                    pos,
                    &t.key_path,
                    format!("{what} `{n}` has the name of a param (a duplicate)"),
                    "rename the param or the member",
                );
            }
            let id = field_ident(&p.id);
            let (rty, ty) = param_rust_ty(self.s, &p.kind);
            let (rty, ty) = if p.optional {
                (quote!(::std::option::Option<#rty>), Ty::Opt(Box::new(ty)))
            } else {
                (rty, ty)
            };
            let pdoc = if p.context.is_some() {
                self.doc_for(p.doc.as_deref(), p.pos, "")
            } else {
                self.doc_for(p.doc.as_deref(), p.pos, &format!("Parameter `{}`: given by the field that reads this type, not stored in the data.", p.id))
            };
            let pn = &p.id;
            struct_fields.push(quote! { #pdoc #[serde(rename = #pn)] pub #id: #rty });
            ctor.push(quote!(#id));
            param_args.push(quote!(#id: #rty));
            param_tys.push(rty.clone());
            rscope.vars.push((p.id.clone(), ty.clone()));
            if p.context.is_some() {
                // Context params are arguments of the writer (see `child_write`).
                if ctx_by_value(self.s, p) {
                    ctx_write_args.push(quote!(#id: #rty));
                    ctx_members.push(quote!(self.#id));
                } else {
                    ctx_write_args.push(quote!(#id: &#rty));
                    ctx_members.push(quote!(&self.#id));
                }
            } else {
                write_pre.push(match ty {
                    Ty::Int | Ty::Float | Ty::Enum(_) | Ty::Bool => quote!(let #id = self.#id;),
                    _ => quote!(let #id = &self.#id;),
                });
            }
            wscope.vars.push((p.id.clone(), ty));
        }
        // `meta.endian` as a switch: the byte order is decided before anything is read.
        if let Some(sw) = &t.endian_switch {
            let (r, w) = self.endian_decide(sw, &rscope, &wscope)?;
            reads.push(r);
            write_pre.push(w);
            for sc in [&mut *rscope, &mut *wscope] {
                sc.vars.push((crate::endian::IS_LE.to_owned(), Ty::Bool));
            }
        }

        // On write every derived value is computed first, so expressions anywhere may use it.
        for f in &t.fields {
            if let Some(d) = derived.get(&f.id) {
                let FieldKind::Int { bytes, signed, .. } = &f.kind else {
                    continue;
                };
                let measured = match d {
                    Derived::Bytes(target) => t
                        .fields
                        .iter()
                        .find(|g| &g.id == target)
                        .is_some_and(|g| self.measured_with_context(g)),
                    _ => false,
                };
                if measured {
                    // Bound where its field is measured by writing (see `measured_pre`).
                    wscope.vars.push((f.id.clone(), Ty::Int));
                    continue;
                }
                if let Derived::Stored(..) = d {
                    // Bound where its processed field's stored bytes are produced, once the
                    // fields the processor may use are bound (see `produced_pre`).
                    wscope.vars.push((f.id.clone(), Ty::Int));
                    continue;
                }
                let id = field_ident(&f.id);
                let rty = int_ty(*bytes, *signed);
                let tyname = int_ty_name(*bytes, *signed);
                let fid = &f.id;
                let value = match d {
                    Derived::Count(list) => {
                        let l = field_ident(list);
                        group(quote!(self.#l.len() as i128))
                    }
                    Derived::Bytes(target) => {
                        let g = t.fields.iter().find(|g| &g.id == target)?;
                        let l = field_ident(target);
                        match &g.kind {
                            FieldKind::User { .. } | FieldKind::Switch { .. } => {
                                group(quote!(self.#l.encoded_len() as i128))
                            }
                            _ => group(quote!(self.#l.len() as i128)),
                        }
                    }
                    Derived::Sum(list, field) => {
                        let l = field_ident(list);
                        let fi = field_ident(field);
                        quote!(self.#l.iter().map(|__e| __e.#fi as i128).sum::<i128>())
                    }
                    Derived::Stored(..) => continue,
                };
                write_pre.push(quote! {
                    let #id: #rty = __io::fit(#value, #tyname).map_err(|e| e.in_field(#fid))?;
                });
                wscope.vars.push((f.id.clone(), Ty::Int));
            }
        }
        Some(())
    }
}

/// The clippy lints that are about what the schema's author chose, not about the generated
/// code: a member named as a placeholder (`foo`, `baz`, `quux`: clippy's
/// `disallowed_names`, for the locals the reader and writer bind per member) and a float
/// literal close to a constant such as pi (`approx_constant`: the schema's literal is kept
/// as written). Allowed on the type's impl only where the type has such a name or literal.
/// The writer's statements before its writes, without the bindings of members
/// (`let x = self.x;`, `let x = &self.x;`) that nothing after them names: each member is
/// bound for the writer's expressions, which name only some.
fn used_binds(pre: Vec<TokenStream>, writes: &[TokenStream]) -> Vec<TokenStream> {
    let mut keep = vec![true; pre.len()];
    for i in (0..pre.len()).rev() {
        let Some(id) = member_bind(&pre[i]) else {
            continue;
        };
        let named = pre[i + 1..]
            .iter()
            .zip(&keep[i + 1..])
            .any(|(s, k)| *k && names_ident(s.clone(), &id))
            || writes.iter().any(|s| names_ident(s.clone(), &id));
        keep[i] = named;
    }
    pre.into_iter()
        .zip(keep)
        .filter_map(|(s, k)| k.then_some(s))
        .collect()
}

/// `x` of a statement `let x = self.x;` or `let x = &self.x;`.
fn member_bind(s: &TokenStream) -> Option<String> {
    use proc_macro2::TokenTree as T;
    let tt: Vec<T> = s.clone().into_iter().collect();
    let p = |t: &T, c: char| matches!(t, T::Punct(x) if x.as_char() == c);
    let id = |t: &T| match t {
        T::Ident(i) => Some(i.to_string()),
        _ => None,
    };
    let rest = match tt.as_slice() {
        [l, x, eq, rest @ ..] if id(l).as_deref() == Some("let") && p(eq, '=') => (id(x)?, rest),
        _ => return None,
    };
    let (x, rest) = rest;
    let rest = match rest {
        [amp, rest @ ..] if p(amp, '&') => rest,
        _ => rest,
    };
    match rest {
        [sf, dot, m, semi]
            if id(sf).as_deref() == Some("self")
                && p(dot, '.')
                && id(m).as_deref() == Some(x.as_str())
                && p(semi, ';') =>
        {
            Some(x)
        }
        _ => None,
    }
}

/// The sum of a type's length terms, its literal terms added up into one.
fn len_sum(lens: &[TokenStream]) -> TokenStream {
    let mut fixed = 0usize;
    let mut terms = Vec::new();
    for l in lens {
        match syn::parse2::<syn::LitInt>(l.clone()).map(|n| n.base10_parse::<usize>()) {
            Ok(Ok(n)) => fixed += n,
            _ => terms.push(l),
        }
    }
    if terms.is_empty() {
        let n = lit_usize(fixed);
        return quote!(#n);
    }
    let fixed = (fixed > 0).then(|| {
        let n = lit_usize(fixed);
        quote!(#n +)
    });
    quote!(#fixed #(#terms)+*)
}

fn schema_lint_allows(t: &TypeDef) -> TokenStream {
    const PLACEHOLDERS: [&str; 3] = ["foo", "baz", "quux"];
    let named = |n: &str| PLACEHOLDERS.contains(&n);
    let mut lints = Vec::new();
    if t.fields.iter().any(|f| named(&f.id))
        || t.params.iter().any(|p| named(&p.id))
        || t.instances.iter().any(|i| named(&i.id))
    {
        lints.push(quote!(clippy::disallowed_names));
    }
    let mut copy = t.clone();
    if crate::context::type_exprs(&mut copy)
        .iter()
        .any(|(e, _)| has_float_literal(&e.expr))
    {
        lints.push(quote!(clippy::approx_constant));
    }
    // A positional `contents` instance is read into a `()` kept for its position.
    if t.fields
        .iter()
        .any(|f| f.at.is_some() && matches!(f.kind, FieldKind::Contents(_)))
    {
        lints.push(quote!(clippy::let_unit_value));
    }
    if lints.is_empty() {
        quote!()
    } else {
        quote!(#[allow(#(#lints),*)])
    }
}

/// Whether `e` holds a float literal.
fn has_float_literal(e: &Expr) -> bool {
    match e {
        Expr::Float(_) => true,
        Expr::Unary(_, a) | Expr::Attr(a, _) | Expr::Cast(a, _) => has_float_literal(a),
        Expr::Binary(_, a, b) | Expr::Index(a, b) => has_float_literal(a) || has_float_literal(b),
        Expr::Ternary(c, a, b) => {
            has_float_literal(c) || has_float_literal(a) || has_float_literal(b)
        }
        Expr::Call(a, _, args) => has_float_literal(a) || args.iter().any(has_float_literal),
        Expr::List(items) => items.iter().any(has_float_literal),
        _ => false,
    }
}

impl Emitter<'_> {
    /// The conversions of `t`'s modular-bitfield view (option `modular_bitfield`), its
    /// declaration kept for the module's `bitfield` submodule; nothing when it has none.
    fn bitfield_view(&mut self, t: &TypeDef, name: &proc_macro2::Ident) -> TokenStream {
        match modbits::view(self.s, t, name) {
            Some((decl, conv))
                if self.opts.modular_bitfield && !self.unread_types.contains(&t.id) =>
            {
                self.bitfield_views.push(decl);
                conv
            }
            _ => TokenStream::new(),
        }
    }
}

/// The members, constructor entries, writes and length terms of the bytes a type read in a
/// sized field keeps unread (`__unread`, `__unread_pad`; see `shape::unread_types`).
fn unread_members(
    struct_fields: &mut Vec<TokenStream>,
    ctor: &mut Vec<TokenStream>,
    writes: &mut Vec<TokenStream>,
    lens: &mut Vec<TokenStream>,
    exact: &mut exact_len::Exact,
) {
    struct_fields.push(quote! {
            #[doc = " Bytes at the end of the sized field holding this value that its fields did not"]
            #[doc = " read (Kaitai Struct skips them). Written back after the fields; empty when the"]
            #[doc = " value filled its size or is not in a sized field."]
            #[serde(default, skip_serializing_if = "Vec::is_empty", with = "::statepack_runtime::bytes_json")]
            pub __unread: ::std::vec::Vec<u8>
        });
    struct_fields.push(quote! {
        #[doc = " The bits after this value's last bit field, up to the end of that byte, when the"]
        #[doc = " value ends inside a byte of its sized field; written back."]
        #[serde(default)]
        pub __unread_pad: u8
    });
    ctor.push(quote!(__unread: ::std::vec::Vec::new()));
    ctor.push(quote!(__unread_pad: 0));
    writes.push(quote!(__w.align_to_byte_with(self.__unread_pad);));
    writes.push(quote!(__w.write_bytes(&self.__unread);));
    lens.push(quote!(self.__unread.len()));
    exact.aligned_bytes(quote!(self.__unread.len()));
}
