//! The interpreter as a streaming reader ([`super::stream()`]): every value is handed to a
//! [`Sink`] as it is read,
//! and only what a later expression can reach is kept ([`super::keep`]), so memory follows
//! what the schema's expressions need, not the size of the file.
//!
//! The events come in reading order, which is the order `decode --schema` prints: for each
//! user type, [`Sink::open_struct`], then each `seq` field (with the positional instances
//! that an expression names, where the reader reads them) as a [`Label::Member`] key
//! followed by its value, then the positional instances no expression names, then
//! the params written in the schema and the value instances ([`Sink::value`], whole values
//! computed once the `seq` is read), then the caller's [`Sink::close_struct`]. A value is
//! [`Sink::leaf`] (a number, a string, bytes, an enum, null), a struct (`open_struct` …
//! `close_struct`) or a list ([`Sink::open_list`], each element as a [`Label::Element`] key
//! and its value, [`Sink::close_list`]).

use super::DynValue;
use statepack_runtime::io::DecodeError;
use std::io;

/// What the next value is: a member of the struct being read, or an element of the list
/// being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    /// A member, by name, and what kind of member it is.
    Member(&'static str, MemberKind),
    /// The element at this index of the open list.
    Element(usize),
}

/// The kinds of members of a user type, as [`super::DynStruct::members`] orders them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberKind {
    /// A `seq` field or a positional instance, read from the bytes.
    Field,
    /// A param written in the schema (an input of the type, not read).
    Param,
    /// A value instance, computed from the other members.
    Instance,
}

/// What a streaming read does with an instance (positional or value) that fails: an
/// instance is read or computed when something asks for it, and the output listing it asks
/// for every one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InstanceErrors {
    /// As the generated type's dynamic view and [`super::decode`]: a value instance that
    /// cannot be computed is null; a positional instance that cannot be read fails the read
    /// when an expression names it, else it is null (its events held back, as with
    /// [`InstanceErrors::Show`]).
    #[default]
    AsGenerated,
    /// Each instance that fails is handed to the sink as its error ([`Sink::error`], after
    /// its key, in place of its value; it is null in the tree kept) and the read goes on, as
    /// Kaitai Struct's tools show a failing instance. A positional instance is read once,
    /// its events held back until it has read whole, so that nothing of a value that then
    /// fails is handed over.
    Show,
    /// The first instance that fails, positional or value, fails the read.
    Strict,
}

