//! Decoding as a stream of events: a [`Tracer`] that hands each field's start and end to a
//! callback instead of building a tree, so a tool can print or count a file's structure in
//! memory that does not grow with the number of fields (the CLI's `inspect`).

use statepack_runtime::io::{PathSeg, TraceValue, Tracer};

/// One event of a decode, in reading order. Offsets are absolute from the start of the input.
#[derive(Debug, Clone, PartialEq)]
pub enum TraceEvent {
    /// A field or list element starts at byte `offset` (bit `bit`: `offset × 8` unless the
    /// field starts inside a byte of a bit-field run).
    Enter {
        /// The field's name, or its index in a list.
        seg: PathSeg,
        /// Byte offset where it starts.
        offset: u64,
        /// Bit offset where it starts.
        bit: u64,
    },
    /// The innermost open field ends at byte `offset` (bit `bit`); `value` is its value for
    /// leaves, when the sink asked for values.
    Leave {
        /// Byte offset just past the field.
        offset: u64,
        /// Bit offset just past the field.
        bit: u64,
        /// The value of a leaf (number, string, enum, bytes), else `None`.
        value: Option<TraceValue>,
    },
}

/// A [`Tracer`] that passes every event to a callback.
pub struct SinkTracer<'s> {
    sink: &'s mut dyn FnMut(TraceEvent),
    values: bool,
}

impl<'s> SinkTracer<'s> {
    /// A tracer calling `sink` for each event; with `values` false, leaves carry no value
    /// (readers then skip building them).
    pub fn new(sink: &'s mut dyn FnMut(TraceEvent), values: bool) -> Self {
        Self { sink, values }
    }
}

impl Tracer for SinkTracer<'_> {
    fn enter(&mut self, seg: PathSeg, offset: u64) {
        self.enter_at(seg, offset, offset * 8);
    }

    fn leave(&mut self, offset: u64, value: Option<TraceValue>) {
        self.leave_at(offset, offset * 8, value);
    }

    fn enter_at(&mut self, seg: PathSeg, offset: u64, bit: u64) {
        (self.sink)(TraceEvent::Enter { seg, offset, bit });
    }

    fn leave_at(&mut self, offset: u64, bit: u64, value: Option<TraceValue>) {
        (self.sink)(TraceEvent::Leave { offset, bit, value });
    }

    fn wants_values(&self) -> bool {
        self.values
    }
}
