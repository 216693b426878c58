//! Positional instances read on first use: [`Lazy`].
//!
//! A positional instance that no `seq` field uses is not read while its type is read (as in
//! Kaitai Struct, whose readers evaluate an instance on its first access and keep it). The
//! generated member is a [`Lazy<T>`] holding what its read needs: the stream it reads from
//! (a shared copy of the bytes of the reader that read its type, with the stream's bounds and
//! the position after the type's `seq`, [`LazyAt`]) and the read itself, a closure over the
//! values of the fields its expressions use. [`Lazy::get`] reads it the first time and keeps
//! the result (the value, or the [`DecodeError`] naming the instance's path and the byte
//! offset), so an instance that nothing asks for never fails a decode.
//!
//! Reads on access keep the bounds of reads during decode: they nest at most
//! [`crate::positional::MAX_INSTANCE_DEPTH`] deep counting from the instance that holds them
//! (a chain of positions that point back at themselves ends there, one access at a time), and
//! the reads and bytes of every instance read from one input, during decode or on access,
//! count against that input's [`crate::positional::instance_budget`] and
//! [`crate::positional::instance_bytes_budget`] (and its processed-bytes budget). The bytes are
//! shared: one copy of a reader's input (an `Arc`), whatever number of instances hold it.
//!
//! An instance read from a substream of the root type that the root reads after the type
//! holding the instance (`io: _root.x._io`) finds that substream's bounds with the shared
//! bytes: the root's reader keeps them once it has read `x`
//! ([`ByteReader::keep_later_stream`]), and the read on first use enters them
//! ([`ByteReader::enter_later_stream`]).
//!
//! A value built by hand is [`Lazy::new`] (or `Lazy::from(value)`, or `Default`); it holds no
//! stream. `Clone` keeps the value read or the read still to do (both clones share the
//! bytes); `PartialEq` compares the values (reading both; two failed reads are equal when
//! their errors are), and so do `Eq` and `Hash` where `T` has them; `Debug` shows the value, or `<not readable: error>`; serde writes the
//! value (a failed read is a serialization error) and reads a value as [`Lazy::new`].

use crate::io::{ByteReader, DecodeError, LazyInput, NoTrace};
use crate::positional::ProcessedShare;
use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

/// Where a lazy instance's read starts: the stream of the type holding it as its reader was
/// after the type's `seq` (bounds, position, nesting of positional instances, the budgets
/// used so far). Taken by [`ByteReader::lazy_at`].
#[derive(Debug, Clone)]
pub struct LazyAt {
    input: Arc<LazyInput>,
    start: usize,
    end: usize,
    pos: usize,
    depth: u32,
    at: (usize, u8),
    processed: ProcessedShare,
}

impl LazyInput {
    /// Takes the budgets reader `r` has used so far into the shared counts.
    fn note<T: crate::io::Tracer>(&self, r: &ByteReader<'_, T>) {
        self.reads.fetch_max(r.inst_reads, Ordering::Relaxed);
        self.read_bytes.fetch_max(r.inst_bytes, Ordering::Relaxed);
        self.processed
            .fetch_max(r.processed_share().base, Ordering::Relaxed);
    }
}

impl<'a, T: crate::io::Tracer> ByteReader<'a, T> {
    /// The stream as it is now, for a positional instance read later ([`Lazy::pending`]).
    /// The first call copies the reader's bytes once; later calls share the copy.
    pub fn lazy_at(&mut self) -> LazyAt {
        let buf = self.buf;
        let input = self
            .lazy_input
            .get_or_insert_with(|| Arc::new(LazyInput::new(buf)))
            .clone();
        input.note(self);
        LazyAt {
            input,
            start: self.start,
            end: self.end,
            pos: self.pos,
            depth: self.inst_depth,
            at: self.inst_at,
            processed: self.processed_share(),
        }
    }
}

impl<T: crate::io::Tracer> ByteReader<'_, T> {
    /// Keeps the substream of field `name` of the root type, from absolute byte `start` to
    /// where this reader is now (just after the field), for the lazy instances read from it
    /// (`io: _root.name._io` in a type read before `name`, see [`ByteReader::enter_later_stream`]).
    pub fn keep_later_stream(&mut self, name: &'static str, start: u64) {
        let buf = self.buf;
        let input = self
            .lazy_input
            .get_or_insert_with(|| Arc::new(LazyInput::new(buf)))
            .clone();
        let start = usize::try_from(start).unwrap_or(usize::MAX).min(self.pos);
        if let Ok(mut later) = input.later.lock() {
            later.retain(|(n, _, _)| *n != name);
            later.push((name, start, self.pos));
        };
    }

    /// Makes this reader (the reader of a lazy instance on first use) read the substream of
    /// the root's field `name` as [`ByteReader::keep_later_stream`] kept it: from its first
    /// byte, with its bounds, so that `pos` is taken from its start.
    ///
    /// Errors: `Semantic` at this reader's offset when the stream is not known: the root
    /// type's reader did not read `name` (the type holding the instance was read on its own,
    /// or the root's read failed before `name`).
    pub fn enter_later_stream(&mut self, name: &str) -> Result<(), DecodeError> {
        let found = self.lazy_input.as_ref().and_then(|i| {
            let later = i.later.lock().ok()?;
            later
                .iter()
                .find(|(n, _, _)| *n == name)
                .map(|&(_, a, b)| (a, b))
                .filter(|&(a, b)| a <= b && b <= self.buf.len())
        });
        let Some((start, end)) = found else {
            return Err(DecodeError::new(
                self.offset(),
                crate::io::DecodeErrorKind::Semantic(format!(
                    "`_root.{name}._io`: the stream of `{name}` is not known (its root type's reader has not read `{name}`)"
                )),
            ));
        };
        self.start = start;
        self.pos = start;
        self.nbits = 0;
        self.set_end(end);
        Ok(())
    }
}