/// Where the values of a streaming read go ([`super::stream()`]). Every method may fail with the
/// output's error, which ends the read ([`StreamError::Output`]).
pub trait Sink {
    /// What the read does with an instance that fails (by default
    /// [`InstanceErrors::AsGenerated`]).
    fn instance_errors(&self) -> InstanceErrors {
        InstanceErrors::AsGenerated
    }
    /// The error of an instance that failed, in place of its value (after its key; only
    /// with [`InstanceErrors::Show`]): the message names the path inside the instance and
    /// the byte offset where reading stopped, or the expression that could not be computed.
    fn error(&mut self, message: &str) -> io::Result<()> {
        let _ = message;
        Ok(())
    }
    /// The next value's label.
    fn key(&mut self, label: Label) -> io::Result<()>;
    /// A user type starts: its members follow.
    fn open_struct(&mut self, type_name: &'static str) -> io::Result<()>;
    /// The user type opened last ends. `span`: the bytes the value was read from (for a
    /// member, the member's bytes: a sized type's padding included, a processed type's
    /// stored bytes in the enclosing stream); `None` for the root.
    fn close_struct(&mut self, span: Option<(u64, u64)>) -> io::Result<()>;
    /// A list starts: its elements follow, each after a [`Label::Element`] key.
    fn open_list(&mut self) -> io::Result<()>;
    /// The list opened last ends: the bytes it was read from and its number of elements.
    fn close_list(&mut self, span: (u64, u64), count: usize) -> io::Result<()>;
    /// A value read from the bytes that is neither a user type nor a list: where it was read
    /// (`None` for a field whose `if` was false), and its exact bits when it starts or ends
    /// inside a byte (see [`super::BitSpan`]).
    fn leaf(
        &mut self,
        v: &DynValue,
        span: Option<(u64, u64)>,
        bits: Option<(u64, u64)>,
    ) -> io::Result<()>;
    /// A whole value not read from the bytes at this place: a param or a value instance
    /// (which may be a user type or a list, shown as a tree).
    fn value(&mut self, v: &DynValue) -> io::Result<()>;
}

/// A [`Sink`] that takes every value and keeps none: a streaming read that only checks the
/// input, in the memory the schema's expressions keep (what `decode --schema` runs before
/// it prints anything, so nothing is printed for a file it refuses), handling failing
/// instances as its [`InstanceErrors`] say (the setting of the printing pass that follows).
#[derive(Debug, Clone, Copy, Default)]
pub struct Check(pub InstanceErrors);

/// A [`Check`] that reads as [`super::decode`] does ([`InstanceErrors::AsGenerated`], the
/// default): `Discard::default()`.
pub type Discard = Check;

impl Sink for Check {
    fn instance_errors(&self) -> InstanceErrors {
        self.0
    }
    fn key(&mut self, _: Label) -> io::Result<()> {
        Ok(())
    }
    fn open_struct(&mut self, _: &'static str) -> io::Result<()> {
        Ok(())
    }
    fn close_struct(&mut self, _: Option<(u64, u64)>) -> io::Result<()> {
        Ok(())
    }
    fn open_list(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn close_list(&mut self, _: (u64, u64), _: usize) -> io::Result<()> {
        Ok(())
    }
    fn leaf(
        &mut self,
        _: &DynValue,
        _: Option<(u64, u64)>,
        _: Option<(u64, u64)>,
    ) -> io::Result<()> {
        Ok(())
    }
    fn value(&mut self, _: &DynValue) -> io::Result<()> {
        Ok(())
    }
}

/// One event of a [`Sink`], kept: the events of a positional instance being read, held
/// until the instance has read whole (then handed on in order) or has failed (then dropped,
/// and the instance's error handed on instead), so that an instance is read once.
#[derive(Debug, Clone)]
pub(crate) enum Event {
    Key(Label),
    Open(&'static str),
    Close(Option<(u64, u64)>),
    OpenList,
    CloseList((u64, u64), usize),
    Leaf(DynValue, Option<(u64, u64)>, Option<(u64, u64)>),
    Value(DynValue),
    Error(String),
}

impl Event {
    /// Hands this event to `sink`.
    pub(crate) fn replay(self, sink: &mut dyn Sink) -> io::Result<()> {
        match self {
            Event::Key(l) => sink.key(l),
            Event::Open(t) => sink.open_struct(t),
            Event::Close(s) => sink.close_struct(s),
            Event::OpenList => sink.open_list(),
            Event::CloseList(s, n) => sink.close_list(s, n),
            Event::Leaf(v, s, b) => sink.leaf(&v, s, b),
            Event::Value(v) => sink.value(&v),
            Event::Error(m) => sink.error(&m),
        }
    }
}

/// A [`Sink`] that keeps every event it is given (see [`Event`]).
pub(crate) struct Recorder<'a>(pub &'a mut Vec<Event>);

impl Sink for Recorder<'_> {
    fn error(&mut self, message: &str) -> io::Result<()> {
        self.0.push(Event::Error(message.to_owned()));
        Ok(())
    }
    fn key(&mut self, label: Label) -> io::Result<()> {
        self.0.push(Event::Key(label));
        Ok(())
    }
    fn open_struct(&mut self, t: &'static str) -> io::Result<()> {
        self.0.push(Event::Open(t));
        Ok(())
    }
    fn close_struct(&mut self, span: Option<(u64, u64)>) -> io::Result<()> {
        self.0.push(Event::Close(span));
        Ok(())
    }
    fn open_list(&mut self) -> io::Result<()> {
        self.0.push(Event::OpenList);
        Ok(())
    }
    fn close_list(&mut self, span: (u64, u64), count: usize) -> io::Result<()> {
        self.0.push(Event::CloseList(span, count));
        Ok(())
    }
    fn leaf(
        &mut self,
        v: &DynValue,
        span: Option<(u64, u64)>,
        bits: Option<(u64, u64)>,
    ) -> io::Result<()> {
        self.0.push(Event::Leaf(v.clone(), span, bits));
        Ok(())
    }
    fn value(&mut self, v: &DynValue) -> io::Result<()> {
        self.0.push(Event::Value(v.clone()));
        Ok(())
    }
}

/// Why a streaming read stopped.
#[derive(Debug)]
pub enum StreamError {
    /// The bytes do not read with the schema: the error [`super::decode`] gives.
    Decode(DecodeError),
    /// The sink failed.
    Output(io::Error),
}

impl std::fmt::Display for StreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StreamError::Decode(e) => write!(f, "{e}"),
            StreamError::Output(e) => write!(f, "cannot write the output: {e}"),
        }
    }
}

