//! Reading one element of a field, per kind (numbers and bits; processed or terminated
//! bytes, strings and user types; plain ones; switches), with the sizes and `repeat-until`
//! conditions they use.

use super::*;

impl Emitter<'_> {
    /// The `repeat-until` condition of `f`, checked with `_` bound to one element: the
    /// element's type and the condition's code.
    pub(super) fn until_cond(
        &mut self,
        f: &Field,
        u: &SrcExpr,
        scope: &Scope,
    ) -> Option<(Ty, TokenStream)> {
        let ety = self.field_ty(&Field {
            cond: None,
            repeat: Repeat::None,
            ..f.clone()
        });
        let mut with_elem = Scope {
            vars: scope.vars.clone(),
            ctx: scope.ctx,
        };
        with_elem.vars.push(("_".into(), ety.clone()));
        let c = self.expect_ty(
            u,
            &with_elem,
            &format!("{}.repeat-until", f.key_path),
            Ty::Bool,
        )?;
        Some((ety, c))
    }

    pub(super) fn elem_min_len(&self, f: &Field) -> TokenStream {
        match &f.kind {
            FieldKind::User { ty: name, .. } => {
                let i = type_ident(self.s.type_name(name));
                quote!(#i::MIN_LEN)
            }
            FieldKind::Int { bytes, .. } | FieldKind::Float { bytes, .. } => {
                lit_usize(*bytes as usize).into_token_stream_usize()
            }
            FieldKind::Str { size: None, .. } => quote!(1),
            _ => quote!(0),
        }
    }

    pub(super) fn size_value(
        &mut self,
        size: &Size,
        scope: &Scope,
        kp: &str,
    ) -> Option<Option<TokenStream>> {
        match size {
            Size::Eos | Size::Terminator => Some(None),
            Size::Expr(e) => Some(Some(self.expect_ty(
                e,
                scope,
                &format!("{kp}.size"),
                Ty::Int,
            )?)),
        }
    }

    pub(super) fn elem_read(
        &mut self,
        _t: &TypeDef,
        f: &Field,
        scope: &Scope,
        _side: Side,
    ) -> Option<TokenStream> {
        match &f.kind {
            FieldKind::Int { .. } | FieldKind::Float { .. } | FieldKind::Bits { .. } => {
                self.elem_read_number(f)
            }
            FieldKind::Bytes(_) | FieldKind::User { .. }
                if f.term.is_some() || f.process.is_some() =>
            {
                self.elem_read_transformed(_t, f, scope, _side)
            }
            FieldKind::Str { .. } if f.term.is_some() => {
                self.elem_read_transformed(_t, f, scope, _side)
            }
            FieldKind::Bytes(_)
            | FieldKind::Str { .. }
            | FieldKind::Contents(_)
            | FieldKind::User { .. } => self.elem_read_plain(_t, f, scope, _side),
            FieldKind::Switch { .. } => self.elem_read_switch(_t, f, scope, _side),
        }
    }

    /// Reads one element of an integer, float or bit field.
    pub(super) fn elem_read_number(&mut self, f: &Field) -> Option<TokenStream> {
        Some(match &f.kind {
            FieldKind::Int {
                bytes,
                signed,
                endian,
                enum_name,
            } => {
                let m = endian_code::num_read(*bytes, *signed, false, *endian);
                match enum_name {
                    None => m,
                    Some(e) if self.is_open(e) && !f.strict => {
                        // Kaitai Struct's enums are open: an unknown integer is kept.
                        let ei = type_ident(self.s.enum_name(e));
                        quote!(#m.map(|__raw| #ei::from_i_open(__raw as i128)))
                    }
                    Some(e) => {
                        let ei = type_ident(self.s.enum_name(e));
                        let e = self.s.enum_name(e);
                        quote!(__io::known(__r.offset(), #m, #e, #ei::from_i))
                    }
                }
            }
            FieldKind::Float { bytes, endian } => {
                endian_code::num_read(*bytes, true, true, *endian)
            }
            FieldKind::Bits {
                width,
                le,
                enum_name: Some(e),
                ..
            } => {
                let ei = type_ident(self.s.enum_name(e));
                let m = if *le {
                    quote!(read_bits_le)
                } else {
                    quote!(read_bits_be)
                };
                let w = u32::from(*width);
                if self.is_open(e) && !f.strict {
                    quote!(__r.#m(#w).map(|__raw| #ei::from_i_open(__raw as i128)))
                } else {
                    let e = self.s.enum_name(e);
                    quote!(__io::known(__r.offset(), __r.#m(#w), #e, #ei::from_i))
                }
            }
            FieldKind::Bits {
                width,
                offset_binary,
                le,
                ..
            } => bits::bits_read(*width, *offset_binary, *le),
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// Reads one element of a processed or terminated field (bytes, string or user type).
    pub(super) fn elem_read_transformed(
        &mut self,
        _t: &TypeDef,
        f: &Field,
        scope: &Scope,
        _side: Side,
    ) -> Option<TokenStream> {
        let kp = f.key_path.clone();
        Some(match &f.kind {
            FieldKind::Bytes(_) | FieldKind::User { .. }
                if f.term.is_some() && f.process.is_some() =>
            {
                self.proc_term_read(f, scope)?
            }
            FieldKind::User { ty: name, size } if f.term.is_some() => {
                let n = match size {
                    Some(s @ Size::Expr(_)) => {
                        let v = self.size_value(s, scope, &kp)??;
                        quote!(::std::option::Option::Some(#v))
                    }
                    Some(Size::Eos) => quote!(::std::option::Option::Some(__r.remaining() as i128)),
                    _ => quote!(::std::option::Option::None),
                };
                let term = term_tokens(f.term.as_ref()?);
                let tail = temp_for("tail", &f.id);
                let keep = if matches!(f.repeat, Repeat::None) {
                    quote!(#tail = ::std::option::Option::Some(__tl.to_vec());)
                } else {
                    quote!(#tail.push(__tl.to_vec());)
                };
                let ti = type_ident(self.s.type_name(name));
                let finish = if !f.strict && self.is_unread(name) {
                    quote!({
                        __v.__unread_pad = __sub.align_to_byte_keep();
                        __v.__unread = __sub.take_rest().to_vec();
                        Ok(__v)
                    })
                } else {
                    quote!(__sub.finish().map(|_| __v))
                };
                let args = self.param_args(f, name, scope, &kp)?;
                let read = quote! {
                    __r.read_terminated(#n, #term).and_then(|(__val, __tl)| {
                        #keep
                        let mut __sub = __io::ByteReader::new(__val);
                        #[allow(unused_mut)]
                        let mut __v = #ti::read_from(&mut __sub #(, #args)*)?;
                        #finish
                    })
                };
                if f.boxed {
                    quote!(#read.map(::std::boxed::Box::new))
                } else {
                    read
                }
            }
            FieldKind::Bytes(_) | FieldKind::Str { .. } if f.term.is_some() => {
                let (size, str_enc) = match &f.kind {
                    FieldKind::Bytes(s) => (Some(s), None),
                    FieldKind::Str { size, encoding } => (size.as_ref(), Some(*encoding)),
                    _ => (None, None),
                };
                let n = match size {
                    Some(Size::Expr(_)) => {
                        let v = self.size_value(size?, scope, &kp)??;
                        quote!(::std::option::Option::Some(#v))
                    }
                    Some(Size::Eos) => quote!(::std::option::Option::Some(__r.remaining() as i128)),
                    _ => quote!(::std::option::Option::None),
                };
                let term = term_tokens(f.term.as_ref()?);
                let tail = temp_for("tail", &f.id);
                let keep = if matches!(f.repeat, Repeat::None) {
                    quote!(#tail = ::std::option::Option::Some(__tl.to_vec());)
                } else {
                    quote!(#tail.push(__tl.to_vec());)
                };
                let value = match str_enc {
                    Some(enc) => quote!(__io::decode_str(__val, #enc, __at)),
                    None => quote!(Ok::<_, __io::DecodeError>(__val.to_vec())),
                };
                quote! {{
                    let __at = __r.offset();
                    match __r.read_terminated(#n, #term) {
                        Ok((__val, __tl)) => { #keep #value }
                        Err(e) => Err(e),
                    }
                }}
            }
            FieldKind::Bytes(_) | FieldKind::User { .. } if f.process.is_some() => {
                let size = match &f.kind {
                    FieldKind::Bytes(s) => s.clone(),
                    FieldKind::User { size: Some(s), .. } => s.clone(),
                    _ => return None,
                };
                let take = match self.size_value(&size, scope, &kp)? {
                    Some(n) => quote!(__r.take_sized(#n)),
                    None => quote!(Ok::<_, __io::DecodeError>(__r.take_rest())),
                };
                let (setup, proc_) = self.processor(f, scope)?;
                let (_, _, custom) = Self::process_fns(f);
                let unfn_within = if custom {
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
                let value = match &f.kind {
                    FieldKind::User { ty: name, .. } => {
                        let ti = type_ident(self.s.type_name(name));
                        let finish = if !f.strict && self.is_unread(name) {
                            quote!({
                                __v.__unread_pad = __sub.align_to_byte_keep();
                                __v.__unread = __sub.take_rest().to_vec();
                                Ok(__v)
                            })
                        } else {
                            quote!(__sub.finish().map(|_| __v))
                        };
                        let args = self.param_args(f, name, scope, &kp)?;
                        // Traced reads go on into the processed bytes (offsets there count
                        // from their start); plain reads keep the silent reader's fast paths.
                        // The reader of the processed bytes shares the file's processed-bytes
                        // budget, so nested processed fields cannot multiply it.
                        let read = quote! {
                            #unfn_within(#proc_, __s, __at, __r.processed_room()).and_then(|__d| {
                                __r.charge_processed(__d.len(), __at)?;
                                let __share = __r.processed_share();
                                if <T as __io::Tracer>::SILENT {
                                    let mut __sub = __io::ByteReader::new(&__d).sharing(__share);
                                    #[allow(unused_mut)]
                                    let mut __v = #ti::read_from(&mut __sub #(, #args)*)?;
                                    let __res = #finish;
                                    __r.add_processed(__sub.processed_used());
                                    __res
                                } else {
                                    // The sub-reader borrows `__r`'s tracer until the block ends.
                                    let (__res, __used) = {
                                        let mut __sub = __io::ByteReader::with_tracer(&__d, __r.relay()).sharing(__share);
                                        #[allow(unused_mut)]
                                        let mut __v = #ti::read_from(&mut __sub #(, #args)*)?;
                                        (#finish, __sub.processed_used())
                                    };
                                    __r.add_processed(__used);
                                    __res
                                }
                            })
                        };
                        if f.boxed {
                            quote!(#read.map(::std::boxed::Box::new))
                        } else {
                            read
                        }
                    }
                    _ => {
                        quote!(#unfn_within(#proc_, __s, __at, __r.processed_room()).and_then(|__d| {
                            __r.charge_processed(__d.len(), __at)?;
                            Ok(__d)
                        }))
                    }
                };
                // As in Kaitai Struct, the processor's arguments are evaluated once the stored
                // bytes are taken (`_io.pos` in them is the position after those bytes).
                quote! {{
                    let __at = __r.offset();
                    match #take {
                        Ok(__s) => { #setup #keep #value }
                        Err(e) => Err(e),
                    }
                }}
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// Reads one element of a byte, string, `contents` or user-type field.
    pub(super) fn elem_read_plain(
        &mut self,
        _t: &TypeDef,
        f: &Field,
        scope: &Scope,
        _side: Side,
    ) -> Option<TokenStream> {
        let kp = f.key_path.clone();
        Some(match &f.kind {
            FieldKind::Bytes(size) => match self.size_value(size, scope, &kp)? {
                Some(n) => quote!(__r.take_sized(#n).map(|b| b.to_vec())),
                None => quote!(Ok::<_, __io::DecodeError>(__r.take_rest().to_vec())),
            },
            FieldKind::Str { size, encoding } => {
                let take = match size {
                    None => quote!(__r.take_until(0)),
                    Some(s) => match self.size_value(s, scope, &kp)? {
                        Some(n) => quote!(__r.take_sized(#n)),
                        None => {
                            quote!(Ok::<_, __io::DecodeError>(__r.take_rest()))
                        }
                    },
                };
                quote! {{
                    let __at = __r.offset();
                    #take.and_then(|b| __io::decode_str(b, #encoding, __at))
                }}
            }
            FieldKind::Contents(c) => {
                let b = Literal::byte_string(c);
                quote!(__r.expect(#b))
            }
            FieldKind::User { ty: name, size } => {
                let ti = type_ident(self.s.type_name(name));
                let args = self.param_args(f, name, scope, &kp)?;
                // An opaque type given arguments reads through `OpaqueType::read_with_args`.
                let call = if !f.args.is_empty() && self.s.is_opaque(name) {
                    let given = self.opaque_args(f, scope, &kp)?;
                    quote!(#ti::read_with_args(__r, #given))
                } else {
                    quote!(#ti::read_from(__r #(, #args)*))
                };
                let read = match size {
                    None => call.clone(),
                    Some(s) if !f.strict && self.is_unread(name) => {
                        // Kaitai Struct skips what the type leaves unread; it is kept so that
                        // the writer puts it back (a type with `-sp-end-zeros` reads to the
                        // end of its stream and keeps nothing).
                        let n = match self.size_value(s, scope, &kp)? {
                            Some(n) => n,
                            None => group(quote!(__r.remaining() as i128)),
                        };
                        quote! {
                            __r.push_limit(#n).and_then(|__old| { let mut __v = #ti::read_from(__r #(, #args)*)?; let (__pad, __rest) = __r.pop_limit_skip(__old)?; __v.__unread_pad = __pad; __v.__unread = __rest.to_vec(); Ok(__v) })
                        }
                    }
                    Some(s) => match self.size_value(s, scope, &kp)? {
                        Some(n) => quote! {
                            __r.push_limit(#n).and_then(|__old| { let __v = #call?; __r.pop_limit(__old)?; Ok(__v) })
                        },
                        None => call,
                    },
                };
                if f.boxed {
                    quote!(#read.map(::std::boxed::Box::new))
                } else {
                    read
                }
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// Reads one element of a switch field: the case the switch value selects.
    pub(super) fn elem_read_switch(
        &mut self,
        _t: &TypeDef,
        f: &Field,
        scope: &Scope,
        _side: Side,
    ) -> Option<TokenStream> {
        let kp = f.key_path.clone();
        let at = temp_for("at", &f.id);
        Some(match &f.kind {
            FieldKind::Switch { on, .. } => {
                let (sw, sty) = self.expr(on, scope, &format!("{kp}.type.switch-on"))?;
                let sw_decl = match sty.clone() {
                    Ty::Int => quote!(let __sw: i128 = #sw;),
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
                    other => {
                        self.err(
                            on.pos,
                            &format!("{kp}.type.switch-on"),
                            format!(
                                "`{}` is {}, not an integer, enum, string, bytes or condition",
                                on.src,
                                ty_name(self.s, &other)
                            ),
                            "switch on an integer, enum, string or condition",
                        );
                        return None;
                    }
                };
                self.check_case_keys(f, &sty);
                let shown = if sty == Ty::Bytes {
                    quote!(::std::format!("{:?}", __sw))
                } else {
                    quote!(__sw.to_string())
                };
                let en = Self::switch_enum_name(_t, f);
                let mut arms = Vec::new();
                let mut default = if has_no_case(f) {
                    // Kaitai Struct: no case and no `_` reads nothing; the member holds no value.
                    if switch_sized(f) {
                        quote!(Ok::<_, __io::DecodeError>(#en::NoCase(__r.take_rest().to_vec())))
                    } else {
                        quote!(Ok::<_, __io::DecodeError>(#en::NoCase))
                    }
                } else {
                    quote! {
                        Err(__io::DecodeError::not_valid(__r.offset(), #shown, "must select one of the switch cases"))
                    }
                };
                for (vi, tn, keys) in self.switch_variants(f) {
                    let read_case = if crate::num_type::case_builtin(self.s.type_name(&tn)) {
                        self.case_read(self.s.type_name(&tn), switch_encoding(f), &en, &vi)
                    } else {
                        let ti = type_ident(self.s.type_name(&tn));
                        let args = self.param_args(f, &tn, scope, &kp)?;
                        let wrap = if tn.id().is_some_and(|i| f.recursive.contains(&i)) {
                            quote!(.map(::std::boxed::Box::new))
                        } else {
                            quote!()
                        };
                        quote!(#ti::read_from(__r #(, #args)*) #wrap .map(#en::#vi))
                    };
                    if keys.is_empty() {
                        default = read_case;
                        continue;
                    }
                    let mut tests = Vec::new();
                    for k in &keys {
                        let (kt, kty) = self.expr(k, scope, &format!("{kp}.type.cases"))?;
                        let fits = match (&sty, &kty) {
                            (Ty::Enum(_), Ty::Enum(_)) => true,
                            (a, b) => a == b,
                        };
                        if !fits {
                            self.err(
                                k.pos,
                                &format!("{kp}.type.cases"),
                                format!(
                                    "case key `{}` is {}, which cannot be compared with the switch value ({})",
                                    k.src,
                                    ty_name(self.s, &kty),
                                    ty_name(self.s, &sty)
                                ),
                                "give case keys of the switch value's type",
                            );
                            return None;
                        }
                        tests.push(match kty {
                            Ty::Enum(_) => quote!(__sw == #kt.to_i()),
                            Ty::Bytes => quote!(__sw == &#kt[..]),
                            _ => quote!(__sw == #kt),
                        });
                    }
                    arms.push(quote!(if #(#tests)||* { #read_case }));
                }
                if let FieldKind::Switch {
                    default: Some(d), ..
                } = &f.kind
                {
                    let vi = type_ident(self.s.type_name(d));
                    default = if crate::num_type::case_builtin(self.s.type_name(d)) {
                        self.case_read(self.s.type_name(d), switch_encoding(f), &en, &vi)
                    } else {
                        let ti = type_ident(self.s.type_name(d));
                        let args = self.param_args(f, d, scope, &kp)?;
                        let wrap = if d.id().is_some_and(|i| f.recursive.contains(&i)) {
                            quote!(.map(::std::boxed::Box::new))
                        } else {
                            quote!()
                        };
                        quote!(#ti::read_from(__r #(, #args)*) #wrap .map(#en::#vi))
                    };
                }
                let _ = at;
                // A switch with only `_` reads its one case (no `if`, so no braces around it).
                let inner = if arms.is_empty() {
                    quote! {{
                        #sw_decl
                        #default
                    }}
                } else {
                    quote! {{
                        #sw_decl
                        #(#arms else)* { #default }
                    }}
                };
                let FieldKind::Switch { size, .. } = &f.kind else {
                    return None;
                };
                if f.process.is_some() {
                    return self.proc_switch_read(f, scope, &en, inner);
                }
                match size {
                    None => inner,
                    Some(sz) => {
                        let n = match self.size_value(sz, scope, &kp)? {
                            Some(n) => n,
                            None => group(quote!(__r.remaining() as i128)),
                        };
                        if f.strict {
                            quote! {
                                __r.push_limit(#n).and_then(|__old| { let __v = #inner?; __r.pop_limit(__old)?; Ok(__v) })
                            }
                        } else {
                            // Kaitai's rules: what the case leaves unread is kept in it (a
                            // user type), or in the field's tail (a number or a string).
                            let tail = temp_for("tail", &f.id);
                            let once = matches!(f.repeat, Repeat::None);
                            let keep_tail = |rest: TokenStream| {
                                if once {
                                    quote!(#tail = ::std::option::Option::Some(#rest);)
                                } else {
                                    quote!(#tail.push(#rest);)
                                }
                            };
                            let tail_kept = switch_tail(f);
                            let stores = self.switch_variants(f).into_iter().map(|(vi, tn, _)| {
                                if crate::num_type::case_builtin(self.s.type_name(&tn)) {
                                    let keep = keep_tail(quote!(__rest.to_vec()));
                                    quote!(#en::#vi(_) => { let _ = __pad; #keep })
                                } else {
                                    // A list's tails keep one entry per element.
                                    let keep = if tail_kept && !once { keep_tail(quote!(::std::vec::Vec::new())) } else { quote!() };
                                    quote!(#en::#vi(__x) => { __x.__unread_pad = __pad; __x.__unread = __rest.to_vec(); #keep })
                                }
                            });
                            let no_case = if has_no_case(f) {
                                let keep = if tail_kept && !once {
                                    keep_tail(quote!(::std::vec::Vec::new()))
                                } else {
                                    quote!()
                                };
                                quote!(#en::NoCase(_) => { #keep })
                            } else {
                                quote!()
                            };
                            quote! {
                                __r.push_limit(#n).and_then(|__old| {
                                    let mut __v = #inner?;
                                    let (__pad, __rest) = __r.pop_limit_skip(__old)?;
                                    match &mut __v { #(#stores)* #no_case }
                                    Ok(__v)
                                })
                            }
                        }
                    }
                }
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// Case keys of a switch on an enum must be values of that enum, and no value may
    /// select two cases (`1` and `0x1` are the same key).
    pub(super) fn check_case_keys(&mut self, f: &Field, switch_ty: &Ty) {
        let FieldKind::Switch { cases, .. } = &f.kind else {
            return;
        };
        let kp = format!("{}.type.cases", f.key_path);
        let mut seen: Vec<(i128, &str)> = Vec::new();
        for (k, _) in cases {
            let value = match &k.expr {
                Expr::Int(v) => Some(*v),
                Expr::EnumRef(e, v) => {
                    if let Ty::Enum(se) = switch_ty {
                        if self.s.enum_named(e).map(|d| d.id) != Some(*se) {
                            let se = &self.s.enm(*se).name;
                            self.err(
                                k.pos,
                                &kp,
                                format!(
                                    "case key `{}` is a `{e}` value but the switch is on a `{se}`",
                                    k.src
                                ),
                                format!("use values of `{se}` as case keys"),
                            );
                        }
                    }
                    self.s
                        .enum_named(e)
                        .and_then(|d| d.values.iter().find(|x| &x.name == v))
                        .map(|x| x.value)
                }
                _ => None,
            };
            if let Some(v) = value {
                match seen.iter().find(|(x, _)| *x == v) {
                    Some((_, first)) => self.err(
                        k.pos,
                        &kp,
                        format!(
                            "case key `{}` selects the same value ({v}) as `{first}`",
                            k.src
                        ),
                        "give each case a different value",
                    ),
                    None => seen.push((v, &k.src)),
                }
            }
        }
    }
}
