//! Writing one element of a field, per kind, with the size and `valid` checks and the
//! length of one element.

use super::*;

impl Emitter<'_> {
    pub(super) fn elem_write(
        &mut self,
        t: &TypeDef,
        f: &Field,
        scope: &Scope,
    ) -> Option<TokenStream> {
        match &f.kind {
            FieldKind::Int { .. } | FieldKind::Float { .. } | FieldKind::Bits { .. } => {
                self.elem_write_number(f)
            }
            FieldKind::Bytes(_) | FieldKind::User { .. }
                if f.term.is_some() || f.process.is_some() =>
            {
                self.elem_write_transformed(f, scope)
            }
            FieldKind::Str { .. } if f.term.is_some() => self.elem_write_transformed(f, scope),
            FieldKind::Bytes(_)
            | FieldKind::Str { .. }
            | FieldKind::Contents(_)
            | FieldKind::User { .. } => self.elem_write_plain(f, scope),
            FieldKind::Switch { .. } => self.elem_write_switch(t, f, scope),
        }
    }

    /// Writes one element `__v` of an integer, float or bit field.
    pub(super) fn elem_write_number(&mut self, f: &Field) -> Option<TokenStream> {
        Some(match &f.kind {
            FieldKind::Int {
                bytes,
                signed,
                endian,
                enum_name,
            } => {
                let w = |v| endian_code::num_write(*bytes, *signed, false, *endian, v);
                let ty = int_ty(*bytes, *signed);
                match enum_name {
                    None => w(quote!(*__v)),
                    Some(e) if self.is_open(e) => {
                        // An unlisted value may not fit the stored type: refuse, never wrap.
                        let tn = int_ty_name(*bytes, *signed);
                        w(quote!(__io::fit::<#ty>(__v.to_i(), #tn)?))
                    }
                    Some(_) => w(quote!(__v.to_i() as #ty)),
                }
            }
            FieldKind::Float { bytes, endian } => {
                endian_code::num_write(*bytes, true, true, *endian, quote!(*__v))
            }
            FieldKind::Bits {
                width,
                le,
                enum_name: Some(_),
                ..
            } => {
                let m = if *le {
                    quote!(write_bits_le)
                } else {
                    quote!(write_bits_be)
                };
                let w = u32::from(*width);
                quote!(__w.#m(__io::fit::<u64>(__v.to_i(), "this bit field")?, #w)?)
            }
            FieldKind::Bits {
                width,
                offset_binary,
                le,
                ..
            } => bits::bits_write(*width, *offset_binary, *le),
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// Writes one element of a processed or terminated field (bytes, string or user type).
    pub(super) fn elem_write_transformed(
        &mut self,
        f: &Field,
        scope: &Scope,
    ) -> Option<TokenStream> {
        let kp = f.key_path.clone();
        Some(match &f.kind {
            FieldKind::Bytes(_) | FieldKind::User { .. }
                if f.term.is_some() && f.process.is_some() =>
            {
                self.proc_term_write(f, scope)?
            }
            FieldKind::Bytes(_) | FieldKind::User { .. } if f.process.is_some() => {
                let size = match &f.kind {
                    FieldKind::Bytes(s) => s.clone(),
                    FieldKind::User { size: Some(s), .. } => s.clone(),
                    _ => return None,
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
                let check = self.size_check(f, &size, scope, &kp, quote!(__s.len()))?;
                let value = self.bytes_to_process(f, scope, &kp)?;
                let process = quote! {
                    #setup
                    #refn(#proc_, __d, #kept)#re_q
                };
                let process = self.proc_args_after(f, &size, scope, &kp, process)?;
                let process = block_value(process);
                quote!({
                    #value
                    let __s = #process;
                    #check
                    __w.write_bytes(&__s);
                })
            }
            FieldKind::User { size, ty: name } if f.term.is_some() => {
                let n = match size {
                    Some(s @ Size::Expr(_)) => {
                        let v = self.size_value(s, scope, &kp)??;
                        quote!(::std::option::Option::Some(#v))
                    }
                    _ => quote!(::std::option::Option::None),
                };
                let term = term_tokens(f.term.as_ref()?);
                let tail = temp_for("tail", &f.id);
                let tail = if matches!(f.repeat, Repeat::None) {
                    quote!(self.#tail.as_deref())
                } else {
                    quote!(self.#tail.get(__i).map(|__t| __t.as_slice()))
                };
                let (checks, call) =
                    self.child_write(f, name, scope, &kp, quote!(__v), quote!(&mut __sw))?;
                quote!({
                    #checks
                    let mut __sw = __io::ByteWriter::new();
                    #call?;
                    let __d = __sw.into_stream_bytes(__w)?;
                    __w.write_terminated(&__d, #tail, #n, #term)?;
                })
            }
            FieldKind::Bytes(_) | FieldKind::Str { .. } if f.term.is_some() => {
                let (size, is_str) = match &f.kind {
                    FieldKind::Bytes(s) => (Some(s), false),
                    FieldKind::Str { size, .. } => (size.as_ref(), true),
                    _ => (None, false),
                };
                let n = match size {
                    Some(Size::Expr(_)) => {
                        let v = self.size_value(size?, scope, &kp)??;
                        quote!(::std::option::Option::Some(#v))
                    }
                    _ => quote!(::std::option::Option::None),
                };
                let term = term_tokens(f.term.as_ref()?);
                let tail = temp_for("tail", &f.id);
                let tail = if matches!(f.repeat, Repeat::None) {
                    quote!(self.#tail.as_deref())
                } else {
                    quote!(self.#tail.get(__i).map(|__t| __t.as_slice()))
                };
                let bytes = match &f.kind {
                    FieldKind::Str { encoding, .. } if !plain_encoding(encoding) => {
                        quote!(&__io::encode_str(__v, #encoding)?)
                    }
                    _ if is_str => quote!(__v.as_bytes()),
                    _ => quote!(&__v[..]),
                };
                let enc_check = match &f.kind {
                    FieldKind::Str {
                        encoding: "ASCII", ..
                    } => quote! {
                        if !__v.is_ascii() {
                            return Err(__io::EncodeError::not_valid(format!("{:?}", __v), "must be ASCII"));
                        }
                    },
                    _ => quote!(),
                };
                quote!({ #enc_check __w.write_terminated(#bytes, #tail, #n, #term)?; })
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// Writes one element of a byte, string, `contents` or user-type field.
    pub(super) fn elem_write_plain(&mut self, f: &Field, scope: &Scope) -> Option<TokenStream> {
        let kp = f.key_path.clone();
        Some(match &f.kind {
            FieldKind::Bytes(size) => {
                let check = self.size_check(f, size, scope, &kp, quote!(__v.len()))?;
                quote!({ #check __w.write_bytes(__v); })
            }
            FieldKind::Str { size, encoding } => {
                let enc_check = if *encoding == "ASCII" {
                    quote! {
                        if !__v.is_ascii() {
                            return Err(__io::EncodeError::not_valid(format!("{:?}", __v), "must be ASCII"));
                        }
                    }
                } else {
                    quote!()
                };
                if !plain_encoding(encoding) {
                    // Other character sets: the encoded bytes are measured and written.
                    let enc = *encoding;
                    return Some(match size {
                        None => quote!({
                            let __b = __io::encode_str(__v, #enc)?;
                            if __b.contains(&0) {
                                return Err(__io::EncodeError::not_valid(format!("{:?}", __v), "a zero-terminated string cannot contain a zero byte"));
                            }
                            __w.write_bytes(&__b);
                            __w.write_u8(0);
                        }),
                        Some(s) => {
                            let check = self.size_check(f, s, scope, &kp, quote!(__b.len()))?;
                            quote!({ let __b = __io::encode_str(__v, #enc)?; #check __w.write_bytes(&__b); })
                        }
                    });
                }
                match size {
                    None => quote!({
                        #enc_check
                        if __v.as_bytes().contains(&0) {
                            return Err(__io::EncodeError::not_valid(format!("{:?}", __v), "a zero-terminated string cannot contain a zero byte"));
                        }
                        __w.write_bytes(__v.as_bytes());
                        __w.write_u8(0);
                    }),
                    Some(s) => {
                        let check = self.size_check(f, s, scope, &kp, quote!(__v.len()))?;
                        quote!({ #enc_check #check __w.write_bytes(__v.as_bytes()); })
                    }
                }
            }
            FieldKind::Contents(_) => quote!(()),
            FieldKind::User { size, ty: name } => {
                if let Some(s) = size.as_ref().filter(|_| self.measured_with_context(f)) {
                    // Measured by writing it with the context its reader is given, not by
                    // `encoded_len` (which uses the value's own `__ctx_` copies).
                    let bytes = self.written_with_context(f, scope, quote!(__v))?;
                    let check = self.written_size_check(s, scope, &kp)?;
                    return Some(quote!({ let __b = #bytes; #check __w.write_bytes(&__b); }));
                }
                let check = match size {
                    Some(s) => self.size_check(f, s, scope, &kp, quote!(__v.encoded_len()))?,
                    None => quote!(),
                };
                let (pchecks, mut call) =
                    self.child_write(f, name, scope, &kp, quote!(__v), quote!(__w))?;
                let has_ctx = self
                    .s
                    .type_of(name)
                    .is_some_and(|t| t.params.iter().any(|p| p.context.is_some()));
                if size.is_some() && has_ctx {
                    // The size was checked against `encoded_len`, which measures with the
                    // value's `__ctx_` members where it measures by writing: what was
                    // written with the paths' values must have that length.
                    call = quote!({
                        let __at = __w.len();
                        #call?;
                        let __len = __v.encoded_len();
                        if __w.len() - __at != __len {
                            return Err(__io::EncodeError::new(__io::EncodeErrorKind::Semantic(format!("the value wrote {} byte(s) but measured {} with its `__ctx_` members: set them to the values of its `_parent`/`_root` paths", __w.len() - __at, __len))));
                        }
                        ::std::result::Result::<(), __io::EncodeError>::Ok(())
                    });
                }
                if size.is_some() && self.type_needs_io(name) {
                    // The value's positional instances are placed in its own substream.
                    quote!({ #check #pchecks let __io = __w.push_io(); #call?; __w.pop_io(__io); })
                } else {
                    quote!({ #check #pchecks #call?; })
                }
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// Writes one element of a switch field: the case its value holds, checked against the
    /// switch value.
    pub(super) fn elem_write_switch(
        &mut self,
        t: &TypeDef,
        f: &Field,
        scope: &Scope,
    ) -> Option<TokenStream> {
        let kp = f.key_path.clone();
        Some(match &f.kind {
            FieldKind::Switch { on, .. } => {
                let (sw, sty) = self.expr(on, scope, &format!("{kp}.type.switch-on"))?;
                let sw_decl = match sty.clone() {
                    Ty::Enum(_) => quote!(let __sw: i128 = #sw.to_i();),
                    Ty::Str => quote! {
                        let __sw_text = ::std::string::String::from(AsRef::<str>::as_ref(&#sw));
                        let __sw: &str = __sw_text.as_str();
                    },
                    Ty::Bool => quote!(let __sw: bool = #sw;),
                    Ty::Bytes => quote! {
                        let __sw_bytes = AsRef::<[u8]>::as_ref(&#sw).to_vec();
                        let __sw: &[u8] = &__sw_bytes[..];
                    },
                    _ => quote!(let __sw: i128 = #sw;),
                };
                let shown = if sty == Ty::Bytes {
                    quote!(::std::format!("{:?}", __sw))
                } else {
                    quote!(__sw.to_string())
                };
                let en = Self::switch_enum_name(t, f);
                let variants = self.switch_variants(f);
                let default = match &f.kind {
                    FieldKind::Switch { default, .. } => default.clone(),
                    _ => None,
                };
                let mut all_tests = Vec::new();
                let mut arms = Vec::new();
                for (vi, tn, keys) in &variants {
                    // The `_` type may also be a case type: that variant is right for its own
                    // keys and for every value no case names.
                    let is_default = default.as_ref() == Some(tn);
                    let mut tests = Vec::new();
                    let mut misses = Vec::new();
                    for k in keys {
                        let (kt, kty) = self.expr(k, scope, &format!("{kp}.type.cases"))?;
                        let key = match kty {
                            Ty::Enum(_) => quote!(#kt.to_i()),
                            Ty::Bytes => quote!(&#kt[..]),
                            _ => kt,
                        };
                        tests.push(group(quote!(__sw == #key)));
                        misses.push(group(quote!(__sw != #key)));
                    }
                    all_tests.extend(tests.clone());
                    let (pchecks, put) = if crate::num_type::case_builtin(self.s.type_name(tn)) {
                        (
                            quote!(),
                            self.case_write(self.s.type_name(tn), switch_encoding(f)),
                        )
                    } else {
                        let (checks, call) =
                            self.child_write(f, tn, scope, &kp, quote!(__x), quote!(__w))?;
                        (checks, quote!(#call?;))
                    };
                    arms.push((vi.clone(), misses, is_default, pchecks, put));
                }
                // A number or string case of a sized switch is written with the bytes it left
                // of the size when read (or zeros up to the size); the size is checked there.
                let tail_kept = switch_tail(f);
                let mut case_size_check = quote!();
                if tail_kept {
                    let FieldKind::Switch { size: Some(sz), .. } = &f.kind else {
                        return None;
                    };
                    let sz = sz.clone();
                    case_size_check =
                        self.size_check(f, &sz, scope, &kp, quote!(__v.encoded_len()))?;
                    let n = match &sz {
                        Size::Expr(e) if crate::instances::uses_io_end(&e.expr) => {
                            quote!(::std::option::Option::None)
                        }
                        _ => match self.size_value(&sz, scope, &kp)? {
                            Some(n) => quote!(::std::option::Option::Some(#n)),
                            None => quote!(::std::option::Option::None),
                        },
                    };
                    let tail = temp_for("tail", &f.id);
                    let tail = if matches!(f.repeat, Repeat::None) {
                        quote!(self.#tail.as_deref())
                    } else {
                        quote!(self.#tail.get(__i).map(|__t| __t.as_slice()))
                    };
                    for (vi, _, _, pchecks, put) in arms.iter_mut() {
                        let builtin = variants.iter().any(|(v, tn, _)| {
                            v == vi && crate::num_type::case_builtin(self.s.type_name(tn))
                        });
                        if builtin {
                            *put = quote! {
                                let mut __sub = __io::ByteWriter::new();
                                {
                                    let __w = &mut __sub;
                                    #put
                                }
                                let __d = __sub.into_stream_bytes(__w)?;
                                __w.write_terminated(&__d, #tail, #n, __io::Term { terminator: ::std::option::Option::None, include: false, consume: true, eos_error: true, pad_right: ::std::option::Option::None, width: 1 })?;
                            };
                        } else {
                            *pchecks = quote!(#case_size_check #pchecks);
                        }
                    }
                }
                // A case type with positional instances or `_io` gets its own stream start.
                let own_io = match &f.kind {
                    FieldKind::Switch {
                        cases,
                        default,
                        size: Some(_),
                        ..
                    } => cases
                        .iter()
                        .map(|(_, n)| n)
                        .chain(default.iter())
                        .any(|n| self.type_needs_io(n)),
                    _ => false,
                };
                let arms: Vec<TokenStream> = arms
                    .into_iter()
                    .map(|(vi, misses, is_default, pchecks, put)| {
                        let name = vi.to_string();
                        let put = if own_io {
                            quote!({
                                let __io = __w.push_io();
                                #put
                                __w.pop_io(__io);
                            })
                        } else {
                            put
                        };
                        let all = &all_tests;
                        // When the switch value does not select this variant.
                        let any = group(quote!(#(#all)||*));
                        let rejects = if misses.is_empty() {
                            if all.is_empty() { None } else { Some(any) }
                        } else if is_default {
                            Some(quote!(#(#misses)&&* && #any))
                        } else {
                            Some(quote!(#(#misses)&&*))
                        };
                        let reject = rejects.map(|r| quote! {
                            if #r {
                                return Err(__io::EncodeError::new(__io::EncodeErrorKind::SwitchMismatch { selected: #shown, found: #name }));
                            }
                        });
                        quote! {
                            #en::#vi(__x) => {
                                #reject
                                #pchecks
                                #put
                            }
                        }
                    })
                    .collect();
                let no_case_arm = if has_no_case(f) {
                    let all = &all_tests;
                    let (pat, put) = if switch_sized(f) {
                        (quote!(#en::NoCase(__b)), quote!(__w.write_bytes(__b);))
                    } else {
                        (quote!(#en::NoCase), quote!())
                    };
                    let check = if tail_kept {
                        case_size_check.clone()
                    } else {
                        quote!()
                    };
                    quote! {
                        #pat => {
                            #check
                            if #(#all)||* {
                                return Err(__io::EncodeError::new(__io::EncodeErrorKind::SwitchMismatch { selected: #shown, found: "no case" }));
                            }
                            #put
                        }
                    }
                } else {
                    quote!()
                };
                if f.process.is_some() {
                    let arms = quote!(match __v { #(#arms)* #no_case_arm });
                    return self.proc_switch_write(f, scope, sw_decl, arms);
                }
                let size_check = match &f.kind {
                    _ if tail_kept => quote!(),
                    FieldKind::Switch { size: Some(sz), .. } => {
                        let sz = sz.clone();
                        self.size_check(f, &sz, scope, &kp, quote!(__v.encoded_len()))?
                    }
                    _ => quote!(),
                };
                quote! {{
                    #size_check
                    #sw_decl
                    match __v { #(#arms)* #no_case_arm }
                }}
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// A sized user-type field whose type has context params (`_parent`/`_root` paths),
    /// read in no substream of its own: the writer measures it by writing it with the
    /// context the reading type gives, so a value built with `..Default::default()` (its
    /// `__ctx_` copies at their defaults) is measured right.
    pub(super) fn measured_with_context(&self, f: &Field) -> bool {
        let FieldKind::User {
            size: Some(_),
            ty: name,
        } = &f.kind
        else {
            return false;
        };
        f.process.is_none()
            && f.term.is_none()
            && !self.type_needs_io(name)
            && self
                .s
                .type_of(name)
                .is_some_and(|t| t.params.iter().any(|p| p.context.is_some()))
    }

    /// An expression giving the bytes of the value `v` of field `f` (see
    /// [`Self::measured_with_context`]) written with its params checked and its context
    /// given, as a `Vec<u8>`; `?` inside it returns the child's error.
    pub(super) fn written_with_context(
        &mut self,
        f: &Field,
        scope: &Scope,
        v: TokenStream,
    ) -> Option<TokenStream> {
        let FieldKind::User { ty: name, .. } = &f.kind else {
            return None;
        };
        let (pchecks, call) = self.child_write(f, name, scope, &f.key_path, v, quote!(&mut __m))?;
        Some(quote!({
            #pchecks
            let mut __m = __io::ByteWriter::new();
            #call?;
            __m.into_bytes()
        }))
    }

    /// The check of bytes `__b` written for a sized field against its `size`.
    fn written_size_check(&mut self, size: &Size, scope: &Scope, kp: &str) -> Option<TokenStream> {
        self.size_check_with(size, scope, kp, quote!(__b.len()), quote!())
    }

    /// The check of a field's encoded length `actual` against its `size`; a user-type value
    /// that does not match is written once more first, so its own error wins.
    pub(super) fn size_check(
        &mut self,
        f: &Field,
        size: &Size,
        scope: &Scope,
        kp: &str,
        actual: TokenStream,
    ) -> Option<TokenStream> {
        let probe = exact_len::probe_on_mismatch(&f.kind);
        self.size_check_with(size, scope, kp, actual, probe)
    }

    /// `actual` checked against `size`, running `probe` before the mismatch error.
    fn size_check_with(
        &mut self,
        size: &Size,
        scope: &Scope,
        kp: &str,
        actual: TokenStream,
        probe: TokenStream,
    ) -> Option<TokenStream> {
        if matches!(size, Size::Expr(e) if crate::instances::uses_io_end(&e.expr)) {
            // `_io.size` is not known while writing: the value's own length is written.
            return Some(quote!());
        }
        let actual_wide = group(quote!(#actual as i128));
        Some(match self.size_value(size, scope, kp)? {
            None => quote!(),
            Some(n) => quote! {
                if #actual_wide != #n {
                    #probe
                    return Err(__io::EncodeError::new(__io::EncodeErrorKind::SizeMismatch { expected: u64::try_from(#n).unwrap_or(u64::MAX), found: #actual }));
                }
            },
        })
    }

    /// The encoded length of one element of `f`, the value `v` (a place or a reference).
    pub(super) fn elem_len(&self, f: &Field, v: &TokenStream) -> TokenStream {
        match &f.kind {
            FieldKind::Int { bytes, .. } | FieldKind::Float { bytes, .. } => {
                lit_usize(*bytes as usize).into_token_stream_usize()
            }
            // Never used: a type with bit fields measures itself by writing (see emit_type).
            FieldKind::Bits { .. } => quote!(0usize),
            FieldKind::Bytes(_) => quote!(#v.len()),
            FieldKind::Str { size: None, .. } => quote!(#v.len() + 1),
            FieldKind::Str { .. } => quote!(#v.len()),
            FieldKind::Contents(c) => lit_usize(c.len()).into_token_stream_usize(),
            FieldKind::User { .. } | FieldKind::Switch { .. } => quote!(#v.encoded_len()),
        }
    }

    /// The check of field `f`'s `valid` rule `v`, on the value `__v` (a reference): the
    /// condition under which the value breaks the rule, written as such (`x > 9`, not
    /// `!(x <= 9)`).
    pub(super) fn valid_check(
        &mut self,
        v: &Valid,
        f: &Field,
        scope: &Scope,
        side: Side,
    ) -> Option<TokenStream> {
        let bare = Field {
            cond: None,
            repeat: Repeat::None,
            ..f.clone()
        };
        // A switch of number types is checked on its number (a switch that selected no case
        // fails the check).
        let number_switch = self.number_switch_ty(&self.field_ty(&bare));
        // A user type is checked by an expression over it (`valid: {expr: _.len > 0}`).
        let user_expr = matches!(f.kind, FieldKind::User { .. }) && matches!(v, Valid::Expr(_));
        if f.varint
            || !matches!(
                f.kind,
                FieldKind::Int { .. }
                    | FieldKind::Bits { .. }
                    | FieldKind::Float { .. }
                    | FieldKind::Str { .. }
                    | FieldKind::Bytes(_)
            ) && number_switch.is_none()
                && !user_expr
        {
            if side == Side::Read {
                let (msg, hint) = if matches!(f.kind, FieldKind::User { .. }) {
                    (
                        "`valid` on a user-type field takes the form `expr` (`valid: {expr: _.version == 2}`)",
                        "write the rule as an expression over `_`, or move it to the type's own field",
                    )
                } else {
                    (
                        "`valid` is supported on integer, bit, float, enum, string, byte and user-type fields (and their lists)",
                        "move the rule to the element type's field, or drop it",
                    )
                };
                self.err(
                    f.pos_of("valid"),
                    &format!("{}.valid", f.key_path),
                    msg,
                    hint,
                );
            }
            return None;
        }
        let kp = format!("{}.valid", f.key_path);
        let mut s2 = Scope {
            vars: scope.vars.clone(),
            ctx: scope.ctx,
        };
        let ty = number_switch
            .clone()
            .unwrap_or_else(|| self.field_ty(&bare));
        s2.vars.push(("_".into(), ty.clone()));
        let val = match &ty {
            _ if number_switch.is_some() => quote!(__nv),
            Ty::Int => group(quote!(*__v as i128)),
            Ty::Float => group(quote!(*__v as f64)),
            _ => group(quote!(*__v)),
        };
        let want = match &ty {
            Ty::Enum(_) | Ty::Str | Ty::Bytes => ty.clone(),
            Ty::Float => Ty::Float,
            _ => Ty::Int,
        };
        // A string or byte array is compared through the reference `__v` itself.
        let val_ref = match &ty {
            Ty::Str | Ty::Bytes if number_switch.is_none() => quote!(__v),
            _ => quote!(&#val),
        };
        let cmp = |me: &mut Self, e: &SrcExpr, op: TokenStream| -> Option<TokenStream> {
            let x = me.expect_ty(e, &s2, &kp, want.clone())?;
            Some(match want {
                Ty::Str => {
                    group(quote!(AsRef::<str>::as_ref(#val_ref) #op AsRef::<str>::as_ref(&#x)))
                }
                // Bytes compare as unsigned bytes, element by element, as in Kaitai.
                Ty::Bytes => {
                    group(quote!(AsRef::<[u8]>::as_ref(#val_ref) #op AsRef::<[u8]>::as_ref(&#x)))
                }
                _ => group(quote!(#val #op #x)),
            })
        };
        // The condition under which the value breaks the rule.
        let body = match v {
            Valid::Eq(e) => cmp(self, e, quote!(!=))?,
            Valid::InEnum => match &ty {
                // A closed enum refuses unlisted values while reading already.
                Ty::Enum(e) if self.open_enums.contains(e) => quote!(!#val.is_listed()),
                Ty::Enum(_) => quote!(false),
                _ => {
                    if side == Side::Read {
                        self.err(
                            f.pos_of("valid"),
                            &kp,
                            "`valid: {in-enum: true}` needs a field with `enum`",
                            "add `enum: <name>` to the field, or drop the rule",
                        );
                    }
                    return None;
                }
            },
            Valid::Range(a, b) => {
                if matches!(want, Ty::Enum(_)) {
                    self.err(
                        f.pos_of("valid"),
                        &kp,
                        "`min`/`max` need a number, string or byte field",
                        "use `eq` or `any-of` for enums",
                    );
                    return None;
                }
                // Integers, strings and bytes are ordered totally: below `min` or above
                // `max`. A float is outside unless it is within (NaN is never within).
                let float = want == Ty::Float;
                let (lo_op, hi_op) = if float {
                    (quote!(>=), quote!(<=))
                } else {
                    (quote!(<), quote!(>))
                };
                let mut ends = Vec::new();
                for (end, op) in [(a, lo_op), (b, hi_op)] {
                    if let Some(e) = end {
                        ends.push(cmp(self, e, op)?);
                    }
                }
                match (float, ends.is_empty()) {
                    (_, true) => quote!(false),
                    (true, false) => quote!(!(#(#ends)&&*)),
                    (false, false) => group(quote!(#(#ends)||*)),
                }
            }
            Valid::AnyOf(list) => {
                let mut parts = Vec::new();
                for e in list {
                    parts.push(cmp(self, e, quote!(!=))?);
                }
                group(quote!(#(#parts)&&*))
            }
            Valid::Expr(e) => {
                let c = self.expect_ty(e, &s2, &kp, Ty::Bool)?;
                let bind = if number_switch.is_some() {
                    bind_elem(&ty, group(quote!(&__nv)))
                } else {
                    bind_elem(&ty, quote!(__v))
                };
                quote!(!{ #bind #c })
            }
        };
        if number_switch.is_some() {
            return Some(quote!(match __v.value() {
                ::std::result::Result::Ok(__nv) => #body,
                ::std::result::Result::Err(_) => true,
            }));
        }
        Some(body)
    }
}