impl std::error::Error for StreamError {}

#[cfg(test)]
mod tests {
    use super::{Label, MemberKind, Sink};
    use crate::interp::{decode, stream, DynValue};
    use std::io;

    /// Every event as a line of text.
    #[derive(Default)]
    struct Log(Vec<String>);

    impl Sink for Log {
        fn key(&mut self, label: Label) -> io::Result<()> {
            self.0.push(match label {
                Label::Member(n, MemberKind::Field) => format!("{n}:"),
                Label::Member(n, MemberKind::Param) => format!("param {n}:"),
                Label::Member(n, MemberKind::Instance) => format!("instance {n}:"),
                Label::Element(i) => format!("[{i}]"),
            });
            Ok(())
        }
        fn open_struct(&mut self, t: &'static str) -> io::Result<()> {
            self.0.push(format!("{{{t}"));
            Ok(())
        }
        fn close_struct(&mut self, span: Option<(u64, u64)>) -> io::Result<()> {
            self.0.push(format!("}}{span:?}"));
            Ok(())
        }
        fn open_list(&mut self) -> io::Result<()> {
            self.0.push("[".into());
            Ok(())
        }
        fn close_list(&mut self, span: (u64, u64), count: usize) -> io::Result<()> {
            self.0.push(format!("]{span:?} {count}"));
            Ok(())
        }
        fn leaf(
            &mut self,
            v: &DynValue,
            span: Option<(u64, u64)>,
            bits: Option<(u64, u64)>,
        ) -> io::Result<()> {
            self.0.push(format!("{v} {span:?} {bits:?}"));
            Ok(())
        }
        fn value(&mut self, v: &DynValue) -> io::Result<()> {
            self.0.push(format!("= {v}"));
            Ok(())
        }
    }

    const KSY: &str = "meta:\n  id: demo\n  endian: le\nseq:\n  - id: n\n    type: u1\n  - id: sizes\n    type: u1\n    repeat: expr\n    repeat-expr: n\n  - id: blobs\n    size: sizes[_index]\n    repeat: expr\n    repeat-expr: n\n  - id: flags\n    type: flag\n    repeat: eos\ntypes:\n  flag:\n    seq:\n      - id: on\n        type: b1\n      - id: rest\n        type: b7\ninstances:\n  total:\n    value: n * 2\n";

