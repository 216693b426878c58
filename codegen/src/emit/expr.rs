//! The expression compiler: compiles every expression to Rust from the typed tree the check
//! stage (`crate::typed`) made of it in its scope (the fields read before it, params, `_`,
//! `_index`, value instances, `_parent`/`_root` paths): each part's type is its node's. An
//! expression the stage did not keep (the value instance of another type, typed for its
//! member access) is typed here with the stage's typer. Also the arguments of params
//! (converted to the params' member types) and the writes of user-type values.

use super::*;
use crate::typed::{Node, TExpr};

impl Emitter<'_> {
    pub(super) fn field_ty(&self, f: &Field) -> Ty {
        crate::typed::field_ty(self.s, f)
    }

    pub(crate) fn expr(
        &mut self,
        e: &SrcExpr,
        scope: &Scope,
        kp: &str,
    ) -> Option<(TokenStream, Ty)> {
        let outer = self.fallible.replace(false);
        let r = self.ex_stored(e, scope, kp);
        // A failing form in a seq field's expression reports through the reader or writer;
        // only a value instance's own method changes its return type for it.
        self.fallible
            .set(outer || (self.fallible.get() && self.in_method.get()));
        match r {
            Ok(v) => Some(v),
            Err((msg, hint)) => {
                self.err(e.pos, kp, format!("in `{}`: {msg}", e.src), hint);
                None
            }
        }
    }

    pub(crate) fn expect_ty(
        &mut self,
        e: &SrcExpr,
        scope: &Scope,
        kp: &str,
        want: Ty,
    ) -> Option<TokenStream> {
        let (ts, ty) = self.expr(e, scope, kp)?;
        if ty == want || (want == Ty::Float && ty == Ty::Int) {
            Some(if want == Ty::Float && ty == Ty::Int {
                int_to_f64(ts, &e.expr)
            } else {
                ts
            })
        } else {
            self.err(e.pos, kp, format!("`{}` is {} but {} is needed here", e.src, ty_name(self.s, &ty), ty_name(self.s, &want)), match want {
                Ty::Bool => "write a condition, e.g. `kind == frame_kind::absolute` or `(flags & 1) != 0`",
                Ty::Int => "write an integer expression; use `.to_i` on enum values",
                _ => "change the expression to the needed type",
            });
            None
        }
    }

    /// Types `e` in `scope` with the check stage's typer (`crate::typed`: the one typing of
    /// an expression, whose problems are the ones reported) and compiles it from the typed
    /// tree.
    #[allow(clippy::type_complexity)]
    pub(super) fn ex(
        &self,
        e: &Expr,
        scope: &Scope,
    ) -> Result<(TokenStream, Ty), (String, String)> {
        let typer = crate::typed::Typer {
            s: self.s,
            open_enums: &self.open_enums,
            cur_type: self.cur_type.get(),
            cur_instances: &self.cur_instances,
            inlining: std::cell::RefCell::new(self.inlining.borrow().clone()),
            assert_mode: false,
        };
        let side = match scope.ctx {
            Ctx::Read => crate::typed::Side::Read,
            Ctx::Write => crate::typed::Side::Write,
            Ctx::Method => crate::typed::Side::Value,
        };
        let tscope = crate::typed::TypeScope {
            vars: scope.vars.clone(),
            side,
        };
        let te = typer.ty(e, &tscope)?;
        self.cx(e, &te, scope)
    }

    /// `e` at key path `kp` compiled from the check stage's typed tree of it, or typed here
    /// (with the same typer) where the stage kept none.
    #[allow(clippy::type_complexity)]
    pub(super) fn ex_stored(
        &self,
        e: &SrcExpr,
        scope: &Scope,
        kp: &str,
    ) -> Result<(TokenStream, Ty), (String, String)> {
        let side = match scope.ctx {
            Ctx::Read => crate::typed::Side::Read,
            Ctx::Write => crate::typed::Side::Write,
            Ctx::Method => crate::typed::Side::Value,
        };
        let tn = self.cur_type.get();
        match self.typed.at(tn, kp, side, e) {
            // A value instance's `enum:` is applied by its method.
            Some(TExpr {
                node: Node::AsEnum(inner, _),
                ..
            }) => self.cx(&e.expr, inner, scope),
            Some(te) => self.cx(&e.expr, te, scope),
            None => self.ex(&e.expr, scope),
        }
    }

    /// Compiles `e`, typed as `te`: each part's type is its node's in the typed tree.
    #[allow(clippy::type_complexity)]
    pub(super) fn cx(
        &self,
        e: &Expr,
        te: &TExpr,
        scope: &Scope,
    ) -> Result<(TokenStream, Ty), (String, String)> {
        match e {
            Expr::Int(_)
            | Expr::Float(_)
            | Expr::Bool(_)
            | Expr::Null
            | Expr::Str(_)
            | Expr::Name(_)
            | Expr::EnumRef(..) => self.ex_leaf(e, te, scope),
            Expr::Attr(..) => self.ex_attr(e, te, scope),
            Expr::Index(..) | Expr::List(_) => self.ex_index_list(e, te, scope),
            Expr::Call(..) => self.ex_call(e, te, scope),
            Expr::Cast(..) | Expr::SizeOf(_) | Expr::Unary(..) | Expr::Ternary(..) => {
                self.ex_cast_unary_ternary(e, te, scope)
            }
            Expr::Binary(..) => self.ex_binary(e, te, scope),
        }
    }

    /// A literal, a name (a field, param, `_`, `_index`, a value instance, `_sizeof`) or an
    /// enum value.
    #[allow(clippy::type_complexity)]
    pub(super) fn ex_leaf(
        &self,
        e: &Expr,
        te: &TExpr,
        scope: &Scope,
    ) -> Result<(TokenStream, Ty), (String, String)> {
        let bad = |m: String, h: &str| Err((m, h.to_owned()));
        let q = scope.ctx.q(self.cur_field.borrow().as_deref());
        Ok(match e {
            Expr::Int(v) => (int_lit(*v), Ty::Int),
            Expr::Float(v) => (float_lit(*v), Ty::Float),
            Expr::Bool(b) => (quote!(#b), Ty::Bool),
            Expr::Null => {
                return bad(
                    "`null` has no type in a schema expression".into(),
                    "test for a missing value with the field's own condition instead",
                )
            }
            Expr::Str(s) => (quote!(#s), Ty::Str),
            Expr::Name(n)
                if scope.get(n).is_none() && self.cur_instances.iter().any(|i| &i.id == n) =>
            {
                return self.inline_instance(n, te, scope);
            }
            // Kaitai Struct's `_sizeof` is static: the fixed size of the type.
            Expr::Name(n) if n == "_sizeof" && scope.get(n).is_none() => size_lit(te)?,
            // `_io` as a value: the type's own stream.
            Expr::Name(n) if n == "_io" && scope.get(n).is_none() => (
                super::io_of::own_stream(scope.ctx, self.own_io.get())?,
                Ty::Io,
            ),
            Expr::Name(n) => {
                let Some(ty) = scope.get(n) else {
                    return bad(if crate::names::is_schema_name(n) { format!("`{n}` is not a field read before this point") } else { format!("`{n}` is not a valid name (a name is lower-case letters, digits and `_`, starting with a letter or `_`)") }, "expressions may use fields that come earlier in the same type (and `_` where allowed), params, and the enclosing types through `_parent.x` / `_root.x`");
                };
                let id = if n == "_" {
                    temp("elem")
                } else if n == "_index" {
                    // The element's index in a repeated field (the loops' `__i: usize`).
                    temp("i")
                } else {
                    field_ident(n)
                };
                // A param is an `i128` or `f64` already.
                let wide = self.is_param(n);
                match ty {
                    Ty::Int | Ty::Float if wide => (quote!(#id), ty.clone()),
                    Ty::Int => (group(quote!(#id as i128)), Ty::Int),
                    Ty::Float => (group(quote!(#id as f64)), Ty::Float),
                    Ty::Opt(inner) => {
                        let msg = format!("`{n}` is absent (its `if` is false)");
                        self.fallible.set(true);
                        let reference = then(
                            quote!(match &#id { ::std::option::Option::Some(__o) => ::std::result::Result::Ok(__o), ::std::option::Option::None => ::std::result::Result::Err(__io::ExprError(::std::string::String::from(#msg))) }),
                            &q,
                        );
                        match &**inner {
                            Ty::Int | Ty::Float if wide => {
                                (group(quote!(*#reference)), (**inner).clone())
                            }
                            _ => elem_value(reference, (**inner).clone()),
                        }
                    }
                    t => match self.number_switch_ty(t) {
                        // A switch of number types is its number.
                        Some(nt) => {
                            self.fallible.set(true);
                            (quote!(#id.value() #q), nt)
                        }
                        None => (quote!(#id), t.clone()),
                    },
                }
            }
            Expr::EnumRef(en, v) => {
                let Some(def) = self.s.enum_named(en) else {
                    return bad(format!("unknown enum `{en}`"), "name an enum from `enums`");
                };
                let vi = crate::names::variant_ident(
                    def.values.iter().map(|x| x.name.as_str()),
                    self.reserved_variants(def.id),
                    v,
                );
                let t = type_ident(en);
                (quote!(#t::#vi), Ty::Enum(def.id))
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// `a.b`: a member of a user-type value, `_io`, `value._io`, `_sizeof`, or a property of a
    /// number, string, bytes, list or enum.
    #[allow(clippy::type_complexity)]
    pub(super) fn ex_attr(
        &self,
        e: &Expr,
        te: &TExpr,
        scope: &Scope,
    ) -> Result<(TokenStream, Ty), (String, String)> {
        let bad = |m: String, h: &str| Err((m, h.to_owned()));
        let q = scope.ctx.q(self.cur_field.borrow().as_deref());
        Ok(match e {
            // `field._sizeof`: the static size of that field (its `size`, or its type's).
            Expr::Attr(_, attr) if attr == "_sizeof" => size_lit(te)?,
            Expr::Attr(inner, attr)
                if matches!(&**inner, Expr::Name(n) if n == "_io")
                    && scope.get("_io").is_none() =>
            {
                let own = self
                    .own_io
                    .get()
                    .then(|| super::io_of::own_io_attr(scope.ctx == Ctx::Read, attr));
                if let Some(Some(r)) = own {
                    return Ok(r);
                }
                return positional::io_attr(scope.ctx == Ctx::Read, scope.ctx == Ctx::Write, attr);
            }
            Expr::Attr(io, attr)
                if matches!(&**io, Expr::Attr(_, a) if a == "_io")
                    && matches!(attr.as_str(), "pos" | "size" | "eof") =>
            {
                // `value._io.pos`: the stream of a user-type value, as it was when the value
                // had been read.
                let (Expr::Attr(inner, _), Node::MemberIo(of, _)) = (&**io, &te.node) else {
                    return Err(mismatch(e));
                };
                if of.ty == Ty::AnyStruct {
                    let s = self.stream_of(inner, of, scope)?;
                    return Ok(super::io_of::stream_attr(s, attr));
                }
                let (ts, _) = self.cx(inner, of, scope)?;
                return Ok(positional::member_io(ts, attr));
            }
            // `value._io` as a value.
            Expr::Attr(inner, attr)
                if attr == "_io" && matches!(te.node, Node::Stream(Some(_))) =>
            {
                let Node::Stream(Some(of)) = &te.node else {
                    return Err(mismatch(e));
                };
                return Ok((self.stream_of(inner, of, scope)?, Ty::Io));
            }
            Expr::Attr(inner, attr) => {
                let (ts, ty) = self.cx(inner, first_child(e, te)?, scope)?;
                if let Ty::User(tn) = &ty {
                    return self.member_of(&ts, tn, attr, scope);
                }
                if ty == Ty::Io {
                    return Ok(super::io_of::stream_attr(ts, attr));
                }
                match (attr.as_str(), &ty) {
                    ("to_i", Ty::Enum(_)) => (quote!(#ts.to_i()), Ty::Int),
                    ("to_i", Ty::Float) => (group(quote!(#ts as i128)), Ty::Int),
                    ("to_i", Ty::Bool) => (group(quote!(#ts as i128)), Ty::Int),
                    ("to_s", Ty::Int) => (quote!(::std::format!("{}", #ts)), Ty::Str),
                    ("to_i", Ty::Int) => (ts, Ty::Int),
                    ("to_s", Ty::Str) => (ts, Ty::Str),
                    ("reverse", Ty::Str) => (
                        quote!(AsRef::<str>::as_ref(&#ts).chars().rev().collect::<::std::string::String>()),
                        Ty::Str,
                    ),
                    ("to_i", Ty::Str) => {
                        self.fallible.set(true);
                        (quote!(__io::expr_str_to_i(AsRef::<str>::as_ref(&#ts), 10) #q), Ty::Int)
                    }
                    ("first" | "last" | "min" | "max", Ty::List(_) | Ty::Bytes) => {
                        let elem = match &ty {
                            Ty::List(e) => (**e).clone(),
                            _ => Ty::Int,
                        };
                        if matches!(attr.as_str(), "min" | "max") && !matches!(elem, Ty::Int | Ty::Float | Ty::Str) {
                            return bad(format!("`.{attr}` does not apply to {}", ty_name(self.s, &ty)), "`.min` and `.max` take lists of numbers or strings, or bytes");
                        }
                        self.fallible.set(true);
                        let r = match attr.as_str() {
                            "first" => quote!(__io::expr_at(&#ts[..], 0) #q),
                            "last" => quote!(__io::expr_last(&#ts[..]) #q),
                            "min" => quote!(__io::expr_extreme(&#ts[..], false) #q),
                            _ => quote!(__io::expr_extreme(&#ts[..], true) #q),
                        };
                        elem_value(r, elem)
                    }
                    ("size", Ty::List(_) | Ty::Bytes) | ("length", Ty::Bytes) => {
                        let ts = unborrowed(ts);
                        (group(quote!(#ts.len() as i128)), Ty::Int)
                    }
                    ("length", Ty::Str) => (group(quote!(#ts.chars().count() as i128)), Ty::Int),
                    // Kaitai Struct's compiler refuses `.length` on a list: keep schemas it accepts.
                    ("length", Ty::List(_)) => return bad(format!("`.length` does not apply to {} (Kaitai Struct counts a list with `.size`)", ty_name(self.s, &ty)), "use `.size` for the number of elements"),
                    _ => return bad(format!("`.{attr}` is not a method or member of {}", ty_name(self.s, &ty)), "supported: `.to_i` on enums, `.size` on lists and bytes, `.length` on bytes and strings"),
                }
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// `a[i]` and a list literal `[a, b, ...]`.
    #[allow(clippy::type_complexity)]
    pub(super) fn ex_index_list(
        &self,
        e: &Expr,
        te: &TExpr,
        scope: &Scope,
    ) -> Result<(TokenStream, Ty), (String, String)> {
        let q = scope.ctx.q(self.cur_field.borrow().as_deref());
        Ok(match e {
            Expr::Index(list, index) => {
                let Node::Index(lt, itx) = &te.node else {
                    return Err(mismatch(e));
                };
                let (ts, _) = self.cx(list, lt, scope)?;
                let (it, _) = self.cx(index, itx, scope)?;
                let elem = te.ty.clone();
                self.fallible.set(true);
                elem_value(quote!(__io::expr_at(&#ts[..], #it) #q), elem)
            }
            Expr::List(items) => {
                if !items.is_empty()
                    && items
                        .iter()
                        .all(|x| matches!(x, Expr::Int(v) if (0..=255).contains(v)))
                {
                    let lits = items.iter().map(|x| match x {
                        Expr::Int(v) => Literal::u8_unsuffixed(*v as u8),
                        _ => Literal::u8_unsuffixed(0),
                    });
                    return Ok((quote!(::std::vec::Vec::<u8>::from([#(#lits),*])), Ty::Bytes));
                }
                let (Node::List(typed), Ty::List(elem)) = (&te.node, &te.ty) else {
                    return Err(mismatch(e));
                };
                let mut parts = Vec::new();
                if let Ty::AnyUser(ts) = &**elem {
                    // User-type values: each copied into its variant of the types' enum.
                    let ts: Vec<String> =
                        ts.iter().map(|t| self.s.type_name(t).to_owned()).collect();
                    self.use_any_user(&ts);
                    let en = super::any_user_ident(&ts);
                    for (x, tx) in items.iter().zip(typed) {
                        let (xt, xty) = self.cx(x, tx, scope)?;
                        let Ty::User(tn) = xty else {
                            return Err(mismatch(e));
                        };
                        let vi = type_ident(self.s.type_name(&tn));
                        parts.push(quote!(#en::#vi(#xt.clone())));
                    }
                    return Ok((quote!(::std::vec::Vec::from([#(#parts),*])), te.ty.clone()));
                }
                for (x, tx) in items.iter().zip(typed) {
                    let (mut xt, xty) = self.cx(x, tx, scope)?;
                    // An integer among floats is a float.
                    if xty == Ty::Int && **elem == Ty::Float {
                        xt = group(quote!(#xt as f64));
                    }
                    parts.push(match **elem {
                        Ty::Str => quote!(::std::string::String::from(AsRef::<str>::as_ref(&#xt))),
                        _ => xt,
                    });
                }
                (quote!(::std::vec::Vec::from([#(#parts),*])), te.ty.clone())
            }
            // `crate::context`: a context param of a recursive root type, or (at the top
            // level, where it is absent) the root's own value.
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// A method call `a.m(args)`.
    #[allow(clippy::type_complexity)]
    pub(super) fn ex_call(
        &self,
        e: &Expr,
        te: &TExpr,
        scope: &Scope,
    ) -> Result<(TokenStream, Ty), (String, String)> {
        let bad = |m: String, h: &str| Err((m, h.to_owned()));
        let q = scope.ctx.q(self.cur_field.borrow().as_deref());
        Ok(match e {
            Expr::Call(inner, m, args) if m == "__or_self" && args.len() == 1 => {
                let Expr::Name(pn) = &**inner else {
                    return bad("internal: `__or_self` on a non-name".into(), "");
                };
                let Node::OrSelf(_, tf) = &te.node else {
                    return Err(mismatch(e));
                };
                let (fb, fty) = self.cx(&args[0], tf, scope)?;
                let id = field_ident(pn);
                (
                    group(
                        quote!(match &#id { ::std::option::Option::Some(__o) => *__o, ::std::option::Option::None => #fb }),
                    ),
                    fty,
                )
            }
            Expr::Call(inner, m, args) => {
                let Node::Method {
                    of, args: targs, ..
                } = &te.node
                else {
                    return Err(mismatch(e));
                };
                let (ts, ty) = self.cx(inner, of, scope)?;
                let mut vals = Vec::new();
                for (a, ta) in args.iter().zip(targs) {
                    vals.push(self.cx(a, ta, scope)?);
                }
                let tys: Vec<&Ty> = vals.iter().map(|(_, t)| t).collect();
                match (m.as_str(), &ty, tys.as_slice()) {
                    ("substring", Ty::Str, [Ty::Int, Ty::Int]) => {
                        let (a, b) = (&vals[0].0, &vals[1].0);
                        self.fallible.set(true);
                        (
                            quote!(__io::expr_substring(AsRef::<str>::as_ref(&#ts), #a, #b) #q),
                            Ty::Str,
                        )
                    }
                    ("to_i", Ty::Str, [Ty::Int]) => {
                        let r = &vals[0].0;
                        self.fallible.set(true);
                        (
                            quote!(__io::expr_str_to_i(AsRef::<str>::as_ref(&#ts), #r) #q),
                            Ty::Int,
                        )
                    }
                    ("to_s", Ty::Bytes, [Ty::Str]) => {
                        let Some(Expr::Str(enc)) = args.first() else {
                            return bad(
                                "`.to_s` takes the encoding as a string literal".into(),
                                "write e.g. `.to_s(\"UTF-8\")`",
                            );
                        };
                        self.fallible.set(true);
                        (
                            quote!(__io::expr_bytes_to_s(AsRef::<[u8]>::as_ref(&#ts), #enc) #q),
                            Ty::Str,
                        )
                    }
                    _ => {
                        let shown: Vec<String> = tys.iter().map(|t| ty_name(self.s, t)).collect();
                        return bad(format!("`.{m}({})` is not a method of {}", shown.join(", "), ty_name(self.s, &ty)), "supported: `.substring(from, to)` and `.to_i(radix)` on strings, `.to_s(encoding)` on bytes");
                    }
                }
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// `a.as<t>`, `sizeof<t>`, a unary operator and `c ? a : b`.
    #[allow(clippy::type_complexity)]
    pub(super) fn ex_cast_unary_ternary(
        &self,
        e: &Expr,
        te: &TExpr,
        scope: &Scope,
    ) -> Result<(TokenStream, Ty), (String, String)> {
        let q = scope.ctx.q(self.cur_field.borrow().as_deref());
        Ok(match e {
            Expr::Cast(inner, target) => {
                let Node::Cast(tin, _) = &te.node else {
                    return Err(mismatch(e));
                };
                let (ts, ty) = self.cx(inner, tin, scope)?;
                if let (Ty::List(e), "bytes") = (&ty, target.as_str()) {
                    if **e == Ty::Int {
                        // `[a, b].as<bytes>`: every element must be a byte value (a list
                        // literal's elements are `i128` already).
                        self.fallible.set(true);
                        let elem = if matches!(**inner, Expr::List(_)) {
                            quote!(*__b)
                        } else {
                            group(quote!(*__b as i128))
                        };
                        return Ok((
                            quote!(#ts.iter().map(|__b| u8::try_from(#elem).map_err(|_| __io::ExprError(::std::format!("{} is not a byte value (0..=255)", __b)))).collect::<::std::result::Result<::std::vec::Vec<u8>, _>>() #q),
                            Ty::Bytes,
                        ));
                    }
                }
                if let Ty::Switch(owner, fid) = &ty {
                    let t = self.s.ty(*owner);
                    let field = t.fields.get(*fid).map(|g| (t, g));
                    if let Some((t, g)) = field {
                        if let Some((vi, tn, _)) = self
                            .switch_variants(g)
                            .into_iter()
                            .find(|(_, tn, _)| self.s.type_name(tn) == target)
                        {
                            let en = Self::switch_enum_name(t, g);
                            let msg = format!(
                                "`{}.{}` does not hold a `{}`",
                                t.name,
                                g.id,
                                self.s.type_name(&tn)
                            );
                            self.fallible.set(true);
                            return Ok((
                                then(
                                    quote!(match &#ts { #en::#vi(__c) => ::std::result::Result::Ok(__c), #[allow(unreachable_patterns)] _ => ::std::result::Result::Err(__io::ExprError(::std::string::String::from(#msg))) }),
                                    &q,
                                ),
                                Ty::User(tn),
                            ));
                        }
                        // `.as<u4>` on a switch mixing number and other cases: the number
                        // of the cases it picks (see `crate::num_type::cast_cases`).
                        let vs = self.switch_variants(g);
                        let names: Vec<String> = vs
                            .iter()
                            .map(|(_, tn, _)| self.s.type_name(tn).to_owned())
                            .collect();
                        let picked = crate::num_type::cast_cases(&names, target);
                        if let Some(first) = picked.first() {
                            let float = crate::num_type::case_number(first).is_some_and(|c| c.2);
                            let (out, ty) = if float {
                                (quote!(f64), Ty::Float)
                            } else {
                                (quote!(i128), Ty::Int)
                            };
                            let en = Self::switch_enum_name(t, g);
                            let arms = vs.iter().filter(|(_, tn, _)| picked.iter().any(|p| p.as_str() == self.s.type_name(tn))).map(
                                |(vi, _, _)| quote!(#en::#vi(__c) => ::std::result::Result::Ok(*__c as #out),),
                            );
                            let msg = format!("`{}.{}` does not hold a `{}`", t.name, g.id, target);
                            self.fallible.set(true);
                            return Ok((
                                then(
                                    quote!(match &#ts { #(#arms)* #[allow(unreachable_patterns)] _ => ::std::result::Result::Err(__io::ExprError(::std::string::String::from(#msg))) }),
                                    &q,
                                ),
                                ty,
                            ));
                        }
                    }
                }
                (ts, ty)
            }
            Expr::SizeOf(_) => size_lit(te)?,
            Expr::Unary(op, inner) => {
                let Node::Unary(_, tin) = &te.node else {
                    return Err(mismatch(e));
                };
                let (ts, ty) = self.cx(inner, tin, scope)?;
                match (op, &ty) {
                    // A constant condition is folded (`not true` is `false`).
                    (UnOp::Not, Ty::Bool) => {
                        match const_bool(e).or_else(|| const_ts(&ts).map(|b| !b)) {
                            Some(v) => (quote!(#v), Ty::Bool),
                            None => (group(quote!(!#ts)), Ty::Bool),
                        }
                    }
                    (UnOp::Neg, Ty::Int) => (quote!(#ts.wrapping_neg()), Ty::Int),
                    (UnOp::Neg, Ty::Float) => (group(quote!(-#ts)), Ty::Float),
                    (UnOp::BitNot, Ty::Int) => (group(quote!(!#ts)), Ty::Int),
                    _ => return Err(mismatch(e)),
                }
            }
            Expr::Ternary(ce, ae, be) => {
                let Node::Ternary(tc, ta, tb) = &te.node else {
                    return Err(mismatch(e));
                };
                let (c, _) = self.cx(ce, tc, scope)?;
                let (a, at) = self.cx(ae, ta, scope)?;
                let (b, bt) = self.cx(be, tb, scope)?;
                // Constant conditions and branches are folded: `c ? true : false` is `c`.
                let k = |e: &Expr, ts: &TokenStream| const_bool(e).or_else(|| const_ts(ts));
                match (k(ce, &c), k(ae, &a), k(be, &b)) {
                    (Some(true), ..) => return Ok((a, at)),
                    (Some(false), ..) => return Ok((b, bt)),
                    (None, Some(x), Some(y)) if x == y => return Ok((quote!(#x), Ty::Bool)),
                    (None, Some(true), Some(false)) => return Ok((c, Ty::Bool)),
                    (None, Some(false), Some(true)) => return Ok((group(quote!(!#c)), Ty::Bool)),
                    _ => {}
                }
                // Branches may be a borrowed field and an owned computed value: strings and
                // bytes are made owned on both sides so the two have one Rust type.
                let (a, b) = match at {
                    Ty::Str => (
                        quote!(::std::string::String::from(AsRef::<str>::as_ref(&#a))),
                        quote!(::std::string::String::from(AsRef::<str>::as_ref(&#b))),
                    ),
                    Ty::Bytes => (
                        quote!(AsRef::<[u8]>::as_ref(&#a).to_vec()),
                        quote!(AsRef::<[u8]>::as_ref(&#b).to_vec()),
                    ),
                    // Lists of numbers widen to `i128` / `f64` elements (a `u2` field and a
                    // literal then agree); others are copied.
                    Ty::List(ref e) if matches!(**e, Ty::Int | Ty::Float) => {
                        (self.wide_list(a, ae, e), self.wide_list(b, be, e))
                    }
                    Ty::List(_) => (quote!(#a[..].to_vec()), quote!(#b[..].to_vec())),
                    // Values of two user types: seen through the dynamic view.
                    _ if te.ty == Ty::AnyStruct => {
                        (dyn_user(self.s, a, &at), dyn_user(self.s, b, &bt))
                    }
                    _ => (a, b),
                };
                let ty = if te.ty == Ty::AnyStruct {
                    Ty::AnyStruct
                } else {
                    at
                };
                (group(quote!(if #c { #a } else { #b })), ty)
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// A binary operator: arithmetic, bit operations, comparisons, `and`/`or`.
    #[allow(clippy::type_complexity)]
    pub(super) fn ex_binary(
        &self,
        e: &Expr,
        te: &TExpr,
        scope: &Scope,
    ) -> Result<(TokenStream, Ty), (String, String)> {
        let q = scope.ctx.q(self.cur_field.borrow().as_deref());
        Ok(match e {
            Expr::Binary(op, a, b) => {
                let Node::Binary(_, ta, tb) = &te.node else {
                    return Err(mismatch(e));
                };
                let (mut at, aty, mut bt, bty) =
                    promote(self.cx(a, ta, scope)?, a, self.cx(b, tb, scope)?, b);
                match op {
                    BinOp::And | BinOp::Or => {
                        // `x < y or x > y` is `x != y`.
                        if let (
                            BinOp::Or,
                            Expr::Binary(BinOp::Lt, x1, y1),
                            Expr::Binary(BinOp::Gt, x2, y2),
                        ) = (op, &**a, &**b)
                        {
                            if let (true, Node::Binary(_, tx, ty)) =
                                (x1 == x2 && y1 == y2, &ta.node)
                            {
                                let ne = TExpr {
                                    ty: Ty::Bool,
                                    node: Node::Binary(BinOp::Ne, tx.clone(), ty.clone()),
                                };
                                return self.ex_binary(
                                    &Expr::Binary(BinOp::Ne, x1.clone(), y1.clone()),
                                    &ne,
                                    scope,
                                );
                            }
                        }
                        // A constant side that does not decide the value is dropped:
                        // `true and x` is `x`, `x or false` is `x`; a constant left side that
                        // decides it is the value (`false and x` is `false`).
                        let k = |e: &Expr, ts: &TokenStream| const_bool(e).or_else(|| const_ts(ts));
                        let and = *op == BinOp::And;
                        match (k(a, &at), k(b, &bt)) {
                            (Some(x), _) if x == and => return Ok((bt, Ty::Bool)),
                            (Some(x), _) => return Ok((quote!(#x), Ty::Bool)),
                            (None, Some(y)) if y == and => return Ok((at, Ty::Bool)),
                            _ => {}
                        }
                        if and {
                            (group(quote!(#at && #bt)), Ty::Bool)
                        } else {
                            (group(quote!(#at || #bt)), Ty::Bool)
                        }
                    }
                    _ if op.is_comparison() => {
                        // Strings order by code point, as Kaitai's Python target does; bytes
                        // compare element by element as unsigned bytes, like Kaitai.
                        // Constants are folded: `x == true` is `x`, `x != true` is `!x`, and
                        // two integer literals compare here.
                        if operand_key(&at) == operand_key(&bt)
                            && aty != Ty::Float
                            && !at.to_string().contains('?')
                        {
                            // The same value on both sides (literals, or instances that are
                            // literals).
                            let v = matches!(op, BinOp::Eq | BinOp::Le | BinOp::Ge);
                            return Ok((quote!(#v), Ty::Bool));
                        }
                        if matches!(op, BinOp::Eq | BinOp::Ne) && aty == Ty::Bool {
                            let eq = *op == BinOp::Eq;
                            let k =
                                |e: &Expr, ts: &TokenStream| const_bool(e).or_else(|| const_ts(ts));
                            match (k(a, &at), k(b, &bt)) {
                                (Some(x), Some(y)) => {
                                    let v = (x == y) == eq;
                                    return Ok((quote!(#v), Ty::Bool));
                                }
                                (Some(k), None) => {
                                    return Ok((
                                        if k == eq { bt } else { group(quote!(!#bt)) },
                                        Ty::Bool,
                                    ))
                                }
                                (None, Some(k)) => {
                                    return Ok((
                                        if k == eq { at } else { group(quote!(!#at)) },
                                        Ty::Bool,
                                    ))
                                }
                                _ => {}
                            }
                        }
                        if let (Expr::Int(x), Expr::Int(y)) = (&**a, &**b) {
                            let v = match op {
                                BinOp::Eq => x == y,
                                BinOp::Ne => x != y,
                                BinOp::Lt => x < y,
                                BinOp::Le => x <= y,
                                BinOp::Gt => x > y,
                                _ => x >= y,
                            };
                            return Ok((quote!(#v), Ty::Bool));
                        }
                        if aty == Ty::Str {
                            at = quote!(AsRef::<str>::as_ref(&#at));
                            bt = quote!(AsRef::<str>::as_ref(&#bt));
                        }
                        if aty == Ty::Bytes {
                            at = quote!(AsRef::<[u8]>::as_ref(&#at));
                            bt = quote!(AsRef::<[u8]>::as_ref(&#bt));
                        }
                        // A bit operation compared is written in parentheses, as a reader
                        // expects (`(flags & 4) != 0`), though Rust needs none there.
                        let bits = |e: &Expr| {
                            matches!(
                                e,
                                Expr::Binary(BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor, ..)
                            )
                        };
                        if bits(a) {
                            at = quote!((#at));
                        }
                        if bits(b) {
                            bt = quote!((#bt));
                        }
                        let o = match op {
                            BinOp::Eq => quote!(==),
                            BinOp::Ne => quote!(!=),
                            BinOp::Lt => quote!(<),
                            BinOp::Le => quote!(<=),
                            BinOp::Gt => quote!(>),
                            _ => quote!(>=),
                        };
                        (group(quote!(#at #o #bt)), Ty::Bool)
                    }
                    _ => {
                        if aty == Ty::Float && bty == Ty::Float && *op == BinOp::Mod {
                            // Floored, as the integer `%` (docs/schema-language.md, "One
                            // semantics").
                            return Ok((quote!(__io::expr_fmod_floor(#at, #bt)), Ty::Float));
                        }
                        if aty == Ty::Float
                            && bty == Ty::Float
                            && matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div)
                        {
                            let o = match op {
                                BinOp::Add => quote!(+),
                                BinOp::Sub => quote!(-),
                                BinOp::Mul => quote!(*),
                                _ => quote!(/),
                            };
                            return Ok((group(quote!(#at #o #bt)), Ty::Float));
                        }
                        if *op == BinOp::Add && aty == Ty::Str && bty == Ty::Str {
                            // String concatenation.
                            return Ok((
                                quote!(
                                    ::std::format!("{}{}", AsRef::<str>::as_ref(&#at), AsRef::<str>::as_ref(&#bt))
                                ),
                                Ty::Str,
                            ));
                        }
                        let lit = match &**b {
                            Expr::Int(v) => Some(*v),
                            Expr::Unary(UnOp::Neg, x) => match &**x {
                                Expr::Int(v) => Some(v.wrapping_neg()),
                                _ => None,
                            },
                            _ => None,
                        };
                        match op {
                            BinOp::Add => (quote!(#at.wrapping_add(#bt)), Ty::Int),
                            BinOp::Sub => (quote!(#at.wrapping_sub(#bt)), Ty::Int),
                            BinOp::Mul => (quote!(#at.wrapping_mul(#bt)), Ty::Int),
                            BinOp::BitAnd => (group(quote!(#at & #bt)), Ty::Int),
                            BinOp::BitOr => (group(quote!(#at | #bt)), Ty::Int),
                            BinOp::BitXor => (group(quote!(#at ^ #bt)), Ty::Int),
                            BinOp::Div | BinOp::Mod => {
                                match lit {
                                    Some(v) if v != 0 => {
                                        // Kaitai Struct's rules: `/` rounds down, `%`
                                        // takes the divisor's sign.
                                        if *op == BinOp::Div {
                                            (quote!(__io::div_floor(#at, #bt)), Ty::Int)
                                        } else {
                                            (quote!(__io::mod_floor(#at, #bt)), Ty::Int)
                                        }
                                    }
                                    Some(_) => return Err(mismatch(e)),
                                    // A divisor from the data: zero is an error when the
                                    // expression is evaluated, never a wrong value.
                                    None => {
                                        self.fallible.set(true);
                                        let f = if *op == BinOp::Div {
                                            quote!(__io::expr_div_floor)
                                        } else {
                                            quote!(__io::expr_mod_floor)
                                        };
                                        (quote!(#f(#at, #bt) #q), Ty::Int)
                                    }
                                }
                            }
                            _ => match lit {
                                Some(v) if (0..64).contains(&v) => {
                                    let n = Literal::u32_unsuffixed(v as u32);
                                    if *op == BinOp::Shl {
                                        (quote!(#at.wrapping_shl(#n)), Ty::Int)
                                    } else {
                                        (quote!(#at.wrapping_shr(#n)), Ty::Int)
                                    }
                                }
                                Some(_) => return Err(mismatch(e)),
                                // A shift amount from the data: outside 0..=63 it is an
                                // error when the expression is evaluated.
                                None => {
                                    self.fallible.set(true);
                                    let left = *op == BinOp::Shl;
                                    (quote!(__io::expr_shift(#at, #bt, #left) #q), Ty::Int)
                                }
                            },
                        }
                    }
                }
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// `value.member` where `value` is of user type `tn`: a stored field (copied if it is a
    /// number, borrowed otherwise), a derived count/length computed from the value, or a
    /// value instance (its method).
    #[allow(clippy::type_complexity)]
    pub(super) fn member_of(
        &self,
        ts: &TokenStream,
        tn: &TypeRef,
        attr: &str,
        scope: &Scope,
    ) -> Result<(TokenStream, Ty), (String, String)> {
        let q = scope.ctx.q(self.cur_field.borrow().as_deref());
        let Some(t) = self.s.type_of(tn) else {
            return Err((
                format!("unknown type `{}`", self.s.type_name(tn)),
                String::new(),
            ));
        };
        let tn = t.name.as_str();
        if let Some(f) = t.fields.iter().find(|f| f.id == attr) {
            let fi = field_ident(attr);
            let derived = counts_and_lengths(t);
            if let Some(d) = derived.get(attr) {
                let v = match d {
                    Derived::Count(l) | Derived::Bytes(l) => {
                        let li = field_ident(l);
                        let user = t.fields.iter().find(|g| &g.id == l).is_some_and(|g| {
                            matches!(g.kind, FieldKind::User { .. } | FieldKind::Switch { .. })
                        });
                        if user && matches!(d, Derived::Bytes(_)) {
                            group(quote!(#ts.#li.encoded_len() as i128))
                        } else {
                            group(quote!(#ts.#li.len() as i128))
                        }
                    }
                    Derived::Stored(l, _) => {
                        let m = temp_for("produced_len", l);
                        group(quote!(#ts.#m()))
                    }
                    Derived::Sum(..) => {
                        return Err((
                            format!("`{attr}` of `{tn}` is a derived sum"),
                            "use the list's values".into(),
                        ))
                    }
                };
                return Ok((v, Ty::Int));
            }
            if f.sum_of.is_some() {
                return Err((
                    format!("`{attr}` of `{tn}` is a derived sum"),
                    "use the list's values".into(),
                ));
            }
            let fty = self.field_ty(f);
            return Ok(match &fty {
                Ty::Int => (group(quote!(#ts.#fi as i128)), Ty::Int),
                Ty::Float => (group(quote!(#ts.#fi as f64)), Ty::Float),
                Ty::Bool | Ty::Enum(_) => (quote!(#ts.#fi), fty.clone()),
                Ty::Opt(inner) => {
                    let msg = format!("`{attr}` of `{tn}` is absent (its `if` is false)");
                    self.fallible.set(true);
                    // A member of a borrowed value (`(&x.inst).last`) is borrowed once.
                    let base = unborrowed(ts.clone());
                    elem_value(
                        then(
                            quote!(match &#base.#fi { ::std::option::Option::Some(__o) => ::std::result::Result::Ok(__o), ::std::option::Option::None => ::std::result::Result::Err(__io::ExprError(::std::string::String::from(#msg))) }),
                            &q,
                        ),
                        (**inner).clone(),
                    )
                }
                _ if matches!(f.kind, FieldKind::Contents(_)) => {
                    return Err((
                        format!("`{attr}` of `{tn}` is fixed contents"),
                        "compare with the bytes themselves".into(),
                    ))
                }
                _ => match self.number_switch_ty(&fty) {
                    Some(nt) => {
                        self.fallible.set(true);
                        (quote!(#ts.#fi.value() #q), nt)
                    }
                    None => (group(quote!(&#ts.#fi)), fty.clone()),
                },
            });
        }
        if let Some(i) = t.instances.iter().find(|i| i.id == attr) {
            let mi = field_ident(attr);
            if i.cond.is_some() {
                return Err((
                    format!("instance `{attr}` of `{tn}` is conditional (`if`)"),
                    "test the same condition instead".into(),
                ));
            }
            // The instance's type, from its expression in the scope of its own type; the key
            // on the inlining stack stops a cycle through other types.
            let key = format!("{tn}.{attr}");
            if self.inlining.borrow().contains(&key) || self.inlining.borrow().len() > 64 {
                return Err((
                    format!("instance `{key}` depends on itself"),
                    "compute the value from fields, not from itself".into(),
                ));
            }
            self.inlining.borrow_mut().push(key);
            let ty = self.instance_ty(t, i);
            self.inlining.borrow_mut().pop();
            let (ty, fallible) = ty?;
            let call = if fallible {
                self.fallible.set(true);
                quote!(#ts.#mi() #q)
            } else {
                quote!(#ts.#mi())
            };
            return Ok(match ty {
                Ty::Int | Ty::Float | Ty::Bool | Ty::Enum(_) => (call, ty),
                other => (group(quote!(&#call)), other),
            });
        }
        Err((
            format!("`{tn}` has no field or instance `{attr}`"),
            "name a field of that type".into(),
        ))
    }

    /// The arguments of field `f` for the `params` of type `tn` (those written in the schema,
    /// then the context params of `crate::context`), converted to the params' member types,
    /// in `scope`; reports a count or type mismatch.
    pub(super) fn param_args(
        &mut self,
        f: &Field,
        tn: &TypeRef,
        scope: &Scope,
        kp: &str,
    ) -> Option<Vec<TokenStream>> {
        let params = self
            .s
            .type_of(tn)
            .map(|t| t.params.clone())
            .unwrap_or_default();
        let args = self.args_of(f, tn, scope, kp)?;
        Some(
            params
                .iter()
                .zip(args)
                .map(|(p, a)| match a {
                    // The reader's param is owned here: a copy of the value.
                    Arg::Direct(id)
                        if matches!(
                            param_rust_ty(self.s, &p.kind).1,
                            Ty::Int | Ty::Float | Ty::Enum(_) | Ty::Bool
                        ) =>
                    {
                        quote!(#id)
                    }
                    Arg::Direct(id) => quote!(#id.clone()),
                    Arg::Value(v) => v,
                })
                .collect(),
        )
    }

    /// The arguments field `f` gives opaque type `tn` (`type: name(5, true)`), as the slice
    /// of `statepack_runtime::process::OpaqueArg` that `read_with_args` takes.
    pub(super) fn opaque_args(
        &mut self,
        f: &Field,
        scope: &Scope,
        kp: &str,
    ) -> Option<TokenStream> {
        let mut vals = Vec::new();
        for a in &f.args {
            let (ts, ty) = self.expr(a, scope, &format!("{kp}.type"))?;
            vals.push(match ty {
                Ty::Int => quote!(::statepack_runtime::process::OpaqueArg::Int(#ts)),
                Ty::Bool => quote!(::statepack_runtime::process::OpaqueArg::Bool(#ts)),
                Ty::Float => quote!(::statepack_runtime::process::OpaqueArg::Float(#ts)),
                Ty::Str => quote!(::statepack_runtime::process::OpaqueArg::Str(AsRef::<str>::as_ref(&#ts))),
                Ty::Bytes => quote!(::statepack_runtime::process::OpaqueArg::Bytes(AsRef::<[u8]>::as_ref(&#ts))),
                // Refused by the check stage (`crate::typed`).
                _ => return None,
            });
        }
        Some(quote!(&[#(#vals),*]))
    }

    /// A param of the type being emitted passed on unchanged as the argument for param `p`
    /// (same kind, both optional or neither): its name, used as it is.
    fn direct_param(&self, a: &SrcExpr, p: &Param) -> Option<proc_macro2::Ident> {
        let Expr::Name(n) = &a.expr else { return None };
        let t = self.s.ty(self.cur_type.get());
        let q = t.params.iter().find(|q| &q.id == n)?;
        (q.kind == p.kind && q.optional == p.optional).then(|| field_ident(n))
    }

    /// The arguments of field `f` for the `params` of type `tn`, as `param_args` but with a
    /// param passed on unchanged kept as its name.
    fn args_of(&mut self, f: &Field, tn: &TypeRef, scope: &Scope, kp: &str) -> Option<Vec<Arg>> {
        if self.s.is_opaque(tn) {
            // An opaque type has no params: its arguments go to `read_with_args` (see
            // `opaque_args`), and the writer gives none.
            return Some(Vec::new());
        }
        let params = self
            .s
            .type_of(tn)
            .map(|t| t.params.clone())
            .unwrap_or_default();
        let explicit: Vec<Option<SrcExpr>> = match &f.kind {
            FieldKind::User { .. } => f.args.iter().cloned().map(Some).collect(),
            _ => f
                .switch_args
                .iter()
                .find(|(n, _)| n == tn)
                .map(|(_, a)| a.iter().cloned().map(Some).collect())
                .unwrap_or_default(),
        };
        let written = params.iter().filter(|p| p.context.is_none()).count();
        if written != explicit.len() {
            self.err(
                f.pos_of("type"),
                &format!("{kp}.type"),
                format!(
                    "type `{}` takes {} argument(s) but {} are given",
                    self.s.type_name(tn),
                    written,
                    explicit.len()
                ),
                "give one argument per entry of the type's `params`, in order: `type: name(a, b)`",
            );
            return None;
        }
        let mut all = explicit;
        if let Some((_, ctx)) = f.ctx_args.iter().find(|(n, _)| Some(*n) == tn.id()) {
            all.extend(ctx.iter().cloned());
        }
        let mut out = Vec::new();
        for (p, a) in params.iter().zip(&all) {
            let (rty, want) = param_rust_ty(self.s, &p.kind);
            let Some(a) = a else {
                out.push(Arg::Value(quote!(::std::option::Option::<#rty>::None)));
                continue;
            };
            // A stream is not known while writing (its size is not): an `io` param is
            // not computed, nor checked, on write.
            if scope.ctx == Ctx::Write && is_io_param(&p.kind) {
                out.push(Arg::Value(TokenStream::new()));
                continue;
            }
            if let Some(id) = self.direct_param(a, p) {
                out.push(Arg::Direct(id));
                continue;
            }
            let (ts, ty) = self.expr(a, scope, &format!("{kp}.type"))?;
            let ok = ty == want || (want == Ty::Float && ty == Ty::Int);
            if !ok {
                let what = match &p.context {
                    Some(c) => {
                        format!("`{c}` of `{}` (given as `{}`)", self.s.type_name(tn), a.src)
                    }
                    None => format!("argument `{}`", a.src),
                };
                self.err(
                    f.pos_of("type"),
                    &format!("{kp}.type"),
                    format!(
                        "{what} is {} but param `{}` of `{}` is {}",
                        ty_name(self.s, &ty),
                        p.id,
                        self.s.type_name(tn),
                        ty_name(self.s, &want)
                    ),
                    "pass a value of the param's type",
                );
                return None;
            }
            // A float argument is an `f64` already, a list literal a list of `i128` or `f64`.
            let v = if ty == Ty::Float
                || matches!(ty, Ty::List(_)) && ty == want && self.is_wide_list(&a.expr, 0)
            {
                ts
            } else {
                convert_arg(ts, &want)
            };
            out.push(Arg::Value(if p.optional {
                quote!(::std::option::Option::Some(#v))
            } else {
                v
            }));
        }
        Some(out)
    }

    /// The list value `ts` (compiled from `e`, elements of type `elem`) as a list of `i128`
    /// or `f64`: a list literal or a param is one already.
    pub(super) fn wide_list(&self, ts: TokenStream, e: &Expr, elem: &Ty) -> TokenStream {
        match (self.is_wide_list(e, 0), elem) {
            (true, _) => quote!(#ts.to_vec()),
            (false, Ty::Float) => {
                quote!(#ts.iter().map(|__e| *__e as f64).collect::<::std::vec::Vec<f64>>())
            }
            _ => quote!(#ts.iter().map(|__e| *__e as i128).collect::<::std::vec::Vec<i128>>()),
        }
    }

    /// Whether the list expression `e` compiles to a list of `i128` or `f64`: a list
    /// literal, a param, a list cast or a value instance of one.
    fn is_wide_list(&self, e: &Expr, depth: usize) -> bool {
        match e {
            Expr::List(_) => true,
            Expr::Cast(inner, t) if t.ends_with("[]") => self.is_wide_list(inner, depth),
            Expr::Name(n) if self.is_param(n) => true,
            Expr::Name(n) if depth < 16 => self
                .cur_instances
                .iter()
                .find(|i| &i.id == n)
                .is_some_and(|i| self.is_wide_list(&i.value.expr, depth + 1)),
            _ => false,
        }
    }

    /// Whether `n` names a param of the type being emitted (held as `i128`, `f64`, ...) or
    /// an `f8` field (an `f64`): a number that needs no widening.
    fn is_param(&self, n: &str) -> bool {
        let t = self.s.ty(self.cur_type.get());
        t.params.iter().any(|p| p.id == n)
            || t.fields
                .iter()
                .any(|f| f.id == n && matches!(f.kind, FieldKind::Float { bytes: 8, .. }))
    }

    /// The write of value `v` of type `tn` by field `f` into writer `w`: the check that `v`
    /// holds the params written in the schema that it is given there (they are members of
    /// the API: a differing one is refused), and the call of its writer (an expression of
    /// type `Result<(), EncodeError>`), which is given the values of its context params
    /// (`_parent`/`_root` paths) as computed here, so that its own `__ctx_…` members are
    /// not used on write.
    pub(super) fn child_write(
        &mut self,
        f: &Field,
        tn: &TypeRef,
        scope: &Scope,
        kp: &str,
        v: TokenStream,
        w: TokenStream,
    ) -> Option<(TokenStream, TokenStream)> {
        let args = self.args_of(f, tn, scope, kp)?;
        let params = self
            .s
            .type_of(tn)
            .map(|td| td.params.clone())
            .unwrap_or_default();
        let mut checks = Vec::new();
        let mut ctx = Vec::new();
        for (p, a) in params.iter().zip(args) {
            if is_io_param(&p.kind) {
                continue;
            }
            // In the writer a param is a copy or a reference (`let n = &self.n;`).
            let a = match a {
                Arg::Direct(id) if p.context.is_some() || ctx_by_value(self.s, p) => {
                    if p.context.is_some() {
                        ctx.push(quote!(#id));
                        continue;
                    }
                    quote!(#id)
                }
                Arg::Direct(id) => group(quote!(*#id)),
                Arg::Value(a) if p.context.is_some() => {
                    ctx.push(if ctx_by_value(self.s, p) {
                        a
                    } else {
                        quote!(&#a)
                    });
                    continue;
                }
                Arg::Value(a) => a,
            };
            let pi = field_ident(&p.id);
            let pn = &p.id;
            let differs = match const_ts(&a) {
                Some(true) => quote!(!#v.#pi),
                Some(false) => quote!(#v.#pi),
                // Lists compare as slices (a list built here is not kept).
                None if matches!(p.kind, ParamKind::List(_)) => quote!(#v.#pi[..] != #a[..]),
                None => quote!(#v.#pi != #a),
            };
            checks.push(quote! {
                if #differs {
                    return Err(__io::EncodeError::new(__io::EncodeErrorKind::Semantic(format!("param `{}` of the value is {:?} but the schema gives {:?}", #pn, #v.#pi, #a))));
                }
            });
        }
        let call = if ctx.is_empty() {
            quote!(#v.write_to(#w))
        } else {
            quote!(#v.write_with_context(#w #(, #ctx)*))
        };
        Some((quote!(#(#checks)*), call))
    }

    /// The type of value instance `i` of type `t` (for member access from outside).
    #[allow(clippy::type_complexity)]
    pub(super) fn instance_ty(
        &self,
        t: &TypeDef,
        i: &Instance,
    ) -> Result<(Ty, bool), (String, String)> {
        let mut scope = Scope {
            vars: Vec::new(),
            ctx: Ctx::Method,
        };
        for p in &t.params {
            let ty = param_rust_ty(self.s, &p.kind).1;
            let ty = if p.optional {
                Ty::Opt(Box::new(ty))
            } else {
                ty
            };
            scope.vars.push((p.id.clone(), ty));
        }
        let derived = counts_and_lengths(t);
        for f in &t.fields {
            if derived.contains_key(&f.id) {
                scope.vars.push((f.id.clone(), Ty::Int));
            } else if !matches!(f.kind, FieldKind::Contents(_)) {
                scope.vars.push((f.id.clone(), self.field_ty(f)));
            }
        }
        // Instances of `t` itself are looked up while typing it.
        let me = Emitter {
            s: self.s,
            diags: Vec::new(),
            min_len: HashMap::new(),
            open_enums: self.open_enums.clone(),
            unread_types: HashSet::new(),
            cur_instances: t.instances.clone(),
            inlining: std::cell::RefCell::new(self.inlining.borrow().clone()),
            fallible: std::cell::Cell::new(false),
            in_method: std::cell::Cell::new(true),
            own_io: std::cell::Cell::new(false),
            cur_field: std::cell::RefCell::new(None),
            cur_type: std::cell::Cell::new(t.id),
            opts: self.opts.clone(),
            member_io: self.member_io,
            // Only expressions are typed with this emitter; no type is emitted.
            whole_types: HashSet::new(),
            aligned_ends: self.aligned_ends,
            positional: self.positional,
            bitfield_views: Vec::new(),
            typed: crate::typed::TypedSchema::default(),
            refs: HashSet::new(),
            cur_lazy: HashSet::new(),
            any_lazy: self.any_lazy,
            any_users: std::cell::RefCell::new(Vec::new()),
        };
        let ty = me.ex(&i.value.expr, &scope).map(|(_, ty)| ty)?;
        if let Some(c) = &i.cond {
            me.ex(&c.expr, &scope)?;
        }
        let ty = match &i.enum_name {
            Some(e) => e.id().map_or(ty, Ty::Enum),
            None => ty,
        };
        Ok((ty, me.fallible.get()))
    }

    /// A value instance used in an expression: its own expression, in the same scope.
    #[allow(clippy::type_complexity)]
    pub(super) fn inline_instance(
        &self,
        n: &str,
        te: &TExpr,
        scope: &Scope,
    ) -> Result<(TokenStream, Ty), (String, String)> {
        let (Some(inst), Node::Instance { value, cond, .. }) =
            (self.cur_instances.iter().find(|i| i.id == n), &te.node)
        else {
            return Err((format!("`{n}` is not an instance"), String::new()));
        };
        // With `enum:`, the typed value is the integer seen as the enum.
        let tv = match (&inst.enum_name, &value.node) {
            (Some(_), Node::AsEnum(inner, _)) => &**inner,
            _ => &**value,
        };
        self.inlining.borrow_mut().push(n.to_owned());
        let r = self.cx(&inst.value.expr, tv, scope);
        self.inlining.borrow_mut().pop();
        let (ts, ty) = r?;
        let (ts, ty) = match &inst.enum_name {
            None => (ts, ty),
            Some(e) => self.int_as_enum(e, ts, &ty)?,
        };
        let (Some(c), Some(tc)) = (&inst.cond, cond) else {
            return Ok((ts, ty));
        };
        // A conditional instance used by another value instance: its value when its
        // condition holds, else an error of the using instance.
        let (ct, _) = self.cx(&c.expr, tc, scope)?;
        let msg = format!("instance `{n}` has no value (its `if` is false)");
        let q = scope.ctx.q(self.cur_field.borrow().as_deref());
        self.fallible.set(true);
        Ok((
            then(
                quote!(if #ct { ::std::result::Result::Ok(#ts) } else { ::std::result::Result::Err(__io::ExprError(::std::string::String::from(#msg))) }),
                &q,
            ),
            ty,
        ))
    }

    /// An integer seen as a value of enum `e` (`enum:` on a value instance).
    #[allow(clippy::type_complexity)]
    pub(super) fn int_as_enum(
        &self,
        r: &EnumRef,
        ts: TokenStream,
        ty: &Ty,
    ) -> Result<(TokenStream, Ty), (String, String)> {
        let e = self.s.enum_name(r);
        let Some(id) = r.id() else {
            return Err((
                format!("unknown enum `{e}`"),
                "name an enum from `enums`".into(),
            ));
        };
        if ty != &Ty::Int {
            return Err((
                format!(
                    "`enum: {e}` needs an integer value, found {}",
                    ty_name(self.s, ty)
                ),
                "give the instance an integer `value`".into(),
            ));
        }
        if !self.open_enums.contains(&id) {
            return Err((
                format!("`enum` on a value instance needs the open enum `{e}` (the schema sets `-sp-strict`)"),
                "compare the integer with `.to_i` of enum values instead".into(),
            ));
        }
        let ei = type_ident(e);
        Ok((quote!(#ei::from_i_open(#ts)), Ty::Enum(id)))
    }
}

/// An argument for a param: a param of the enclosing type passed on unchanged (its name), or
/// a computed value of the param's member type.
enum Arg {
    Direct(proc_macro2::Ident),
    Value(TokenStream),
}

/// A branch of `? :` over values of several user types, borrowed as the dynamic view
/// (`&dyn Reflect`): a value of type `ty` (one already seen so is kept).
fn dyn_user(s: &Schema, v: TokenStream, ty: &Ty) -> TokenStream {
    match ty {
        Ty::User(tn) => {
            let ti = type_ident(s.type_name(tn));
            quote!({ let __d: &dyn ::statepack_runtime::reflect::Reflect = ::std::convert::identity::<&#ti>(&#v); __d })
        }
        _ => v,
    }
}

/// Whether a param of kind `k` holds streams (`io`, `io[]`).
fn is_io_param(k: &ParamKind) -> bool {
    match k {
        ParamKind::Io => true,
        ParamKind::List(inner) => is_io_param(inner),
        _ => false,
    }
}

/// The value of `e` when it is a constant condition (`true`, `not false`, ...).
fn const_bool(e: &Expr) -> Option<bool> {
    match e {
        Expr::Bool(b) => Some(*b),
        Expr::Unary(UnOp::Not, x) => const_bool(x).map(|b| !b),
        _ => None,
    }
}

/// The integer expression `ts` (compiled from `e`) as an `f64`: a literal is written as a
/// float literal.
fn int_to_f64(ts: TokenStream, e: &Expr) -> TokenStream {
    match e {
        Expr::Int(v) => {
            let l = Literal::f64_suffixed(*v as f64);
            quote!(#l)
        }
        _ => group(quote!(#ts as f64)),
    }
}

/// The compiled expression `ts` as text in which its operands stay apart: an invisible
/// group is written `⟨..⟩` (plain text drops it, so `⟨a + b⟩ * c` and `a + ⟨b * c⟩` would
/// read the same).
fn operand_key(ts: &TokenStream) -> String {
    use proc_macro2::{Delimiter, TokenTree};
    let mut out = String::new();
    for t in ts.clone() {
        match t {
            TokenTree::Group(g) if g.delimiter() == Delimiter::None => {
                out.push('⟨');
                out.push_str(&operand_key(&g.stream()));
                out.push('⟩');
            }
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ('(', ')'),
                    Delimiter::Brace => ('{', '}'),
                    _ => ('[', ']'),
                };
                out.push(open);
                out.push_str(&operand_key(&g.stream()));
                out.push(close);
            }
            t => {
                out.push_str(&t.to_string());
                out.push(' ');
            }
        }
    }
    out
}

/// The value of the compiled condition `ts` when it is a literal `true` or `false` (an
/// instance whose value is a literal, inlined).
fn const_ts(ts: &TokenStream) -> Option<bool> {
    match ts
        .to_string()
        .trim_matches(|c| c == '(' || c == ')' || c == ' ')
    {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// A member access `&x.f` as the place `x.f` (a method call borrows it itself); any other
/// expression as it is.
fn unborrowed(ts: TokenStream) -> TokenStream {
    place_of(&ts).unwrap_or(ts)
}

/// The operands of a binary operator, an integer beside a float made a float (as Kaitai
/// Struct's arithmetic does).
fn promote(
    (at, aty): (TokenStream, Ty),
    a: &Expr,
    (bt, bty): (TokenStream, Ty),
    b: &Expr,
) -> (TokenStream, Ty, TokenStream, Ty) {
    match (&aty, &bty) {
        (Ty::Int, Ty::Float) => (int_to_f64(at, a), Ty::Float, bt, bty),
        (Ty::Float, Ty::Int) => (at, aty, int_to_f64(bt, b), Ty::Float),
        _ => (at, aty, bt, bty),
    }
}

/// The problem of a typed tree that does not match its expression (the typer and the
/// compiler disagree about its shape; never expected).
fn mismatch(e: &Expr) -> (String, String) {
    (
        format!("internal: the typed tree of `{e}` does not match it"),
        "report this schema; the generator should have refused it with a clear message".into(),
    )
}

/// A size the typed tree has computed (`_sizeof`, `x._sizeof`, `sizeof<t>`) as an integer
/// literal.
#[allow(clippy::type_complexity)]
fn size_lit(te: &TExpr) -> Result<(TokenStream, Ty), (String, String)> {
    match te.node {
        Node::Size(v) => Ok((int_lit(v as i128), Ty::Int)),
        _ => Err((
            "internal: a size without its value in the typed tree".into(),
            String::new(),
        )),
    }
}

/// The value a member, property or method applies to, in the typed tree of `a.b`.
fn first_child<'t>(e: &Expr, te: &'t TExpr) -> Result<&'t TExpr, (String, String)> {
    match &te.node {
        Node::Method { of, .. } | Node::Member { of, .. } | Node::MemberInstance { of, .. } => {
            Ok(of)
        }
        _ => Err(mismatch(e)),
    }
}
