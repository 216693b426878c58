//! Rust enums: one per schema enum (with `Unlisted` where unknown integers are kept) and one
//! per switch field (a variant per case type, `NoCase` where no case may match).

use super::*;

impl Emitter<'_> {
    pub(super) fn emit_enum(&self, e: &EnumDef) -> TokenStream {
        let name = type_ident(&e.name);
        let vnames = crate::names::variant_names(
            e.values.iter().map(|v| v.name.as_str()),
            self.reserved_variants(e.id),
        );
        let vid = |i: usize| proc_macro2::Ident::new(&vnames[i], proc_macro2::Span::call_site());
        let kept_underscores = vnames.iter().any(|n| n.contains('_'));
        let doc = self.doc_for(
            None,
            e.pos,
            &if self.open_enums.contains(&e.id) {
                format!(
                    "Enum `{}`: an open set; a stored integer it does not list is kept as `Unlisted`.",
                    e.name
                )
            } else {
                format!(
                    "Enum `{}`: a closed set; any other stored value is a decode error.",
                    e.name
                )
            },
        );
        let variants: Vec<TokenStream> = e
            .values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let vi = vid(i);
                // The first value listed is the enum's `Default`.
                let default = if i == 0 { quote!(#[default]) } else { quote!() };
                let ren = &v.name;
                let d = doc_attrs(&format!(
                    "{}{} (stored as {}).",
                    v.doc
                        .as_deref()
                        .map(|d| format!("{} ", d.trim()))
                        .unwrap_or_default(),
                    v.name,
                    v.value
                ));
                quote! { #d #default #[serde(rename = #ren)] #vi }
            })
            .collect();
        // An enum without listed values (open, or empty) has no unit variant to mark.
        let (derive_default, manual_default) = if e.values.is_empty() {
            let unlisted = if self.open_enums.contains(&e.id) {
                quote! {
                    impl ::core::default::Default for #name {
                        #[doc = " The integer 0, which the enum does not list."]
                        fn default() -> Self { Self::Unlisted(0) }
                    }
                }
            } else {
                quote!()
            };
            (quote!(), unlisted)
        } else {
            (quote!(Default,), quote!())
        };
        let to_arms = e.values.iter().enumerate().map(|(i, v)| {
            let vi = vid(i);
            let l = Literal::i128_unsuffixed(v.value);
            quote! { #name::#vi => #l }
        });
        let from_arms = e.values.iter().enumerate().map(|(i, v)| {
            let vi = vid(i);
            let l = Literal::i128_unsuffixed(v.value);
            quote! { #l => Some(#name::#vi) }
        });
        let name_arms = e.values.iter().enumerate().map(|(i, v)| {
            let vi = vid(i);
            let n = &v.name;
            quote! { #name::#vi => #n }
        });
        let en = &e.schema_name;
        let open = self.open_enums.contains(&e.id);
        let (unlisted_variant, unlisted_to, unlisted_name, open_fns) = if open {
            (
                quote! {
                    #[doc = " A stored integer the enum does not list (Kaitai Struct's enums are open: the value is kept and written back)."]
                    Unlisted(i128),
                },
                quote!(#name::Unlisted(__v) => __v,),
                quote!(#name::Unlisted(_) => "unlisted",),
                quote! {
                    #[doc = " The value stored as `v`: a listed value, or `Unlisted(v)`."]
                    #[inline]
                    pub const fn from_i_open(v: i128) -> Self {
                        match Self::from_i(v) { Some(x) => x, None => Self::Unlisted(v) }
                    }
                    #[doc = " The value's name in the schema, `None` for an unlisted integer."]
                    pub const fn listed_name(self) -> Option<&'static str> {
                        match self { Self::Unlisted(_) => None, other => Some(other.name()) }
                    }
                    #[doc = " Whether the value is one the schema lists (not `Unlisted`)."]
                    pub const fn is_listed(self) -> bool {
                        !matches!(self, Self::Unlisted(_))
                    }
                },
            )
        } else {
            (quote!(), quote!(), quote!(), quote!())
        };
        // Values whose CamelCase names clash keep their underscores (`names::variant_names`).
        let camel_allow = if kept_underscores {
            quote!(#[allow(non_camel_case_types)])
        } else {
            quote!()
        };
        quote! {
            #doc
            #[derive(Debug, Clone, Copy, #derive_default PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
            #camel_allow
            #[allow(clippy::enum_variant_names)]
            pub enum #name { #(#variants,)* #unlisted_variant }
            #manual_default
            impl #name {
                #[doc = " The enum's name in the schema."]
                pub const SCHEMA_NAME: &'static str = #en;
                #[doc = " The stored integer of this value."]
                #[inline]
                pub const fn to_i(self) -> i128 { match self { #(#to_arms,)* #unlisted_to } }
                #open_fns
                #[doc = " The value stored as `v`, or `None` when `v` is not in the enum."]
                #[inline]
                pub const fn from_i(v: i128) -> Option<Self> { match v { #(#from_arms,)* _ => None } }
                #[doc = " The value's name in the schema."]
                pub const fn name(self) -> &'static str { match self { #(#name_arms,)* #unlisted_name } }
            }
            impl ::core::fmt::Display for #name {
                #[doc = " The schema name and the stored integer, e.g. `absolute (4)`."]
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    write!(f, "{} ({})", self.name(), self.to_i())
                }
            }
        }
    }

    /// The Rust enum of switch field `f`'s cases (named by `crate::resolve`).
    pub(super) fn switch_enum_name(t: &TypeDef, f: &Field) -> proc_macro2::Ident {
        crate::names::type_ident(&crate::shape::switch_enum_owner(t, f).switch_enum)
    }

    /// Switch variants: (variant ident, case type, case keys).
    pub(super) fn switch_variants(
        &self,
        f: &Field,
    ) -> Vec<(proc_macro2::Ident, TypeRef, Vec<SrcExpr>)> {
        let FieldKind::Switch { cases, default, .. } = &f.kind else {
            return Vec::new();
        };
        let mut out: Vec<(proc_macro2::Ident, TypeRef, Vec<SrcExpr>)> = Vec::new();
        for (k, tn) in cases {
            match out.iter_mut().find(|(_, n, _)| n == tn) {
                Some(v) => v.2.push(k.clone()),
                None => out.push((
                    type_ident(self.s.type_name(tn)),
                    tn.clone(),
                    vec![k.clone()],
                )),
            }
        }
        if let Some(d) = default {
            if !out.iter().any(|(_, n, _)| n == d) {
                out.push((type_ident(self.s.type_name(d)), d.clone(), Vec::new()));
            }
        }
        out
    }

    pub(super) fn emit_switch_enum(&self, t: &TypeDef, f: &Field) -> TokenStream {
        let en = Self::switch_enum_name(t, f);
        let FieldKind::Switch { on, default, .. } = &f.kind else {
            return quote!();
        };
        let also: String = t
            .fields
            .iter()
            .filter(|g| g.id != f.id && crate::shape::switch_enum_owner(t, g).id == f.id)
            .map(|g| {
                format!(
                    " Also the body of `{}.{}`, which has the same cases.",
                    t.name, g.id
                )
            })
            .collect();
        let doc = self.doc_for(
            None,
            f.pos,
            &format!(
                "The body of `{}.{}`, selected by `{}`.{also}",
                t.name, f.id, on.src
            ),
        );
        let vs = self.switch_variants(f);
        let variants = vs.iter().map(|(vi, r, keys)| {
            let tn = self.s.type_name(r);
            let ti = type_ident(tn);
            let d = if keys.is_empty() {
                " The default case (`_`).".to_string()
            } else {
                format!(
                    " Selected when the switch value is {}{}.",
                    keys.iter()
                        .map(|k| format!("`{}`", k.src))
                        .collect::<Vec<_>>()
                        .join(" or "),
                    if default.as_ref() == Some(r) {
                        ", or by the default case (`_`)"
                    } else {
                        ""
                    }
                )
            };
            let ren = tn;
            if r.id().is_some_and(|i| f.recursive.contains(&i)) {
                quote!(#[doc = #d] #[serde(rename = #ren)] #vi(::std::boxed::Box<#ti>))
            } else {
                let held = Self::case_rust_ty(tn);
                quote!(#[doc = #d] #[serde(rename = #ren)] #vi(#held))
            }
        });
        let len_arms = vs.iter().map(|(vi, tn, _)| {
            let len = Self::case_len(self.s.type_name(tn), super::switch_encoding(f));
            quote!(#en::#vi(__x) => #len)
        });
        let value_fn = self.number_switch_methods(f, &en);
        let vis: Vec<proc_macro2::Ident> = vs.iter().map(|(vi, _, _)| vi.clone()).collect();
        let no_case = has_no_case(f);
        let sized = switch_sized(f);
        let to_value = reflect::switch_impl(&en, &vis, no_case.then_some(sized));
        let (no_case_variant, no_case_len) = match (no_case, sized) {
            (true, false) => (
                quote!(
                    #[doc = " No case matched the switch value (and there is no `_` case): nothing was read."]
                    NoCase,
                ),
                quote!(#en::NoCase => 0,),
            ),
            (true, true) => (
                quote!(#[doc = " No case matched the switch value (and there is no `_` case): the sized field's bytes, raw."] NoCase(::std::vec::Vec<u8>),),
                quote!(#en::NoCase(__b) => __b.len(),),
            ),
            _ => (quote!(), quote!()),
        };
        // `Default`: the first case with its own default value (or no case).
        let default_value = match (vis.first(), no_case, sized) {
            (Some(v), ..) => quote!(Self::#v(::core::default::Default::default())),
            (None, true, false) => quote!(Self::NoCase),
            (None, true, true) => quote!(Self::NoCase(::std::vec::Vec::new())),
            (None, false, _) => quote!(),
        };
        let default_impl = if default_value.is_empty() || self.default_derive().is_empty() {
            quote!()
        } else {
            quote! {
                impl ::core::default::Default for #en {
                    #[doc = " The first case, holding its own default value."]
                    fn default() -> Self { #default_value }
                }
            }
        };
        quote! {
            #doc
            #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
            #[allow(clippy::enum_variant_names)]
            pub enum #en { #(#variants,)* #no_case_variant }
            #default_impl
            impl #en {
                #[doc = " The number of bytes the selected case writes."]
                pub fn encoded_len(&self) -> usize { match self { #(#len_arms,)* #no_case_len } }
                #value_fn
            }
            #to_value
        }
    }

    /// Records that the user types `ts` are held as "one of these" (`Ty::AnyStruct`), so that
    /// the module gets their enum.
    pub(super) fn use_any_user(&self, ts: &[String]) {
        let mut seen = self.any_users.borrow_mut();
        if !seen.iter().any(|x| x == ts) {
            seen.push(ts.to_vec());
        }
    }

    /// One enum per set of user types held as "one of these" (a `struct` param given values
    /// of several types, a list literal of user-type values): a variant per type holding a
    /// copy of the value, seen through the dynamic view as that value.
    pub(super) fn emit_any_user_enums(&self) -> Vec<TokenStream> {
        fn any_of(k: &ParamKind) -> Option<&[TypeId]> {
            match k {
                ParamKind::AnyUser(ts) => Some(ts),
                ParamKind::List(i) => any_of(i),
                _ => None,
            }
        }
        for p in self.s.types.iter().flat_map(|t| &t.params) {
            if let Some(ts) = any_of(&p.kind) {
                let ts: Vec<String> = ts.iter().map(|t| self.s.ty(*t).name.clone()).collect();
                self.use_any_user(&ts);
            }
        }
        let sets = self.any_users.borrow().clone();
        let mut out = Vec::new();
        for ts in &sets {
            let en = any_user_ident(ts);
            let doc = format!(
                " A value of one of the user types `{}` (Kaitai Struct's `struct`): a copy of it.",
                ts.join("`, `")
            );
            let vis: Vec<proc_macro2::Ident> = ts.iter().map(|t| type_ident(t)).collect();
            let variants = ts.iter().zip(&vis).map(|(t, vi)| {
                let d = format!(" A `{t}`.");
                let ren = t.as_str();
                quote!(#[doc = #d] #[serde(rename = #ren)] #vi(#vi))
            });
            let to_value = reflect::switch_impl(&en, &vis, None);
            let first = &vis[0];
            let default_impl = if self.default_derive().is_empty() {
                quote!()
            } else {
                quote! {
                    impl ::core::default::Default for #en {
                        #[doc = " The first type, holding its own default value."]
                        fn default() -> Self { Self::#first(::core::default::Default::default()) }
                    }
                }
            };
            out.push(quote! {
                #[doc = #doc]
                #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
                #[allow(clippy::enum_variant_names)]
                pub enum #en { #(#variants,)* }
                #default_impl
                impl #en {
                    #[doc = " The value held, seen through the dynamic view and owned by it."]
                    pub fn into_value(self) -> __rf::Value<'static> {
                        match self { #(#en::#vis(__x) => __rf::Value::Owned(::std::rc::Rc::new(__x)),)* }
                    }
                }
                #to_value
            });
        }
        out
    }
}
