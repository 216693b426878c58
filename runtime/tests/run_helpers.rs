//! The helpers generated fixed runs call: `ByteReader::run` stays inside the readable
//! range (a sized field's end, a positional instance's stream) as the field-by-field reads
//! do, reads a run field by field from its table for a tracer or a failure (errors naming
//! the field and offset that field-by-field code names), `ByteReader::bit_run` likewise for
//! bit fields (and `bit_run_cursor`, whose cursor reads the fields one per step), and a bit run written through `ByteWriter::begin_bit_run` / `bit_run_put` /
//! `end_bit_run` gives the bytes of one `write_bits_be` per field.

use statepack_runtime::io::{ByteReader, ByteWriter, RunField, TraceValue, Tracer, TreeTracer};

/// A run of `N` single bytes, named `b`: its bytes, or `None` (and nothing consumed).
fn take<const N: usize, T: Tracer>(r: &mut ByteReader<'_, T>) -> Option<[u8; N]> {
    let m = r.mark();
    match r.run::<N>(&[RunField::int("b", 1, false, false).times(N)]) {
        Ok(b) => Some(*b),
        Err(_) => {
            r.reset_to(m);
            None
        }
    }
}

#[test]
fn a_run_stops_at_the_end_of_a_sized_field() {
    let data = [1u8, 2, 3, 4, 5, 6, 7, 8];
    let mut r = ByteReader::new(&data);
    assert_eq!(take::<2, _>(&mut r), Some([1, 2]));
    let outer = r.push_limit(3).unwrap();
    // Three bytes in the sized field: a run of four is refused.
    assert_eq!(take::<4, _>(&mut r), None);
    assert_eq!(r.offset(), 2);
    assert_eq!(take::<3, _>(&mut r), Some([3, 4, 5]));
    assert_eq!(take::<1, _>(&mut r), None);
    r.pop_limit(outer).unwrap();
    // Back in the whole input: the rest can be taken again, and no more.
    assert_eq!(take::<4, _>(&mut r), None);
    assert_eq!(take::<3, _>(&mut r), Some([6, 7, 8]));
    assert_eq!(take::<1, _>(&mut r), None);
    assert!(r.is_eof());
}

#[test]
fn a_run_in_a_positional_instance_uses_that_stream() {
    let data = [9u8, 8, 7, 6, 5, 4];
    let mut r = ByteReader::new(&data);
    let outer = r.push_limit(4).unwrap();
    assert_eq!(take::<1, _>(&mut r), Some([9]));
    // An instance of the whole input may read past the sized field's end ...
    let saved = r.enter_instance(3, true).unwrap();
    assert_eq!(take::<3, _>(&mut r), Some([6, 5, 4]));
    r.leave_instance(saved);
    // ... and afterwards the sized field's end holds again.
    assert_eq!(r.offset(), 1);
    assert_eq!(take::<4, _>(&mut r), None);
    assert_eq!(take::<3, _>(&mut r), Some([8, 7, 6]));
    r.pop_limit(outer).unwrap();
    assert_eq!(take::<2, _>(&mut r), Some([5, 4]));
}

/// The table of a run: a magic, a closed enum (1 = `one`, 2 = `two`), a big-endian `u2`
/// and three little-endian `s2`.
const RUN: &[RunField] = &[
    RunField::contents("magic", b"AB"),
    RunField::enumerated(
        "kind",
        (1, false, false),
        "kind_enum",
        |v| match v {
            1 => Some("one"),
            2 => Some("two"),
            _ => None,
        },
        false,
    ),
    RunField::int("len", 2, false, true),
    RunField::int("delta", 2, true, false).times(3),
];

#[test]
fn a_short_run_names_the_field_and_offset_it_ends_in() {
    let data = [b'A', b'B', 2, 0, 7, 0xff, 0xff, 3];
    let mut r = ByteReader::new(&data);
    let e = r.run::<11>(RUN).unwrap_err();
    // The second element of `delta` starts at byte 7, where one byte of its two is left.
    assert_eq!(e.path.to_string(), "delta[1]");
    assert_eq!(e.offset, 7);
    assert!(e.to_string().contains("2 byte(s) needed"), "{e}");
    let mut r = ByteReader::new(&data[..1]);
    let e = r.run::<11>(RUN).unwrap_err();
    assert_eq!((e.path.to_string(), e.offset), ("magic".to_owned(), 0));
}

#[test]
fn a_run_whose_check_fails_reports_the_field_that_fails() {
    let mut data = [b'A', b'B', 3, 0, 7, 1, 0, 2, 0, 3, 0];
    let mut r = ByteReader::new(&data);
    // All bytes are there: the run is taken; the reader's check of `kind` fails.
    let b = *r.run::<11>(RUN).unwrap();
    assert_eq!(b[2], 3);
    let e = r.run_fault(11, RUN);
    assert_eq!((e.path.to_string(), e.offset), ("kind".to_owned(), 2));
    assert!(e.to_string().contains("kind_enum"), "{e}");
    data[2] = 1;
    data[1] = b'X';
    let mut r = ByteReader::new(&data);
    r.run::<11>(RUN).unwrap();
    let e = r.run_fault(11, RUN);
    assert_eq!((e.path.to_string(), e.offset), ("magic".to_owned(), 0));
}