impl LazyAt {
    /// A reader of the stream at the position kept, with the budgets used so far (during
    /// decode up to this point, and by every read on access of the same input).
    fn reader(&self) -> ByteReader<'_, NoTrace> {
        let mut share = self.processed;
        share.base = share.base.max(self.input.processed.load(Ordering::Relaxed));
        let mut r = ByteReader::new(&self.input.bytes).sharing(share);
        r.start = self.start;
        r.pos = self.pos;
        r.set_end(self.end);
        r.inst_depth = self.depth;
        r.inst_at = self.at;
        r.inst_reads = self.input.reads.load(Ordering::Relaxed);
        r.inst_bytes = self.input.read_bytes.load(Ordering::Relaxed);
        r.lazy_input = Some(self.input.clone());
        r
    }
}

/// A lazy instance's read: the generated code reading it at `__r`.
type ReadFn<T> = dyn Fn(&mut ByteReader<'_, NoTrace>) -> Result<T, DecodeError> + Send + Sync;

struct Pending<T> {
    at: LazyAt,
    read: Box<ReadFn<T>>,
}

/// A positional instance read on first use and then kept (see the [module docs](self)).
///
/// `get` takes `&self`, so a decoded value stays immutable and shareable (`Send + Sync` when
/// `T` is); the cell is a [`OnceLock`].
pub struct Lazy<T> {
    cell: OnceLock<Result<T, DecodeError>>,
    pending: Option<Arc<Pending<T>>>,
    /// [`Lazy::get_mut`] has lent the value out: it may differ from what its stream holds.
    lent: bool,
}

impl<T> Lazy<T> {
    /// A value already known (built by hand, or read by the writer's caller).
    pub fn new(value: T) -> Self {
        Self {
            cell: OnceLock::from(Ok(value)),
            pending: None,
            lent: false,
        }
    }

    /// An instance to read at `at` with `read` the first time it is asked for.
    pub fn pending(
        at: LazyAt,
        read: impl Fn(&mut ByteReader<'_, NoTrace>) -> Result<T, DecodeError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            cell: OnceLock::new(),
            pending: Some(Arc::new(Pending {
                at,
                read: Box::new(read),
            })),
            lent: false,
        }
    }

    /// The value, read now if it has not been yet.
    ///
    /// Errors: the [`DecodeError`] of its read (path from the type holding the instance,
    /// absolute byte offset), the same one on every call.
    pub fn get(&self) -> Result<&T, DecodeError> {
        match self.cell.get_or_init(|| self.read()) {
            Ok(v) => Ok(v),
            Err(e) => Err(e.clone()),
        }
    }

    /// The value to change it (read first if needed).
    ///
    /// Errors: as [`Lazy::get`].
    pub fn get_mut(&mut self) -> Result<&mut T, DecodeError> {
        self.get()?;
        self.lent = true;
        match self.cell.get_mut() {
            Some(Ok(v)) => Ok(v),
            // `get` has filled the cell with a value.
            _ => unreachable!("a lazy instance read without error holds its value"),
        }
    }

    /// Replaces the value (the instance is then written from it).
    pub fn set(&mut self, value: T) {
        *self = Self::new(value);
    }

    /// The value, read now if needed.
    ///
    /// Errors: as [`Lazy::get`].
    pub fn into_inner(mut self) -> Result<T, DecodeError> {
        self.get()?;
        match self.cell.take() {
            Some(r) => r,
            None => unreachable!("a lazy instance read holds its result"),
        }
    }

    /// Whether the value is known (read, or given): then `get` reads nothing.
    pub fn is_read(&self) -> bool {
        self.cell.get().is_some()
    }

    /// Whether the value is the one its stream holds. A value read and never lent out by
    /// [`Lazy::get_mut`] is; one lent out is read again from the stream kept (not from the
    /// cell) and compared (a second read counts against the file's budgets, so a file that
    /// spent them on the first reads may answer false here). False for a value given by hand
    /// ([`Lazy::new`], [`Lazy::set`]), one changed through [`Lazy::get_mut`], and one whose
    /// read fails. Used by writers of instances whose bytes belong to another value.
    pub fn is_as_read(&self) -> bool
    where
        T: PartialEq,
    {
        match (&self.pending, self.cell.get()) {
            (Some(_), Some(Ok(_))) if !self.lent => true,
            (Some(_), Some(Ok(v))) => matches!(self.read(), Ok(ref w) if w == v),
            _ => false,
        }
    }

    fn read(&self) -> Result<T, DecodeError> {
        let Some(p) = &self.pending else {
            // A value without a read is made by `new`, which fills the cell.
            unreachable!("a lazy instance without a stream holds its value")
        };
        let mut r = p.at.reader();
        let out = (p.read)(&mut r);
        p.at.input.note(&r);
        out
    }
}

impl<T> From<T> for Lazy<T> {
    fn from(value: T) -> Self {
        Self::new(value)
    }
}

impl<T: Default> Default for Lazy<T> {
    fn default() -> Self {
        Self::new(T::default())
    }
}

impl<T: Clone> Clone for Lazy<T> {
    fn clone(&self) -> Self {
        Self {
            cell: self.cell.clone(),
            pending: self.pending.clone(),
            lent: self.lent,
        }
    }
}

impl<T: PartialEq> PartialEq for Lazy<T> {
    fn eq(&self, other: &Self) -> bool {
        match (self.get(), other.get()) {
            (Ok(a), Ok(b)) => a == b,
            (Err(a), Err(b)) => a == b,
            _ => false,
        }
    }
}

impl<T: Eq> Eq for Lazy<T> {}

impl<T: std::hash::Hash> std::hash::Hash for Lazy<T> {
    /// Hashes the value (read now if needed), or the error's text: equal values hash alike.
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        match self.get() {
            Ok(v) => {
                0u8.hash(h);
                v.hash(h);
            }
            Err(e) => {
                1u8.hash(h);
                e.to_string().hash(h);
            }
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for Lazy<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.get() {
            Ok(v) => v.fmt(f),
            Err(e) => write!(f, "<not readable: {e}>"),
        }
    }
}

impl<T: crate::reflect::ToValue> crate::reflect::ToValue for Lazy<T> {
    fn to_value(&self) -> crate::reflect::Value<'_> {
        match self.get() {
            Ok(v) => v.to_value(),
            Err(e) => crate::reflect::Value::Error(e),
        }
    }
}

