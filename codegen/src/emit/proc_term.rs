//! `process` on a field that also has a terminator or `pad-right` (Kaitai Struct's order):
//! on read, the sized bytes are cut at the terminator and stripped of padding first, and what
//! remains is processed; on write, the value is processed back and then terminated and padded
//! to the size. Only the byte-for-byte processors (`xor`, `rol`, `ror`) are allowed here:
//! they are their own inverse, so the written bytes are the read ones whenever the value is
//! unchanged (the terminator and padding as read are kept, as for any terminated field).

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
        let tail = temp_for("tail", &f.id);
        let keep = if matches!(f.repeat, Repeat::None) {
            quote!(#tail = ::std::option::Option::Some(__tl.to_vec());)
        } else {
            quote!(#tail.push(__tl.to_vec());)
        };
        let value = match &f.kind {
            FieldKind::User { name, .. } => {
                let ti = type_ident(name);
                let finish = if !f.strict && self.unread_types.contains(name) {
                    quote!({
                        __v.__unread_pad = __sub.align_to_byte_keep();
                        __v.__unread = __sub.take_rest().to_vec();
                        Ok(__v)
                    })
                } else {
                    quote!(__sub.finish().map(|_| __v))
                };
                let read = quote! {
                    __io::unprocess(#proc_, __val, __at).and_then(|__d| {
                        let mut __sub = __io::ByteReader::new(&__d);
                        #[allow(unused_mut)]
                        let mut __v = #ti::read_from(&mut __sub)?;
                        #finish
                    })
                };
                if f.boxed {
                    quote!(#read.map(::std::boxed::Box::new))
                } else {
                    read
                }
            }
            _ => quote!(__io::unprocess(#proc_, __val, __at)),
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
        Some(quote!({
            #setup
            #value
            let __s = __io::reprocess(#proc_, __d, ::std::option::Option::None);
            __w.write_terminated(&__s, #tail, #n, #term)?;
        }))
    }
}
