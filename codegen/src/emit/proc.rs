//! The processors of `process` fields: the built-in ones (`zlib`, `xor`, `rol`, `ror`) and
//! the custom ones the build's options name.

use super::*;

impl Emitter<'_> {
    /// The statements that put the bytes of value `__v` of processed field `f` in `__d:
    /// &[u8]`, before the processor runs on them: a user type written into a writer of its
    /// own (its instances laid out in it), raw bytes as they are.
    pub(super) fn bytes_to_process(
        &mut self,
        f: &Field,
        scope: &Scope,
        kp: &str,
    ) -> Option<TokenStream> {
        Some(match &f.kind {
            FieldKind::User { ty: name, .. } => {
                let (checks, call) =
                    self.child_write(f, name, scope, kp, quote!(__v), quote!(&mut __sw))?;
                quote! {
                    #checks
                    let mut __sw = __io::ByteWriter::new();
                    #call?;
                    let __d: &[u8] = &__sw.into_stream_bytes(__w)?;
                }
            }
            _ => quote!(let __d: &[u8] = &__v[..];),
        })
    }

    /// The runtime `Processor` of a field's `process` (and the statements that compute its
    /// key), with expressions in `scope`.
    pub(super) fn processor(
        &mut self,
        f: &Field,
        scope: &Scope,
    ) -> Option<(TokenStream, TokenStream)> {
        let kp = format!("{}.process", f.key_path);
        Some(match f.process.as_ref()? {
            Process::Zlib => (quote!(), quote!(__io::Processor::Zlib)),
            Process::Xor(ProcArg::Bytes(b)) => {
                let lit = Literal::byte_string(b);
                (quote!(), quote!(__io::Processor::Xor(#lit)))
            }
            Process::Xor(ProcArg::Expr(e)) => {
                let (ts, ty) = self.expr(e, scope, &kp)?;
                let setup = match ty {
                    Ty::Int => match &e.expr {
                        // A literal key is its byte.
                        Expr::Int(v) => {
                            let b = Literal::u8_suffixed((*v & 0xff) as u8);
                            quote!(let __key: &[u8] = &[#b];)
                        }
                        _ => {
                            let low = group(quote!(#ts & 0xff));
                            quote!(let __key: &[u8] = &[#low as u8];)
                        }
                    },
                    Ty::Bytes => quote!(let __key: &[u8] = AsRef::<[u8]>::as_ref(&#ts);),
                    other => {
                        self.err(
                            e.pos,
                            &kp,
                            format!("the xor key `{}` is {}", e.src, ty_name(self.s, &other)),
                            "give an integer (one byte) or a byte field",
                        );
                        return None;
                    }
                };
                (setup, quote!(__io::Processor::Xor(__key)))
            }
            Process::Rol(e) | Process::Ror(e) => {
                let n = self.expect_ty(e, scope, &kp, Ty::Int)?;
                let v = if matches!(f.process, Some(Process::Rol(_))) {
                    quote!(Rol)
                } else {
                    quote!(Ror)
                };
                (quote!(), quote!(__io::Processor::#v(#n)))
            }
            Process::Custom { name, args } => {
                let path = crate::process::processor_path(&self.opts, name)
                    .map_err(|m| {
                        self.err(
                            f.pos_of("process"),
                            &kp,
                            m,
                            "give a Rust path such as `crate::codecs::MyFx`",
                        )
                    })
                    .ok()?;
                let mut vals = Vec::new();
                for a in args {
                    let (ts, ty) = self.expr(a, scope, &kp)?;
                    vals.push(match ty {
                        Ty::Int | Ty::Bool | Ty::Float => ts,
                        Ty::Str => quote!(AsRef::<str>::as_ref(&#ts)),
                        Ty::Bytes => quote!(AsRef::<[u8]>::as_ref(&#ts)),
                        other => {
                            self.err(
                                a.pos,
                                &kp,
                                format!(
                                    "processor argument `{}` is {}",
                                    a.src,
                                    ty_name(self.s, &other)
                                ),
                                "give integers, conditions, floats, strings or byte arrays",
                            );
                            return None;
                        }
                    });
                }
                (
                    quote!(let __proc = #path::new(#(#vals),*);),
                    quote!(&__proc),
                )
            }
        })
    }

    /// The runtime functions that apply the processor of `f` on read and write, and whether
    /// the write side returns a `Result`.
    pub(super) fn process_fns(f: &Field) -> (TokenStream, TokenStream, bool) {
        match f.process {
            Some(Process::Custom { .. }) => (
                quote!(::statepack_runtime::process::unprocess_custom),
                quote!(::statepack_runtime::process::reprocess_custom),
                true,
            ),
            _ => (quote!(__io::unprocess), quote!(__io::reprocess), false),
        }
    }
}

impl Emitter<'_> {
    /// Reads a processed switch (`size` and `process` on a `switch-on` of types): the sized
    /// stored bytes are taken and kept, processed (charged to the file's processed-bytes
    /// budget), and `inner` (the switch's read at `__r`) runs on a reader of the processed
    /// bytes; what the selected case leaves unread is kept in it (Kaitai's rules), or is an
    /// error for a strict field.
    pub(super) fn proc_switch_read(
        &mut self,
        f: &Field,
        scope: &Scope,
        en: &proc_macro2::Ident,
        inner: TokenStream,
    ) -> Option<TokenStream> {
        let kp = f.key_path.clone();
        let FieldKind::Switch {
            size: Some(size), ..
        } = &f.kind
        else {
            return None;
        };
        let take = match self.size_value(size, scope, &kp)? {
            Some(n) => quote!(__r.take_sized(#n)),
            None => quote!(Ok::<_, __io::DecodeError>(__r.take_rest())),
        };
        let (setup, proc_) = self.processor(f, scope)?;
        let unfn_within = if matches!(f.process, Some(Process::Custom { .. })) {
            quote!(::statepack_runtime::process::unprocess_custom_within)
        } else {
            quote!(__io::unprocess_within)
        };
        let stored = temp_for("stored", &f.id);
        let keep = if matches!(f.repeat, Repeat::None) {
            quote!(#stored = ::std::option::Option::Some(__s.to_vec());)
        } else {
            quote!(#stored.push(__s.to_vec());)
        };
        let finish = if f.strict {
            quote!(__r.finish()?;)
        } else {
            let stores = self.switch_variants(f).into_iter().map(|(vi, _, _)| {
                quote!(#en::#vi(__x) => { __x.__unread_pad = __pad; __x.__unread = __rest.to_vec(); })
            });
            let no_case = if has_no_case(f) {
                quote!(#en::NoCase(_) => {})
            } else {
                quote!()
            };
            quote! {
                let __pad = __r.align_to_byte_keep();
                let __rest = __r.take_rest();
                match &mut __v { #(#stores)* #no_case }
            }
        };
        Some(quote! {{
            let __at = __r.offset();
            match #take {
                Ok(__s) => {
                    #setup
                    #keep
                    #unfn_within(#proc_, __s, __at, __r.processed_room()).and_then(|__d| {
                        __r.charge_processed(__d.len(), __at)?;
                        let mut __sub = __io::ByteReader::new(&__d).sharing(__r.processed_share());
                        let __v = {
                            let __r = &mut __sub;
                            #[allow(unused_mut)]
                            let mut __v = #inner?;
                            #finish
                            __v
                        };
                        __r.add_processed(__sub.processed_used());
                        Ok(__v)
                    })
                }
                Err(e) => Err(e),
            }
        }})
    }

    /// Writes a processed switch: `arms` (the switch's write of `__v` to `__w`, after
    /// `sw_decl` binds the switch value) into a writer of its own, the bytes processed (the
    /// kept stored bytes while they still give the value), checked against the size and
    /// written.
    pub(super) fn proc_switch_write(
        &mut self,
        f: &Field,
        scope: &Scope,
        sw_decl: TokenStream,
        arms: TokenStream,
    ) -> Option<TokenStream> {
        let kp = f.key_path.clone();
        let FieldKind::Switch {
            size: Some(size), ..
        } = &f.kind
        else {
            return None;
        };
        let (setup, proc_) = self.processor(f, scope)?;
        let (_, refn, re_fallible) = Self::process_fns(f);
        let re_q = if re_fallible { quote!(?) } else { quote!() };
        let stored = temp_for("stored", &f.id);
        let kept = if matches!(f.repeat, Repeat::None) {
            quote!(self.#stored.as_deref())
        } else {
            quote!(self.#stored.get(__i).map(|__t| __t.as_slice()))
        };
        let check = self.size_check(f, size, scope, &kp, quote!(__s.len()))?;
        let process = quote! {
            #setup
            #refn(#proc_, __d, #kept)#re_q
        };
        let process = block_value(self.proc_args_after(f, size, scope, &kp, process)?);
        Some(quote!({
            #sw_decl
            let mut __pw = __io::ByteWriter::new();
            {
                let __w = &mut __pw;
                #arms
            }
            let __d: &[u8] = &__pw.into_stream_bytes(__w)?;
            let __s = #process;
            #check
            __w.write_bytes(&__s);
        }))
    }

    /// For a processed field whose size the writer derives ([`Derived::Stored`]), the writer's
    /// statements (run before anything is written, once the fields the processor's arguments
    /// use are bound) that produce its stored bytes into `__produced_<field>` and bind the
    /// length field `len` to their length plus `adj` (`4` for `size: len - 4`): the kept
    /// stored bytes while they still give the value, else the value processed anew. Errors name the
    /// processed field, and the length field when the length does not fit its type.
    pub(super) fn produced_pre(
        &mut self,
        f: &Field,
        (len, adj): (&Field, i128),
        scope: &Scope,
    ) -> Option<TokenStream> {
        let adj = plus(adj);
        let FieldKind::Int { bytes, signed, .. } = &len.kind else {
            return None;
        };
        let kp = f.key_path.clone();
        let id = field_ident(&f.id);
        let fid = &f.id;
        let lid = field_ident(&len.id);
        let lfid = &len.id;
        let rty = int_ty(*bytes, *signed);
        let tyname = int_ty_name(*bytes, *signed);
        let produced = temp_for("produced", &f.id);
        let stored = temp_for("stored", &f.id);
        let (setup, proc_) = self.processor(f, scope)?;
        let value = self.bytes_to_process(f, scope, &kp)?;
        let reprocess = quote!(__io::reprocess(#proc_, __d, self.#stored.as_deref()).into_owned());
        // A closure names the field in an error; bytes put together without one need none.
        let produce = if fields::infallible(&value) && fields::infallible(&setup) {
            quote!({
                let __v = &self.#id;
                #value
                #setup
                #reprocess
            })
        } else {
            quote!((|| -> Result<::std::vec::Vec<u8>, __io::EncodeError> {
                let __v = &self.#id;
                #value
                #setup
                Ok(#reprocess)
            })().map_err(|e: __io::EncodeError| e.in_field(#fid))?)
        };
        Some(quote! {
            let #produced: ::std::vec::Vec<u8> = #produce;
            let #lid: #rty = __io::fit(#produced.len() as i128 #adj, #tyname).map_err(|e| e.in_field(#lfid))?;
        })
    }

    /// For a type with processed fields whose sizes the writer derives, hidden methods giving
    /// each length as the writer derives it (`__produced_len_<field>`), for the dynamic view,
    /// value instances and other types' expressions: the length of the kept stored bytes
    /// while they still give the value, else of the value compressed anew (`zlib`) or of the
    /// value's own bytes (`xor`, `rol`, `ror` keep the length). A user-type value that cannot
    /// be written (its own writer fails) counts what it wrote up to the error; the writer
    /// itself reports that error.
    pub(super) fn produced_len_methods(
        t: &TypeDef,
        derived: &HashMap<String, Derived>,
    ) -> TokenStream {
        let name = type_ident(&t.name);
        let mut methods = Vec::new();
        let mut targets: Vec<(&String, i128)> = derived
            .values()
            .filter_map(|d| match d {
                Derived::Stored(target, adj) => Some((target, *adj)),
                _ => None,
            })
            .collect();
        targets.sort();
        for (target, adj) in targets {
            let Some(f) = t.fields.iter().find(|g| &g.id == target) else {
                continue;
            };
            let id = field_ident(&f.id);
            let stored = temp_for("stored", &f.id);
            let method = temp_for("produced_len", &f.id);
            let adj = plus(adj);
            let doc = format!(
                " The length of the stored (processed) bytes of `{}`, as the writer derives it.",
                f.id
            );
            let value = match &f.kind {
                FieldKind::User { .. } => quote! {
                    let mut __sw = __io::ByteWriter::new();
                    let _ = self.#id.write_to(&mut __sw);
                    let __bytes = __sw.into_stream_bytes(&mut __io::ByteWriter::new()).unwrap_or_default();
                    let __d: &[u8] = &__bytes;
                },
                _ => quote!(let __d: &[u8] = &self.#id[..];),
            };
            let len = match f.process {
                Some(Process::Zlib) => quote! {
                    __io::reprocess(__io::Processor::Zlib, __d, self.#stored.as_deref()).len()
                },
                _ => quote!(__d.len()),
            };
            methods.push(quote! {
                #[doc = #doc]
                #[doc(hidden)]
                pub fn #method(&self) -> i128 {
                    #value
                    #len as i128 #adj
                }
            });
        }
        if methods.is_empty() {
            return quote!();
        }
        quote! {
            impl #name {
                #(#methods)*
            }
        }
    }
}

/// `+ adj` or `- |adj|` (nothing for 0).
fn plus(adj: i128) -> TokenStream {
    let a = Literal::i128_suffixed(adj.unsigned_abs() as i128);
    match adj {
        0 => quote!(),
        1.. => quote!(+ #a),
        _ => quote!(- #a),
    }
}
