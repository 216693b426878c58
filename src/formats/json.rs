//! The JSON layout `statepack decode` prints: written straight to the output as the value is
//! serialized (no `serde_json::Value` tree, no whole-document string), so printing a decoded
//! file needs no memory beyond the decoded value itself.
//!
//! The layout is serde_json's pretty form (two spaces per level, one member per line) with
//! one change: an array whose elements are numbers prints them on one line, 16 to a line
//! (`"despawns": [3, 17, 4096]`), instead of one line per number. Any other array (of
//! strings, objects, arrays) has one element per line. The text is ordinary JSON; any JSON
//! reader reads it back.

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter};
use std::io::{self, Write};

/// Numbers per line in an array of numbers.
pub const NUMBERS_PER_LINE: usize = 16;

/// Writes `value` to `out` in the layout of the [module docs](self), followed by a newline.
///
/// Errors: the writer's errors, and serialization errors of `value` (a map with non-string
/// keys), as `io::Error`.
pub fn write_pretty<T: Serialize + ?Sized>(out: &mut dyn Write, value: &T) -> io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(&mut *out, Layout::default());
    value.serialize(&mut ser).map_err(io::Error::other)?;
    out.write_all(b"\n")
}

/// An open array.
#[derive(Debug, Clone, Copy)]
struct Open {
    /// Every element so far was a number: they share lines.
    numbers: bool,
    /// Elements on the current line (numbers only).
    on_line: usize,
    /// At least one element was written.
    any: bool,
}

/// The serde_json formatter behind [`write_pretty`].
#[derive(Debug, Default)]
pub struct Layout {
    indent: usize,
    arrays: Vec<Open>,
    /// An array element is about to start (`Some(first)`), not yet placed.
    pending: Option<bool>,
    /// The innermost open object has a member.
    members: Vec<bool>,
}

impl Layout {
    fn newline<W: ?Sized + Write>(&self, w: &mut W) -> io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..self.indent {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    /// Places the element about to be written: after the previous number on the same line
    /// (`number`), or on a line of its own.
    fn place<W: ?Sized + Write>(&mut self, w: &mut W, number: bool) -> io::Result<()> {
        let Some(first) = self.pending.take() else {
            return Ok(());
        };
        let Some(mut a) = self.arrays.pop() else {
            return Ok(());
        };
        if number && a.numbers {
            if !first {
                w.write_all(b",")?;
                if a.on_line >= NUMBERS_PER_LINE {
                    self.newline(w)?;
                    a.on_line = 0;
                } else {
                    w.write_all(b" ")?;
                }
            }
            a.on_line += 1;
        } else {
            if !first {
                w.write_all(b",")?;
            }
            a.numbers = false;
            self.newline(w)?;
        }
        a.any = true;
        self.arrays.push(a);
        Ok(())
    }
}

macro_rules! numbers {
    ($($f:ident: $t:ty),*) => {$(
        fn $f<W: ?Sized + Write>(&mut self, w: &mut W, v: $t) -> io::Result<()> {
            self.place(w, true)?;
            CompactFormatter.$f(w, v)
        }
    )*};
}

impl Formatter for Layout {
    numbers!(write_i8: i8, write_i16: i16, write_i32: i32, write_i64: i64, write_i128: i128,
        write_u8: u8, write_u16: u16, write_u32: u32, write_u64: u64, write_u128: u128,
        write_f32: f32, write_f64: f64);

    fn write_number_str<W: ?Sized + Write>(&mut self, w: &mut W, v: &str) -> io::Result<()> {
        self.place(w, true)?;
        w.write_all(v.as_bytes())
    }

    fn write_null<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.place(w, false)?;
        w.write_all(b"null")
    }

    fn write_bool<W: ?Sized + Write>(&mut self, w: &mut W, v: bool) -> io::Result<()> {
        self.place(w, false)?;
        w.write_all(if v { b"true" } else { b"false" })
    }

    fn begin_string<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.place(w, false)?;
        w.write_all(b"\"")
    }

    fn write_byte_array<W: ?Sized + Write>(&mut self, w: &mut W, v: &[u8]) -> io::Result<()> {
        self.begin_array(w)?;
        for (i, b) in v.iter().enumerate() {
            self.begin_array_value(w, i == 0)?;
            self.write_u8(w, *b)?;
            self.end_array_value(w)?;
        }
        self.end_array(w)
    }

    fn write_raw_fragment<W: ?Sized + Write>(&mut self, w: &mut W, v: &str) -> io::Result<()> {
        self.place(w, false)?;
        w.write_all(v.as_bytes())
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.place(w, false)?;
        self.arrays.push(Open {
            numbers: true,
            on_line: 0,
            any: false,
        });
        self.indent += 1;
        w.write_all(b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.indent -= 1;
        let a = self.arrays.pop().unwrap_or(Open {
            numbers: true,
            on_line: 0,
            any: false,
        });
        if a.any && !a.numbers {
            self.newline(w)?;
        }
        w.write_all(b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, _: &mut W, first: bool) -> io::Result<()> {
        self.pending = Some(first);
        Ok(())
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.place(w, false)?;
        self.indent += 1;
        self.members.push(false);
        w.write_all(b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.indent -= 1;
        if self.members.pop().unwrap_or(false) {
            self.newline(w)?;
        }
        w.write_all(b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if let Some(m) = self.members.last_mut() {
            *m = true;
        }
        if !first {
            w.write_all(b",")?;
        }
        self.newline(w)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: &serde_json::Value) -> String {
        let mut out = Vec::new();
        write_pretty(&mut out, v).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn numbers_share_lines_other_arrays_do_not() {
        let v = serde_json::json!({
            "a": [1, 2, 3],
            "b": [],
            "c": ["x", "y"],
            "d": [[1, 2], [3]],
            "e": {},
            "f": [{"g": 1.5}],
            "h": null,
        });
        assert_eq!(
            text(&v),
            "{\n  \"a\": [1, 2, 3],\n  \"b\": [],\n  \"c\": [\n    \"x\",\n    \"y\"\n  ],\n  \"d\": [\n    [1, 2],\n    [3]\n  ],\n  \"e\": {},\n  \"f\": [\n    {\n      \"g\": 1.5\n    }\n  ],\n  \"h\": null\n}\n"
        );
    }

    #[test]
    fn long_number_arrays_wrap_and_read_back() {
        let v = serde_json::json!({ "n": (0..40).collect::<Vec<u32>>() });
        let t = text(&v);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 5, "{t}");
        assert_eq!(lines[1].matches(',').count(), NUMBERS_PER_LINE);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&t).unwrap(), v);
    }

    #[test]
    fn mixed_arrays_stay_valid() {
        let v = serde_json::json!([1, "two", 3, [4]]);
        let t = text(&v);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&t).unwrap(), v);
    }
}
