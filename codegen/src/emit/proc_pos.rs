//! `_io.pos` in the arguments of `process` on write.
//!
//! Kaitai Struct's readers take a processed field's stored bytes first and then evaluate the
//! processor's arguments, so `process: xor(_io.pos)` is keyed by the position *after* the
//! stored bytes. The reader here does the same (the arguments are evaluated once the bytes
//! are taken); the writer evaluates them with `_io.pos` moved on by the stored length, which a
//! sized field knows before it writes (`ByteWriter::pos_after`).

use super::{Emitter, Scope};
use crate::ir::*;
use proc_macro2::TokenStream;
use quote::quote;

/// True when an argument of `f`'s processor uses `_io`.
fn args_use_io(f: &Field) -> bool {
    let exprs: Vec<&SrcExpr> = match &f.process {
        Some(Process::Xor(ProcArg::Expr(e))) | Some(Process::Rol(e)) | Some(Process::Ror(e)) => {
            vec![e]
        }
        Some(Process::Custom { args, .. }) => args.iter().collect(),
        _ => Vec::new(),
    };
    exprs.iter().any(|e| crate::instances::uses_io(&e.expr))
}

impl Emitter<'_> {
    /// Wraps `process` (the writer's statements computing the stored bytes `__s` from the
    /// value's bytes `__d`) so that `_io.pos` in the processor's arguments is the position
    /// after the stored bytes: the size's value for `size: n`, the value's length for
    /// `size-eos` (the built-in processors keep the length). Unchanged when no argument uses
    /// `_io`.
    pub(super) fn proc_args_after(
        &mut self,
        f: &Field,
        size: &Size,
        scope: &Scope,
        kp: &str,
        process: TokenStream,
    ) -> Option<TokenStream> {
        if !args_use_io(f) {
            return Some(process);
        }
        let n = match self.size_value(size, scope, kp)? {
            Some(n) => quote!(usize::try_from(#n).unwrap_or(0)),
            None => quote!(__d.len()),
        };
        Some(quote! {
            let __w = &__w.pos_after(#n);
            #process
        })
    }
}
