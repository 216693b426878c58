//! Divisors and shift amounts taken from the data (`tests/run/data_operands.ksy`): Kaitai
//! Struct's rounding, and a zero divisor or an out-of-range shift as an error at the place
//! the expression is evaluated (the reader's offset and field, the writer's field, or the
//! value instance's `Result`), never a wrong value or a panic.

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/data_operands.rs"]
mod data_operands;

use data_operands::DataOperands;

fn bytes(total: i32, parts: u8, shift: u8) -> Vec<u8> {
    let mut v = total.to_le_bytes().to_vec();
    v.extend_from_slice(&[parts, shift]);
    let piece = if parts == 0 {
        0
    } else {
        total.div_euclid(i32::from(parts)).max(0)
    };
    v.extend(std::iter::repeat_n(0xAB, piece as usize));
    v
}

#[test]
fn quotients_and_remainders_round_toward_negative_infinity() {
    let v = DataOperands::decode(&bytes(17, 5, 3)).unwrap();
    assert_eq!(v.piece.len(), 3);
    assert_eq!(v.quotient().unwrap(), 3);
    assert_eq!(v.remainder().unwrap(), 2);
    assert_eq!(v.shifted_left().unwrap(), 136);
    assert_eq!(v.shifted_right().unwrap(), 2);
    // Kaitai's rules on a negative dividend: -17 / 5 is -4, -17 % 5 is 3, -17 >> 3 is -3.
    let mut b = (-17i32).to_le_bytes().to_vec();
    b.extend_from_slice(&[5, 3]);
    let e = DataOperands::decode(&b).unwrap_err().to_string();
    assert!(e.contains("piece"), "a negative size is refused: {e}");
    let neg = DataOperands {
        total: -17,
        parts: 5,
        shift: 3,
        piece: Vec::new(),
    };
    assert_eq!(neg.quotient().unwrap(), -4);
    assert_eq!(neg.remainder().unwrap(), 3);
    assert_eq!(neg.shifted_right().unwrap(), -3);
    assert_eq!(neg.shifted_left().unwrap(), -136);
}

#[test]
fn a_zero_divisor_is_an_error_where_it_is_evaluated() {
    // In a seq field's size: a decode error naming the field and the offset.
    let e = DataOperands::decode(&bytes(17, 0, 3))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("piece (byte offset 6)") && e.contains("division by zero"),
        "{e}"
    );
    // In a value instance: its `Result`.
    let v = DataOperands {
        total: 17,
        parts: 0,
        shift: 3,
        piece: Vec::new(),
    };
    assert!(v.quotient().unwrap_err().0.contains("division by zero"));
    assert!(v.remainder().unwrap_err().0.contains("division by zero"));
    // On write: an encode error naming the field.
    let e = v.encode().unwrap_err().to_string();
    assert!(e.contains("piece") && e.contains("division by zero"), "{e}");
}

#[test]
fn a_shift_outside_0_to_63_is_an_error() {
    let v = DataOperands::decode(&bytes(17, 5, 64)).unwrap();
    assert!(v.shifted_left().unwrap_err().0.contains("outside 0..=63"));
    assert!(v.shifted_right().unwrap_err().0.contains("outside 0..=63"));
    let v = DataOperands::decode(&bytes(1, 1, 63)).unwrap();
    assert_eq!(v.shifted_left().unwrap(), 1i128 << 63);
}

#[test]
fn a_good_file_round_trips() {
    let b = bytes(17, 5, 3);
    assert_eq!(DataOperands::decode(&b).unwrap().encode().unwrap(), b);
}