#[test]
fn a_traced_run_traces_every_field_with_its_value() {
    let data = [b'A', b'B', 2, 0, 7, 1, 0, 0xfe, 0xff, 3, 0];
    let mut r = ByteReader::with_tracer(&data, TreeTracer::new("test"));
    let b = *r.run::<11>(RUN).unwrap();
    assert_eq!(b, data);
    assert_eq!(r.offset(), 11);
    let tree = r.tracer.finish(11);
    let names: Vec<String> = tree.children.iter().map(|c| c.name.clone()).collect();
    assert_eq!(names, ["magic", "kind", "len", "delta"]);
    assert_eq!(
        tree.children[1].typed,
        Some(TraceValue::Enum {
            name: "two",
            value: 2
        })
    );
    assert_eq!(tree.children[2].typed, Some(TraceValue::Int(7)));
    let delta = &tree.children[3];
    assert_eq!(delta.children.len(), 3);
    assert_eq!(delta.children[1].typed, Some(TraceValue::Int(-2)));
    assert_eq!((delta.children[1].start, delta.children[1].end), (7, 9));
}

#[test]
fn a_bit_run_is_checked_field_by_field_when_short() {
    let bits: &[RunField] = &[
        RunField::bits("flag", 1, false),
        RunField::bits("code", 6, true),
        RunField::bits("wide", 12, false),
    ];
    let data = [0b1100_0001, 0xff];
    let mut r = ByteReader::new(&data);
    let e = r.bit_run(19, bits).unwrap_err();
    // `wide` starts at bit 7 (in byte 0): its 12 bits need 2 bytes more than are left.
    assert_eq!(e.path.to_string(), "wide");
    assert_eq!(e.offset, 1);
    let data = [0b1100_0001, 0xff, 0x80];
    let mut r = ByteReader::with_tracer(&data, TreeTracer::new("test"));
    r.bit_run(19, bits).unwrap();
    // Checked and traced, then back at the first bit for the reads in one step.
    assert_eq!(r.bit_offset(), 0);
    assert_eq!(r.take_run_bits_be(1), 1);
    assert_eq!(r.take_run_bits_be(6), 0b100000);
    let tree = r.tracer.finish(3);
    assert_eq!(tree.children[0].typed, Some(TraceValue::Bool(true)));
    assert!(matches!(
        tree.children[1].typed,
        Some(TraceValue::Coded { value: 0, .. })
    ));
}

#[test]
fn a_bit_run_read_through_its_cursor_reads_what_one_read_per_field_reads() {
    // The world snapshot record's widths (119 bits), after 0 to 7 bits already read.
    let widths = [1u32, 1, 1, 22, 2, 10, 10, 10, 18, 18, 18, 3, 5];
    let fields: Vec<RunField> = widths
        .iter()
        .map(|&w| RunField::bits("f", w as u8, false))
        .collect();
    let total: u64 = widths.iter().map(|&w| u64::from(w)).sum();
    let data: Vec<u8> = (0..40u32).map(|i| (i * 37 + 11) as u8).collect();
    for lead in 0..8u32 {
        let mut one = ByteReader::new(&data);
        let mut run = ByteReader::new(&data);
        if lead > 0 {
            one.read_bits_be(lead).unwrap();
            run.read_bits_be(lead).unwrap();
        }
        let mut c = run.bit_run_cursor(total, &fields).unwrap();
        for &w in &widths {
            let at = c.offset();
            assert_eq!(
                at,
                one.offset(),
                "offset before a {w}-bit field, lead {lead}"
            );
            assert_eq!(c.take(w), one.read_bits_be(w).unwrap(), "lead {lead}");
        }
        run.bit_run_done(c);
        assert_eq!(run.bit_offset(), one.bit_offset());
        // The reader goes on where the run ended.
        assert_eq!(run.read_bits_be(7).unwrap(), one.read_bits_be(7).unwrap());
    }
    // Too few bits: the error of the field-by-field reading, at the field that ends past
    // the input (the 3-bit field from bit 111 needs byte 14; the byte offset counts the
    // partly read byte 13 as read).
    let mut r = ByteReader::new(&data[..14]);
    let e = r.bit_run_cursor(total, &fields).unwrap_err();
    assert_eq!(e.path.to_string(), "f");
    assert_eq!(e.offset, 14);
}

#[test]
fn a_bit_run_writes_what_one_write_per_field_writes() {
    // Widths and phases as in the world snapshot's record: three flags, then fields
    // crossing byte boundaries, then a run that starts in the middle of a byte.
    let fields: [(u64, u32); 7] = [
        (1, 1),
        (0, 1),
        (1, 1),
        (0x2a_5a5a, 22),
        (0x3, 2),
        (0x3ff, 10),
        (0x1_2345, 18),
    ];
    for lead in 0..8u32 {
        let mut a = ByteWriter::new();
        let mut b = ByteWriter::new();
        if lead > 0 {
            a.write_bits_be(0x55 & ((1 << lead) - 1), lead).unwrap();
            b.write_bits_be(0x55 & ((1 << lead) - 1), lead).unwrap();
        }
        for (v, w) in fields {
            a.write_bits_be(v, w).unwrap();
        }
        let mut run = b.begin_bit_run();
        for (v, w) in fields {
            b.bit_run_put(&mut run, v, w);
        }
        b.end_bit_run(run);
        assert_eq!(a.bit_len(), b.bit_len(), "lead {lead}");
        // Pending bits are kept across the run's end: the next field continues the byte.
        a.write_bits_be(0b101, 3).unwrap();
        b.write_bits_be(0b101, 3).unwrap();
        a.align_to_byte();
        b.align_to_byte();
        assert_eq!(a.into_bytes(), b.into_bytes(), "lead {lead}");
    }
}
