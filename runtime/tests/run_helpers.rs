//! The helpers generated fixed runs call: `ByteReader::take_run` stays inside the readable
//! range (a sized field's end, a positional instance's stream) as the field-by-field reads
//! do, and a bit run written through `ByteWriter::begin_bit_run` / `bit_run_put` /
//! `end_bit_run` gives the bytes of one `write_bits_be` per field.

use statepack_runtime::io::{ByteReader, ByteWriter};

#[test]
fn take_run_stops_at_the_end_of_a_sized_field() {
    let data = [1u8, 2, 3, 4, 5, 6, 7, 8];
    let mut r = ByteReader::new(&data);
    assert_eq!(r.take_run::<2>(), Some(&[1, 2]));
    let outer = r.push_limit(3).unwrap();
    // Three bytes in the sized field: a run of four is refused and nothing is consumed.
    assert_eq!(r.take_run::<4>(), None);
    assert_eq!(r.offset(), 2);
    assert_eq!(r.take_run::<3>(), Some(&[3, 4, 5]));
    assert_eq!(r.take_run::<1>(), None);
    r.pop_limit(outer).unwrap();
    // Back in the whole input: the rest can be taken again, and no more.
    assert_eq!(r.take_run::<4>(), None);
    assert_eq!(r.take_run::<3>(), Some(&[6, 7, 8]));
    assert_eq!(r.take_run::<1>(), None);
    assert!(r.is_eof());
}

#[test]
fn take_run_in_a_positional_instance_uses_that_stream() {
    let data = [9u8, 8, 7, 6, 5, 4];
    let mut r = ByteReader::new(&data);
    let outer = r.push_limit(4).unwrap();
    assert_eq!(r.take_run::<1>(), Some(&[9]));
    // An instance of the whole input may read past the sized field's end ...
    let saved = r.enter_instance(3, true).unwrap();
    assert_eq!(r.take_run::<3>(), Some(&[6, 5, 4]));
    r.leave_instance(saved);
    // ... and afterwards the sized field's end holds again.
    assert_eq!(r.offset(), 1);
    assert_eq!(r.take_run::<4>(), None);
    assert_eq!(r.take_run::<3>(), Some(&[8, 7, 6]));
    r.pop_limit(outer).unwrap();
    assert_eq!(r.take_run::<2>(), Some(&[5, 4]));
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
