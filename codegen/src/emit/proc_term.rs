//! `process` on a field that also has a terminator or `pad-right` (Kaitai Struct's order):
//! on read, the sized bytes are cut at the terminator and stripped of padding first, and what
//! remains is processed; on write, the value is processed back and then terminated and padded
//! to the size. The terminator and padding as read are kept, as for any terminated field, but
//! not the stored bytes: they are the value processed anew, which for the byte-for-byte
//! processors (`xor`, `rol`, `ror`) are the bytes read whenever the value is unchanged, and
//! for `zlib` or a processor written in Rust are what that processor produces.

use super::{temp_for, term_tokens, type_ident, Emitter, Scope};
use crate::ir::*;
use proc_macro2::TokenStream;
use quote::quote;

impl Emitter<'_> {
    /// The `Option<i128>` size of a terminated field (`None`: no size).
    fn term_size(&mut self, size: Option<&Size>, scope: &Scope, kp: &str) -> Option<TokenStream> {
        Some(match size {
            Some(s @ Size::Expr(_)) => {
                let v = self.size_value(s, scope, kp)??;
                quote!(::std::option::Option::Some(#v))
            }
            Some(Size::Eos) => quote!(::std::option::Option::Some(__r.remaining() as i128)),
            _ => quote!(::std::option::Option::None),
        })
    }

    /// Reads a byte field or a user type with `process` and a terminator or padding.
    pub(super) fn proc_term_read(&mut self, f: &Field, scope: &Scope) -> Option<TokenStream> {
        let kp = f.key_path.clone();
        let size = match &f.kind {
            FieldKind::Bytes(s) => Some(s),
            FieldKind::User { size, .. } => size.as_ref(),
            _ => None,
        };
        let n = self.term_size(size, scope, &kp)?;
        let term = term_tokens(f.term.as_ref()?);
        let (setup, proc_) = self.processor(f, scope)?;
        let unfn_within = if matches!(f.process, Some(Process::Custom { .. })) {
            quote!(::statepack_runtime::process::unprocess_custom_within)
        } else {
            quote!(__io::unprocess_within)
        };
        let tail = temp_for("tail", &f.id);
        let keep = if matches!(f.repeat, Repeat::None) {
            quote!(#tail = ::std::option::Option::Some(__tl.to_vec());)
        } else {
            quote!(#tail.push(__tl.to_vec());)
        };
        // The processed bytes count against the file's processed-bytes budget, which the
        // reader of a user type's bytes shares.
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
                let read = quote! {
                    #unfn_within(#proc_, __val, __at, __r.processed_room()).and_then(|__d| {
                        __r.charge_processed(__d.len(), __at)?;
                        let mut __sub = __io::ByteReader::new(&__d).sharing(__r.processed_share());
                        #[allow(unused_mut)]
                        let mut __v = #ti::read_from(&mut __sub #(, #args)*)?;
                        let __res = #finish;
                        __r.add_processed(__sub.processed_used());
                        __res
                    })
                };
                if f.boxed {
                    quote!(#read.map(::std::boxed::Box::new))
                } else {
                    read
                }
            }
            _ => quote!(#unfn_within(#proc_, __val, __at, __r.processed_room())
                .and_then(|__d| __r.charge_processed(__d.len(), __at).map(|()| __d))),
        };
        Some(quote! {{
            let __at = __r.offset();
            #setup
            match __r.read_terminated(#n, #term) {
                Ok((__val, __tl)) => { #keep #value }
                Err(e) => Err(e),
            }
        }})
    }

    /// Writes a byte field or a user type with `process` and a terminator or padding.
    pub(super) fn proc_term_write(&mut self, f: &Field, scope: &Scope) -> Option<TokenStream> {
        let kp = f.key_path.clone();
        let size = match &f.kind {
            FieldKind::Bytes(s) => Some(s),
            FieldKind::User { size, .. } => size.as_ref(),
            _ => None,
        };
        let n = match size {
            Some(s @ Size::Expr(_)) => {
                let v = self.size_value(s, scope, &kp)??;
                quote!(::std::option::Option::Some(#v))
            }
            _ => quote!(::std::option::Option::None),
        };
        let term = term_tokens(f.term.as_ref()?);
        let (setup, proc_) = self.processor(f, scope)?;
        let tail = temp_for("tail", &f.id);
        let tail = if matches!(f.repeat, Repeat::None) {
            quote!(self.#tail.as_deref())
        } else {
            quote!(self.#tail.get(__i).map(|__t| __t.as_slice()))
        };
        let value = self.bytes_to_process(f, scope, &kp)?;
        let (_, refn, fallible) = Self::process_fns(f);
        let re_q = if fallible { quote!(?) } else { quote!() };
        Some(quote!({
            #setup
            #value
            let __s = #refn(#proc_, __d, ::std::option::Option::None)#re_q;
            __w.write_terminated(&__s, #tail, #n, #term)?;
        }))
    }
}
