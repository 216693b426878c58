//! Data that steers the generated reader: counts, offsets, depths and sizes taken from the
//! input (`tests/run/adversarial.ksy`). Each case ends in a decode error that names the field
//! and the byte offset — never a panic, a hang, or an allocation the input cannot justify —
//! and a well-formed input round-trips byte for byte. The fuzz target `kaitai_lang` checks
//! the same properties on generated inputs.

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/adversarial.rs"]
mod adversarial;

use adversarial::Adversarial;

/// A well-formed file without its node chain: no empties, `node_ofs` 0xffff (no chain), a
/// tree of three leaves, a zlib body and the list `7, 0`.
fn good() -> Vec<u8> {
    let body = statepack_runtime::cbtk_columns::deflate(b"steer", 6);
    let mut v = Vec::new();
    v.extend_from_slice(&0u32.to_le_bytes()); // count
    v.extend_from_slice(&0xffffu16.to_le_bytes()); // node_ofs
    v.extend_from_slice(&[3, 0, 0, 0]); // tree: 3 kids, each a leaf
    v.push(body.len() as u8);
    v.extend_from_slice(&body);
    v.extend_from_slice(&[7, 0]); // until_zero
    v
}

#[test]
fn a_good_file_reads_and_round_trips() {
    // The chain sits after the seq: a node at `end` that points at `end + 3`, which ends it.
    let mut bytes = good();
    let end = bytes.len() as u16;
    bytes[4..6].copy_from_slice(&end.to_le_bytes());
    bytes.extend_from_slice(&(end + 3).to_le_bytes());
    bytes.push(0xAA);
    bytes.extend_from_slice(&0u16.to_le_bytes());
    bytes.push(0xBB);
    let v = Adversarial::decode(&bytes).unwrap();
    assert!(v.empties.is_empty());
    assert_eq!(v.tree.children.len(), 3);
    assert_eq!(v.body, b"steer");
    assert_eq!(v.until_zero, vec![7, 0]);
    // The chain is read when asked for, and the writer reads what it has not yet.
    assert_eq!(v.clone().encode().unwrap(), bytes);
    let node = v
        .node
        .get()
        .unwrap()
        .as_ref()
        .expect("node_ofs is not 0xffff");
    assert_eq!(node.value, 0xAA);
    let next = node.next.get().unwrap();
    assert_eq!(next.as_ref().expect("next_ofs is not 0").value, 0xBB);
    assert_eq!(v.encode().unwrap(), bytes);
}

#[test]
fn a_count_of_zero_size_elements_is_bounded_by_the_input() {
    let mut bytes = good();
    bytes[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = Adversarial::decode(&bytes).unwrap_err().to_string();
    assert!(
        e.starts_with("empties (byte offset 4)") && e.contains("only 22 left"),
        "{e}"
    );
}

#[test]
fn a_node_that_points_at_itself_is_an_error_when_followed() {
    let mut bytes = good();
    let end = bytes.len() as u16;
    bytes[4..6].copy_from_slice(&end.to_le_bytes());
    bytes.extend_from_slice(&end.to_le_bytes()); // next_ofs: itself
    bytes.push(1);
    // Nothing reads the chain while decoding.
    let v = Adversarial::decode(&bytes).unwrap();
    // Following it, one access at a time, ends at the nesting bound: never a hang.
    let mut node = v.node.get().unwrap().as_ref().unwrap().as_ref();
    let mut steps = 1;
    let e = loop {
        match node.next.get() {
            Ok(Some(n)) => node = n,
            Ok(None) => panic!("the chain points back at itself"),
            Err(e) => break e.to_string(),
        }
        steps += 1;
        assert!(steps <= 64, "more than 64 nodes read");
    };
    // The node points at itself: the fourth read in a row at one offset is refused.
    assert_eq!(steps, 3);
    assert!(
        e.starts_with("next") && e.contains("offset 26") && e.contains("3 deep at byte offset 26"),
        "{e}"
    );
    // The writer writes the nodes it can read; the one past the bound is left out, and
    // its bytes are those the root kept: byte-identical.
    assert_eq!(v.encode().unwrap(), bytes);
}

#[test]
fn a_node_past_the_end_is_an_error() {
    let mut bytes = good();
    bytes[4..6].copy_from_slice(&0xfff0u16.to_le_bytes());
    // Read when asked for: the error is at the end of the input, and names the position
    // wanted.
    let v = Adversarial::decode(&bytes).unwrap();
    let e = v.node.get().unwrap_err().to_string();
    assert!(
        e.starts_with("node (byte offset 26)") && e.contains("65520"),
        "{e}"
    );
}

#[test]
fn a_tree_deeper_than_the_recursion_limit_is_an_error() {
    let levels = usize::from(statepack_runtime::io::MAX_RECURSION) + 10;
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&0u32.to_le_bytes());
    bytes.extend_from_slice(&0xffffu16.to_le_bytes());
    bytes.extend(std::iter::repeat_n(1u8, levels));
    bytes.push(0);
    bytes.extend_from_slice(&[0, 0]);
    let e = Adversarial::decode(&bytes).unwrap_err().to_string();
    // The 257th level starts after the 4 + 2 header bytes and 256 kid counts.
    assert!(
        e.starts_with("tree.children[0]")
            && e.contains("offset 263")
            && e.contains("deeper than 256"),
        "{e}"
    );
}

#[test]
fn a_cut_zlib_stream_is_an_error() {
    // The first 255 bytes of a stream of 4 MiB of zeros: the inflater stops at the end of
    // the stored bytes (at most 1032 output bytes per stored byte, deflate's own ratio)
    // and reports the stream as unfinished.
    let zeros = vec![0u8; 4 << 20];
    let z = statepack_runtime::cbtk_columns::deflate(&zeros, 9);
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&0u32.to_le_bytes());
    bytes.extend_from_slice(&0xffffu16.to_le_bytes());
    bytes.push(0);
    bytes.push(255);
    bytes.extend_from_slice(&z[..255]);
    bytes.push(0);
    let e = Adversarial::decode(&bytes).unwrap_err().to_string();
    assert!(
        e.contains("body") && e.contains("zlib") && e.contains("offset 8"),
        "{e}"
    );
}

#[test]
fn a_list_read_until_a_sentinel_stops_at_the_end_of_the_input() {
    let mut bytes = good();
    bytes.pop(); // drop the 0 that ends until_zero
    bytes[4..6].copy_from_slice(&0xffffu16.to_le_bytes());
    let e = Adversarial::decode(&bytes).unwrap_err().to_string();
    assert!(e.starts_with("until_zero[1] (byte offset 25)"), "{e}");
}
