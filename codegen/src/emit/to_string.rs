//! `to-string`: a type's own description of a value, as the generated type's `Display`.
//!
//! Kaitai Struct gives a type with `to-string: <expression>` a string conversion (Python's
//! `__str__`, Java's `toString`). The expression is compiled like a value instance's, over
//! the value's fields, params and instances, and must be a string. `Display` cannot fail
//! (`to_string()` would panic on an error), so an expression that fails at run time (an
//! index out of range, a division by zero) writes `<to-string: message>` instead.

use super::*;

impl Emitter<'_> {
    /// `impl Display for #name` from `t`'s `to-string`, or nothing without one.
    pub(super) fn emit_to_string(
        &mut self,
        t: &TypeDef,
        derived: &HashMap<String, Derived>,
        name: &proc_macro2::Ident,
    ) -> Option<TokenStream> {
        let Some(e) = &t.to_string else {
            return Some(TokenStream::new());
        };
        let kp = if t.key_path.is_empty() {
            "to-string".to_owned()
        } else {
            format!("{}.to-string", t.key_path)
        };
        let (binds, scope) = self.method_scope(t, derived);
        self.in_method.set(true);
        self.fallible.set(false);
        let compiled = self.ex_stored(e, &scope, &kp);
        let fallible = self.fallible.replace(false);
        self.in_method.set(false);
        let ts = match compiled {
            Ok((ts, Ty::Str)) => ts,
            Ok((_, other)) => {
                self.err(
                    e.pos,
                    &kp,
                    format!(
                        "`to-string` must be a string, but `{}` is {}",
                        e.src,
                        ty_name(self.s, &other)
                    ),
                    "convert it, e.g. `value.to_s` or `\"id \" + id.to_s`",
                );
                return None;
            }
            Err((msg, hint)) => {
                self.err(e.pos, &kp, format!("in `{}`: {msg}", e.src), hint);
                return None;
            }
        };
        let text = if fallible {
            quote! {
                let __s = (|| -> ::std::result::Result<::std::string::String, __io::ExprError> {
                    ::std::result::Result::Ok(::std::string::String::from(AsRef::<str>::as_ref(&#ts)))
                })();
                let __s = match __s {
                    ::std::result::Result::Ok(__s) => __s,
                    ::std::result::Result::Err(__e) => return write!(__f, "<to-string: {}>", __e),
                };
            }
        } else {
            quote!(let __s = #ts;)
        };
        let doc = format!(
            " `to-string` of the schema: `{}`. An expression that fails writes `<to-string: message>`.",
            e.src
        );
        Some(quote! {
            impl ::core::fmt::Display for #name {
                #[doc = #doc]
                #[allow(unused_variables, clippy::redundant_locals, clippy::needless_borrow)]
                fn fmt(&self, __f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    #(#binds)*
                    #text
                    __f.pad(AsRef::<str>::as_ref(&__s))
                }
            }
        })
    }
}
