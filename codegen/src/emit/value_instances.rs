//! Value instances (`instances` with `value`): one method per instance computing it from
//! the value, and their members in the dynamic view.

use super::*;

impl Emitter<'_> {
    /// The methods computing `t`'s value instances, and their members for the dynamic view.
    pub(super) fn emit_instances(
        &mut self,
        t: &TypeDef,
        derived: &HashMap<String, Derived>,
    ) -> Option<(Vec<TokenStream>, Vec<(String, TokenStream)>)> {
        let (binds, scope) = self.method_scope(t, derived);
        // The names bound above (a body that is one of them is its member).
        let bound: Vec<String> = scope
            .vars
            .iter()
            .map(|(n, _)| n.clone())
            .filter(|n| !derived.contains_key(n) && !self.cur_lazy.contains(n))
            .collect();
        let reserved = [
            "read_from",
            "write_to",
            "write_with_context",
            "encoded_len",
            "decode",
            "decode_traced",
            "encode",
        ];
        let mut methods = Vec::new();
        let mut members = Vec::new();
        for inst in &t.instances.clone() {
            let kp = inst.key_path.clone();
            if reserved.contains(&inst.id.as_str()) || t.fields.iter().any(|f| f.id == inst.id) {
                self.err(
                    inst.pos,
                    &kp,
                    format!(
                        "instance `{}` has the name of a field or of a generated method",
                        inst.id
                    ),
                    "rename the instance",
                );
                continue;
            }
            self.in_method.set(true);
            self.fallible.set(false);
            let (ts, ty) = match self
                .ex_stored(&inst.value, &scope, &format!("{kp}.value"))
                .and_then(|(ts, ty)| match &inst.enum_name {
                    None => Ok((ts, ty)),
                    Some(e) => self.int_as_enum(e, ts, &ty),
                }) {
                Ok(v) => v,
                Err((msg, hint)) => {
                    self.err(
                        inst.value.pos,
                        &format!("{kp}.value"),
                        format!("in `{}`: {msg}", inst.value.src),
                        hint,
                    );
                    continue;
                }
            };
            let Some((rty, body, reflect)) = self.instance_repr(inst, &ty, ts) else {
                continue;
            };
            // The lazy positional instances it names are read now if they have not been; a
            // failed read is the instance's failure.
            let lazy_binds = self.lazy_binds(t, inst);
            if !lazy_binds.is_empty() {
                self.fallible.set(true);
            }
            let mi = field_ident(&inst.id);
            // An instance that is a param or field as it is: its member.
            let text = body.to_string();
            let body = match bound.iter().find(|n| field_ident(n) == text) {
                Some(n) => {
                    let id = field_ident(n);
                    quote!(self.#id)
                }
                None => body,
            };
            let base_reflect = reflect.clone();
            let (rty, body, reflect) = match &inst.cond {
                None => (rty, body, quote!({ let __x = self.#mi(); #reflect })),
                Some(c) => {
                    let c = self.expect_ty(c, &scope, &format!("{kp}.if"), Ty::Bool)?;
                    (
                        quote!(::std::option::Option<#rty>),
                        quote!(if #c { ::std::option::Option::Some(#body) } else { ::std::option::Option::None }),
                        quote!(match self.#mi() { ::std::option::Option::Some(__x) => #reflect, ::std::option::Option::None => __rf::Value::Null }),
                    )
                }
            };
            // An instance whose expression can fail returns the failure; the dynamic view
            // shows it as null.
            let (rty, body, reflect) = if self.fallible.replace(false) {
                (
                    quote!(::std::result::Result<#rty, __io::ExprError>),
                    quote!(let __v: #rty = #body; ::std::result::Result::Ok(__v)),
                    if inst.cond.is_some() {
                        quote!(match self.#mi() { ::std::result::Result::Ok(::std::option::Option::Some(__x)) => #base_reflect, _ => __rf::Value::Null })
                    } else {
                        quote!(match self.#mi() { ::std::result::Result::Ok(__x) => #base_reflect, ::std::result::Result::Err(_) => __rf::Value::Null })
                    },
                )
            } else {
                (rty, body, reflect)
            };
            let mi = field_ident(&inst.id);
            let doc = self.doc_for(
                inst.doc.as_deref(),
                inst.pos,
                &format!(
                    "Value instance: `{}` (computed from the fields, never stored).",
                    inst.value.src
                ),
            );
            methods.push(quote! {
                #doc
                #[allow(unused_variables, clippy::redundant_locals, clippy::needless_borrow)]
                pub fn #mi(&self) -> #rty {
                    #(#binds)*
                    #(#lazy_binds)*
                    #body
                }
            });
            members.push((inst.id.clone(), reflect));
            let _ = &mi;
        }
        self.in_method.set(false);
        Some((methods, members))
    }

    /// The locals binding the lazy positional instances of `t` that value instance `inst`
    /// names, each read on first use (`Lazy::get`); a read that fails returns its error as
    /// the method's `ExprError`.
    fn lazy_binds(&self, t: &TypeDef, inst: &Instance) -> Vec<TokenStream> {
        let mut used = HashSet::new();
        crate::instances::names(&inst.value.expr, &mut used);
        if let Some(c) = &inst.cond {
            crate::instances::names(&c.expr, &mut used);
        }
        t.fields
            .iter()
            .filter(|f| self.is_lazy(f) && used.contains(&f.id))
            .map(|f| {
                let id = field_ident(&f.id);
                let get = quote! {
                    match self.#id.get() {
                        ::std::result::Result::Ok(__x) => __x,
                        ::std::result::Result::Err(__e) => {
                            return ::std::result::Result::Err(__io::ExprError(__e.to_string()))
                        }
                    }
                };
                match self.field_ty(f) {
                    Ty::Int | Ty::Float | Ty::Enum(_) | Ty::Bool => quote!(let #id = *#get;),
                    _ => quote!(let #id = #get;),
                }
            })
            .collect()
    }

    /// The locals a method of `t` starts with (`let x = self.x;` for every param and field,
    /// derived counts computed) and the scope its expressions see: what value instances
    /// and `to-string` are compiled in.
    pub(super) fn method_scope(
        &self,
        t: &TypeDef,
        derived: &HashMap<String, Derived>,
    ) -> (Vec<TokenStream>, Scope) {
        let mut binds = Vec::new();
        let mut scope = Scope {
            vars: Vec::new(),
            ctx: Ctx::Method,
        };
        for p in &t.params {
            let id = field_ident(&p.id);
            let (_, ty) = param_rust_ty(self.s, &p.kind);
            let ty = if p.optional {
                Ty::Opt(Box::new(ty))
            } else {
                ty
            };
            binds.push(match ty {
                Ty::Int | Ty::Float | Ty::Enum(_) | Ty::Bool => quote!(let #id = self.#id;),
                _ => quote!(let #id = &self.#id;),
            });
            scope.vars.push((p.id.clone(), ty));
        }
        for f in &t.fields {
            let id = field_ident(&f.id);
            if let Some(d) = derived.get(&f.id) {
                let v = reflect::derived_value(t, d);
                binds.push(quote!(let #id: i128 = #v;));
                scope.vars.push((f.id.clone(), Ty::Int));
            } else if matches!(f.kind, FieldKind::Contents(_)) {
                continue;
            } else if self.is_lazy(f) {
                // Named only by value instances, each of which reads it on first use
                // (`lazy_binds`).
                scope.vars.push((f.id.clone(), self.field_ty(f)));
            } else {
                let ty = self.field_ty(f);
                binds.push(match ty {
                    Ty::Int | Ty::Float | Ty::Enum(_) | Ty::Bool => quote!(let #id = self.#id;),
                    _ => quote!(let #id = &self.#id;),
                });
                scope.vars.push((f.id.clone(), ty));
            }
        }
        (binds, scope)
    }
    /// How value instance `inst`, whose value `ts` has type `ty`, is returned by its method
    /// and shown in the dynamic view: the Rust return type, the body giving it from `ts`, and
    /// the view of `__x`, the method's value. `None` (reported) for a type a value instance
    /// cannot return.
    fn instance_repr(
        &mut self,
        inst: &crate::ir::Instance,
        ty: &Ty,
        ts: TokenStream,
    ) -> Option<(TokenStream, TokenStream, TokenStream)> {
        let kp = &inst.key_path;
        Some(match ty {
            Ty::Int => (quote!(i128), ts, quote!(__rf::Value::Int(__x))),
            Ty::Float => (quote!(f64), ts, quote!(__rf::Value::Float(__x))),
            Ty::Bool => (quote!(bool), ts, quote!(__rf::Value::Bool(__x))),
            Ty::Str => (
                quote!(::std::string::String),
                quote!(::std::string::String::from(AsRef::<str>::as_ref(&#ts))),
                quote!(__rf::Value::Str(::std::borrow::Cow::Owned(__x))),
            ),
            Ty::Bytes => (
                quote!(::std::vec::Vec<u8>),
                quote!(AsRef::<[u8]>::as_ref(&#ts).to_vec()),
                quote!(__rf::Value::Bytes(::std::borrow::Cow::Owned(__x))),
            ),
            Ty::Enum(e) => {
                let ei = type_ident(&self.s.enm(*e).name);
                (
                    quote!(#ei),
                    ts,
                    if self.open_enums.contains(e) {
                        quote!(__rf::Value::Enum(__rf::EnumValue { enum_name: #ei::SCHEMA_NAME, name: __x.listed_name(), value: __x.to_i() }))
                    } else {
                        quote!(__rf::Value::Enum(__rf::EnumValue { enum_name: #ei::SCHEMA_NAME, name: ::std::option::Option::Some(__x.name()), value: __x.to_i() }))
                    },
                )
            }
            Ty::User(tn) => {
                let ti = type_ident(self.s.type_name(tn));
                (
                    quote!(&#ti),
                    quote!(::std::convert::identity::<&#ti>(#ts)),
                    quote!(__rf::Value::Struct(__x)),
                )
            }
            // A stream: its position and size, a value of type `io` in the dynamic view.
            Ty::Io => (
                quote!(::statepack_runtime::positional::Stream),
                ts,
                quote!(__rf::Value::Owned(::std::rc::Rc::new(__x))),
            ),
            // A value of one of several user types, seen through the dynamic view.
            Ty::AnyStruct => (
                quote!(&dyn ::statepack_runtime::reflect::Reflect),
                ts,
                quote!(__rf::Value::Struct(__x)),
            ),
            Ty::List(e) if matches!(**e, Ty::Int | Ty::Float | Ty::Str | Ty::Bool) => {
                let (ety, conv, item) = match &**e {
                    Ty::Int => (
                        quote!(i128),
                        quote!(*__e as i128),
                        quote!(__rf::Value::Int(*__e)),
                    ),
                    Ty::Float => (
                        quote!(f64),
                        quote!(*__e as f64),
                        quote!(__rf::Value::Float(*__e)),
                    ),
                    Ty::Bool => (quote!(bool), quote!(*__e), quote!(__rf::Value::Bool(*__e))),
                    _ => (
                        quote!(::std::string::String),
                        quote!(::std::string::String::from(AsRef::<str>::as_ref(__e))),
                        quote!(__rf::Value::Str(::std::borrow::Cow::Owned(__e.clone()))),
                    ),
                };
                let body = match &**e {
                    Ty::Int | Ty::Float => self.wide_list(ts, &inst.value.expr, e),
                    _ => {
                        quote!(#ts.iter().map(|__e| #conv).collect::<::std::vec::Vec<#ety>>())
                    }
                };
                (
                    quote!(::std::vec::Vec<#ety>),
                    body,
                    quote!(__rf::Value::List(__x.iter().map(|__e| #item).collect())),
                )
            }
            Ty::Switch(owner, fid) => {
                // The body of a switch field (or of one of two with the same cases, `c ?
                // a : b`): borrowed, shown as the case it holds.
                let o = self.s.ty(*owner);
                let en = o.fields.get(*fid).map(|g| Self::switch_enum_name(o, g));
                let en = en?;
                (
                    quote!(&#en),
                    quote!(::std::convert::identity::<&#en>(#ts)),
                    quote!(__rf::ToValue::to_value(__x)),
                )
            }
            Ty::List(e) if matches!(**e, Ty::User(_)) => {
                // A list of user-type values: borrowed from the fields it comes from.
                let tn = match &**e {
                    Ty::User(tn) => self.s.type_name(tn),
                    _ => "",
                };
                let ti = type_ident(tn);
                (
                    quote!(&[#ti]),
                    quote!(&#ts[..]),
                    quote!(__rf::Value::List(
                        __x.iter().map(|__e| __rf::Value::Struct(__e)).collect()
                    )),
                )
            }
            Ty::List(e) if matches!(**e, Ty::AnyUser(_)) => {
                // A list literal of user-type values: copies, each in the types' enum.
                let Ty::AnyUser(set) = &**e else { return None };
                let set: Vec<String> = set.iter().map(|t| self.s.type_name(t).to_owned()).collect();
                let en = super::any_user_ident(&set);
                (
                    quote!(::std::vec::Vec<#en>),
                    quote!(<[#en]>::to_vec(&#ts[..])),
                    quote!(__rf::Value::List(__x.into_iter().map(#en::into_value).collect())),
                )
            }
            other => {
                self.err(
                    inst.value.pos,
                    &format!("{kp}.value"),
                    format!(
                        "value instances of {} are not supported yet",
                        ty_name(self.s, other)
                    ),
                    "give the instance a number, condition, string, bytes or enum value",
                );
                return None;
            }
        })
    }
}