#[cfg(feature = "serde")]
mod serde_impls {
    use super::Lazy;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    impl<T: Serialize> Serialize for Lazy<T> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            match self.get() {
                Ok(v) => v.serialize(s),
                Err(e) => Err(serde::ser::Error::custom(e)),
            }
        }
    }

    impl<'de, T: Deserialize<'de>> Deserialize<'de> for Lazy<T> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            T::deserialize(d).map(Lazy::new)
        }
    }

    impl<T: crate::bytes_json::BytesJson> crate::bytes_json::BytesJson for Lazy<T> {
        fn ser<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            match self.get() {
                Ok(v) => v.ser(s),
                Err(e) => Err(serde::ser::Error::custom(e)),
            }
        }
        fn de<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            T::de(d).map(Lazy::new)
        }
    }

    impl<T: crate::io::float_json::FloatRepr> crate::io::float_json::FloatRepr for Lazy<T> {
        fn to_repr(&self) -> crate::io::float_json::Repr {
            match self.get() {
                Ok(v) => v.to_repr(),
                Err(e) => crate::io::float_json::Repr::Text(format!("<not readable: {e}>")),
            }
        }
        fn from_repr(r: crate::io::float_json::Repr) -> Result<Self, String> {
            T::from_repr(r).map(Lazy::new)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::DecodeErrorKind;

    fn u16_at(r: &mut ByteReader<'_>, data: &[u8]) -> Lazy<u16> {
        let _ = data;
        let at = r.lazy_at();
        Lazy::pending(at, |r| {
            let s = r.enter_instance(2, false)?;
            let v = r.read_u16le()?;
            r.leave_instance(s);
            Ok(v)
        })
    }

    #[test]
    fn reads_on_first_use_and_keeps_the_value() {
        let data = [1u8, 2, 0x34, 0x12];
        let mut r = ByteReader::new(&data);
        let l = u16_at(&mut r, &data);
        assert!(!l.is_read());
        assert_eq!(*l.get().unwrap(), 0x1234);
        assert!(l.is_read());
        let c = l.clone();
        assert_eq!(c, Lazy::new(0x1234));
        assert_eq!(format!("{c:?}"), "4660");
    }

    #[test]
    fn an_error_is_kept_and_shown() {
        let data = [1u8, 2, 0x34];
        let mut r = ByteReader::new(&data);
        let l = u16_at(&mut r, &data);
        let e = l.get().unwrap_err();
        assert!(
            matches!(e.kind, DecodeErrorKind::UnexpectedEof { .. }),
            "{e}"
        );
        assert_eq!(l.get().unwrap_err(), e);
        assert!(format!("{l:?}").starts_with("<not readable:"));
    }

    #[test]
    fn a_value_by_hand_reads_nothing() {
        let mut l: Lazy<Vec<u8>> = Lazy::default();
        assert!(l.is_read());
        l.get_mut().unwrap().push(3);
        assert_eq!(l.into_inner().unwrap(), vec![3]);
        fn is_send_sync<X: Send + Sync>() {}
        is_send_sync::<Lazy<Vec<u8>>>();
    }
}
