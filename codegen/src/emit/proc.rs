//! The processors of `process` fields: the built-in ones (`zlib`, `xor`, `rol`, `ror`) and
//! the custom ones the build's options name.

use super::*;

impl Emitter<'_> {
    /// The runtime `Processor` of a field's `process` (and the statements that compute its
    /// key), with expressions in `scope`.
    pub(super) fn processor(
        &mut self,
        f: &Field,
        scope: &Scope,
    ) -> Option<(TokenStream, TokenStream)> {
        let kp = format!("{}.process", f.key_path);
        Some(match f.process.as_ref()? {
            Process::Zlib => (quote!(), quote!(::statepack_runtime::io::Processor::Zlib)),
            Process::Xor(ProcArg::Bytes(b)) => {
                let lit = Literal::byte_string(b);
                (
                    quote!(),
                    quote!(::statepack_runtime::io::Processor::Xor(#lit)),
                )
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
                        _ => quote!(let __key: &[u8] = &[((#ts) & 0xff) as u8];),
                    },
                    Ty::Bytes => quote!(let __key: &[u8] = AsRef::<[u8]>::as_ref(&#ts);),
                    other => {
                        self.err(
                            e.pos,
                            &kp,
                            format!("the xor key `{}` is {}", e.src, ty_name(&other)),
                            "give an integer (one byte) or a byte field",
                        );
                        return None;
                    }
                };
                (
                    setup,
                    quote!(::statepack_runtime::io::Processor::Xor(__key)),
                )
            }
            Process::Rol(e) | Process::Ror(e) => {
                let n = self.expect_ty(e, scope, &kp, Ty::Int)?;
                let v = if matches!(f.process, Some(Process::Rol(_))) {
                    quote!(Rol)
                } else {
                    quote!(Ror)
                };
                (quote!(), quote!(::statepack_runtime::io::Processor::#v(#n)))
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
                                format!("processor argument `{}` is {}", a.src, ty_name(&other)),
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
            _ => (
                quote!(::statepack_runtime::io::unprocess),
                quote!(::statepack_runtime::io::reprocess),
                false,
            ),
        }
    }
}