    /// The events come in reading order with their spans; the list an expression indexes
    /// (`sizes`) and the count are kept, the lists nothing reads again are handed over and
    /// dropped; the values are the ones `decode` reads.
    #[test]
    fn values_are_handed_over_in_reading_order_and_only_what_is_read_again_is_kept() {
        let schema = crate::load_checked(KSY, "demo.ksy", std::path::Path::new("demo.ksy"), &[])
            .expect("schema");
        let bytes = [2u8, 1, 2, 0xaa, 0xbb, 0xcc, 0x80, 0x01];
        let mut log = Log::default();
        let root = stream(&schema, &bytes, &mut log).expect("reads");
        let want = [
            "{demo",
            "n:",
            "2 Some((0, 1)) None",
            "sizes:",
            "[",
            "[0]",
            "1 Some((1, 2)) None",
            "[1]",
            "2 Some((2, 3)) None",
            "](1, 3) 2",
            "blobs:",
            "[",
            "[0]",
            "[0xaa] Some((3, 4)) None",
            "[1]",
            "[0xbb, 0xcc] Some((4, 6)) None",
            "](3, 6) 2",
            "flags:",
            "[",
            "[0]",
            "{flag",
            "on:",
            "true Some((6, 7)) Some((48, 49))",
            "rest:",
            // A bit field that starts inside a byte already counted as read has an empty
            // byte span (as in `decode`'s tree); its bits say where it lies.
            "0 Some((7, 7)) Some((49, 56))",
            "}Some((6, 7))",
            "[1]",
            "{flag",
            "on:",
            "false Some((7, 8)) Some((56, 57))",
            "rest:",
            "1 Some((8, 8)) Some((57, 64))",
            "}Some((7, 8))",
            "](6, 8) 2",
        ];
        let got: Vec<&str> = log.0.iter().map(String::as_str).collect();
        assert_eq!(&got[..want.len()], want, "{got:#?}");
        assert_eq!(got[want.len()..], ["instance total:", "= 4", "}None"]);
        let kept: Vec<&str> = root.members.iter().map(|(k, _)| *k).collect();
        assert_eq!(kept, ["n", "sizes", "total"]);
        assert_eq!(root.read_extent(), 8);
        let whole = decode(&schema, &bytes).expect("decode");
        assert_eq!(root.get("sizes"), whole.get("sizes"));
    }

    /// A file that does not read gives `decode`'s error; a failing sink ends the read with
    /// its own error.
    #[test]
    fn errors_are_decodes_and_the_sinks() {
        let schema = crate::load_checked(KSY, "demo.ksy", std::path::Path::new("demo.ksy"), &[])
            .expect("schema");
        let cut = [2u8, 1, 2, 0xaa];
        let want = decode(&schema, &cut).expect_err("cut").to_string();
        match stream(&schema, &cut, &mut Log::default()) {
            Err(super::StreamError::Decode(e)) => assert_eq!(e.to_string(), want),
            other => panic!("{other:?}"),
        }
        struct Full;
        impl Sink for Full {
            fn key(&mut self, _: Label) -> io::Result<()> {
                Err(io::Error::other("disk full"))
            }
            fn open_struct(&mut self, _: &'static str) -> io::Result<()> {
                Ok(())
            }
            fn close_struct(&mut self, _: Option<(u64, u64)>) -> io::Result<()> {
                Ok(())
            }
            fn open_list(&mut self) -> io::Result<()> {
                Ok(())
            }
            fn close_list(&mut self, _: (u64, u64), _: usize) -> io::Result<()> {
                Ok(())
            }
            fn leaf(
                &mut self,
                _: &DynValue,
                _: Option<(u64, u64)>,
                _: Option<(u64, u64)>,
            ) -> io::Result<()> {
                Ok(())
            }
            fn value(&mut self, _: &DynValue) -> io::Result<()> {
                Ok(())
            }
        }
        match stream(&schema, &[2, 1, 2, 0xaa, 0xbb, 0xcc], &mut Full) {
            Err(super::StreamError::Output(e)) => assert_eq!(e.to_string(), "disk full"),
            other => panic!("{other:?}"),
        }
    }
}
