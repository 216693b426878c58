//! The Luau runtime module (`lua/luau/statepack.luau`) against the Rust runtime on the same
//! bytes: every fixed-width read at every offset of random buffers, writers byte for byte,
//! bit fields in both bit orders, LEB128, range refusals and errors with path and offset.

mod common;

use common::{report, Rng};
use mlua::{Buffer, Function, Table};
use statepack_luahost::LuauHost;
use statepack_runtime::io::{ByteReader, ByteWriter};

/// Every type the reader has, at every offset of 40 random 64-byte buffers.
#[test]
fn fixed_width_reads_match_rust() {
    let host = LuauHost::new().unwrap();
    let read_all: Function = host
        .eval(
            "read_all",
            r#"
            return function(buf, kind)
                local out = {}
                local n = buffer.len(buf)
                local widths = { u8 = 1, s8 = 1, u16le = 2, s16le = 2, u16be = 2, s16be = 2, u32le = 4,
                    s32le = 4, u32be = 4, s32be = 4, f32le = 4, f32be = 4, f64le = 8, f64be = 8 }
                for at = 0, n - widths[kind] do
                    local r = Statepack.reader(buf, at)
                    table.insert(out, Statepack[kind](r, "v"))
                end
                return out
            end
            "#,
        )
        .unwrap();
    let mut rng = Rng(0x5EED_0001);
    let mut count = 0;
    type Expect = fn(&[u8]) -> f64;
    let kinds: [(&str, usize, Expect); 14] = [
        ("u8", 1, |b| f64::from(b[0])),
        ("s8", 1, |b| f64::from(b[0] as i8)),
        ("u16le", 2, |b| f64::from(u16::from_le_bytes([b[0], b[1]]))),
        ("s16le", 2, |b| f64::from(i16::from_le_bytes([b[0], b[1]]))),
        ("u16be", 2, |b| f64::from(u16::from_be_bytes([b[0], b[1]]))),
        ("s16be", 2, |b| f64::from(i16::from_be_bytes([b[0], b[1]]))),
        ("u32le", 4, |b| {
            f64::from(u32::from_le_bytes(b[..4].try_into().unwrap()))
        }),
        ("s32le", 4, |b| {
            f64::from(i32::from_le_bytes(b[..4].try_into().unwrap()))
        }),
        ("u32be", 4, |b| {
            f64::from(u32::from_be_bytes(b[..4].try_into().unwrap()))
        }),
        ("s32be", 4, |b| {
            f64::from(i32::from_be_bytes(b[..4].try_into().unwrap()))
        }),
        ("f32le", 4, |b| {
            f64::from(f32::from_le_bytes(b[..4].try_into().unwrap()))
        }),
        ("f32be", 4, |b| {
            f64::from(f32::from_be_bytes(b[..4].try_into().unwrap()))
        }),
        ("f64le", 8, |b| {
            f64::from_le_bytes(b[..8].try_into().unwrap())
        }),
        ("f64be", 8, |b| {
            f64::from_be_bytes(b[..8].try_into().unwrap())
        }),
    ];
    for _ in 0..40 {
        let bytes = rng.bytes(64);
        let buf = host.lua.create_buffer(&bytes).unwrap();
        for (kind, w, expect) in kinds {
            let got: Vec<f64> = read_all.call((buf.clone(), kind)).unwrap();
            assert_eq!(got.len(), bytes.len() - w + 1, "{kind}");
            for (at, g) in got.iter().enumerate() {
                let want = expect(&bytes[at..]);
                assert!(
                    g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                    "{kind} at {at}: Luau {g} Rust {want}"
                );
                count += 1;
            }
        }
    }
    report("Luau fixed-width reads", count);
}

/// u64/s64: exact values come back as numbers; values a double cannot hold are refused with
/// kind "range", and `u64le_parts` reads them as two halves.
#[test]
fn wide_integers_are_exact_or_refused() {
    let host = LuauHost::new().unwrap();
    let f: Function = host
        .eval(
            "u64",
            r#"
            return function(buf, kind)
                local ok, v = pcall(Statepack[kind], Statepack.reader(buf), "v")
                if ok then return true, v end
                return false, v.kind, v.path, v.offset
            end
            "#,
        )
        .unwrap();
    let parts: Function = host
        .eval(
            "parts",
            "return function(buf) return Statepack.u64le_parts(Statepack.reader(buf), 'v') end",
        )
        .unwrap();
    let mut rng = Rng(0x5EED_0002);
    let mut count = 0;
    for i in 0..4000 {
        // Magnitudes spread over all bit lengths, both signs.
        let bitlen = (i % 64) as u32 + 1;
        let u = rng.next_u64() >> (64 - bitlen);
        for (kind, bytes, exact) in [
            ("u64le", u.to_le_bytes(), u < (1 << 53)),
            ("u64be", u.to_be_bytes(), u < (1 << 53)),
            (
                "s64le",
                u.to_le_bytes(),
                (u as i64).unsigned_abs() <= (1 << 53),
            ),
            (
                "s64be",
                u.to_be_bytes(),
                (u as i64).unsigned_abs() <= (1 << 53),
            ),
        ] {
            let buf = host.lua.create_buffer(bytes).unwrap();
            let (ok, v): (bool, mlua::Value) = f.call((buf, kind)).unwrap();
            assert_eq!(ok, exact, "{kind} {u:#x}");
            if ok {
                let want = if kind.starts_with('u') {
                    u as f64
                } else {
                    (u as i64) as f64
                };
                let got = match v {
                    mlua::Value::Integer(i) => i as f64,
                    mlua::Value::Number(n) => n,
                    other => panic!("{other:?}"),
                };
                assert_eq!(got, want, "{kind} {u:#x}");
            }
            count += 1;
        }
        let (hi, lo): (f64, f64) = parts
            .call(host.lua.create_buffer(u.to_le_bytes()).unwrap())
            .unwrap();
        assert_eq!((hi as u64) << 32 | lo as u64, u);
        count += 1;
    }
    report("Luau u64/s64 reads", count);
}

/// Writers give Rust's bytes for random in-range values and refuse out-of-range ones, naming
/// the field.
#[test]
fn writers_match_rust_bytes_and_refuse_out_of_range() {
    let host = LuauHost::new().unwrap();
    let write: Function = host
        .eval(
            "write",
            r#"
            return function(kind, values)
                local w = Statepack.writer(4)
                Statepack.enter(w, "list")
                for i, v in values do
                    Statepack.enter(w, i - 1)
                    Statepack[kind](w, v, "v")
                    Statepack.leave(w)
                end
                return Statepack.finish(w)
            end
            "#,
        )
        .unwrap();
    let refuse: Function = host
        .eval(
            "refuse",
            r#"
            return function(kind, v)
                local w = Statepack.writer()
                Statepack.enter(w, "rec")
                local ok, e = pcall(Statepack[kind], w, v, "field")
                if ok then return "accepted" end
                return tostring(e)
            end
            "#,
        )
        .unwrap();
    let mut rng = Rng(0x5EED_0003);
    let mut count = 0;
    type Gen = fn(&mut Rng) -> (f64, Vec<u8>);
    let kinds: [(&str, Gen, f64, f64); 13] = [
        (
            "writeU8",
            |r| {
                let v = r.next_u64() as u8;
                (f64::from(v), vec![v])
            },
            -1.0,
            256.0,
        ),
        (
            "writeS8",
            |r| {
                let v = r.next_u64() as i8;
                (f64::from(v), v.to_le_bytes().to_vec())
            },
            -129.0,
            128.0,
        ),
        (
            "writeU16le",
            |r| {
                let v = r.next_u64() as u16;
                (f64::from(v), v.to_le_bytes().to_vec())
            },
            -1.0,
            65536.0,
        ),
        (
            "writeS16le",
            |r| {
                let v = r.next_u64() as i16;
                (f64::from(v), v.to_le_bytes().to_vec())
            },
            -32769.0,
            32768.0,
        ),
        (
            "writeU16be",
            |r| {
                let v = r.next_u64() as u16;
                (f64::from(v), v.to_be_bytes().to_vec())
            },
            -1.0,
            65536.0,
        ),
        (
            "writeS16be",
            |r| {
                let v = r.next_u64() as i16;
                (f64::from(v), v.to_be_bytes().to_vec())
            },
            -32769.0,
            32768.0,
        ),
        (
            "writeU32le",
            |r| {
                let v = r.next_u64() as u32;
                (f64::from(v), v.to_le_bytes().to_vec())
            },
            -1.0,
            4294967296.0,
        ),
        (
            "writeS32le",
            |r| {
                let v = r.next_u64() as i32;
                (f64::from(v), v.to_le_bytes().to_vec())
            },
            -2147483649.0,
            2147483648.0,
        ),
        (
            "writeU32be",
            |r| {
                let v = r.next_u64() as u32;
                (f64::from(v), v.to_be_bytes().to_vec())
            },
            -1.0,
            4294967296.0,
        ),
        (
            "writeS32be",
            |r| {
                let v = r.next_u64() as i32;
                (f64::from(v), v.to_be_bytes().to_vec())
            },
            -2147483649.0,
            2147483648.0,
        ),
        (
            "writeU64le",
            |r| {
                let v = r.next_u64() >> 11;
                (v as f64, v.to_le_bytes().to_vec())
            },
            -1.0,
            9007199254740992.0,
        ),
        (
            "writeS64le",
            |r| {
                let v = (r.next_u64() as i64) >> 11;
                (v as f64, v.to_le_bytes().to_vec())
            },
            -9007199254740992.0,
            9007199254740992.0,
        ),
        (
            "writeF64le",
            |r| {
                let v = f64::from_bits(r.next_u64());
                let v = if v.is_nan() { 0.5 } else { v };
                (v, v.to_le_bytes().to_vec())
            },
            f64::NAN,
            f64::NAN,
        ),
    ];
    for (kind, gen, below, above) in kinds {
        let mut values = Vec::new();
        let mut want = Vec::new();
        for _ in 0..500 {
            let (v, b) = gen(&mut rng);
            values.push(v);
            want.extend(b);
        }
        let got: Buffer = write.call((kind, values)).unwrap();
        assert_eq!(got.to_vec(), want, "{kind}");
        count += 500;
        if !below.is_nan() {
            for bad in [below, above, 0.5, f64::NAN] {
                let msg: String = refuse.call((kind, bad)).unwrap();
                assert!(
                    msg.starts_with("rec.field (byte offset 0): ") && msg.contains("does not fit"),
                    "{kind} {bad}: {msg}"
                );
                count += 1;
            }
        }
    }
    // f32: values round to the nearest f32 exactly as Rust's `as f32`; beyond f32::MAX refused.
    let mut values = Vec::new();
    let mut want = Vec::new();
    for _ in 0..2000 {
        let v = rng.unit() * 10f64.powi(rng.range(-40, 39) as i32);
        values.push(v);
        want.extend((v as f32).to_le_bytes());
    }
    let got: Buffer = write.call(("writeF32le", values.clone())).unwrap();
    assert_eq!(got.to_vec(), want);
    let got: Buffer = write.call(("writeF32be", values.clone())).unwrap();
    let want_be: Vec<u8> = values
        .iter()
        .flat_map(|v| (*v as f32).to_be_bytes())
        .collect();
    assert_eq!(got.to_vec(), want_be);
    count += 4000;
    let msg: String = refuse.call(("writeF32le", 1e39)).unwrap();
    assert!(msg.contains("does not fit in f32"), "{msg}");
    report("Luau writers", count);
}

/// Bit fields: random widths 1..=32 in both bit orders read as Rust's ByteReader reads them,
/// written as its ByteWriter writes them.
#[test]
fn bit_fields_match_rust() {
    let host = LuauHost::new().unwrap();
    let read: Function = host
        .eval(
            "bits",
            r#"
            return function(buf, widths, be)
                local r = Statepack.reader(buf)
                local out = {}
                for _, n in widths do
                    table.insert(out, if be then Statepack.bitsBe(r, n, "b") else Statepack.bitsLe(r, n, "b"))
                end
                return out
            end
            "#,
        )
        .unwrap();
    let write: Function = host
        .eval(
            "wbits",
            r#"
            return function(values, widths, be)
                local w = Statepack.writer(1)
                for i, n in widths do
                    if be then Statepack.writeBitsBe(w, values[i], n, "b") else Statepack.writeBitsLe(w, values[i], n, "b") end
                end
                return Statepack.finish(w)
            end
            "#,
        )
        .unwrap();
    let mut rng = Rng(0x5EED_0004);
    let mut count = 0;
    for round in 0..400 {
        let be = round % 2 == 0;
        let widths: Vec<u32> = (0..20).map(|_| rng.range(1, 33) as u32).collect();
        let total: u32 = widths.iter().sum();
        let bytes = rng.bytes(total.div_ceil(8) as usize);
        let mut r = ByteReader::new(&bytes);
        let want: Vec<f64> = widths
            .iter()
            .map(|&n| {
                if be {
                    r.read_bits_be(n).unwrap() as f64
                } else {
                    r.read_bits_le(n).unwrap() as f64
                }
            })
            .collect();
        let buf = host.lua.create_buffer(&bytes).unwrap();
        let got: Vec<f64> = read.call((buf, widths.clone(), be)).unwrap();
        assert_eq!(got, want, "round {round}");
        let mut w = ByteWriter::new();
        for (v, &n) in want.iter().zip(&widths) {
            if be {
                w.write_bits_be(*v as u64, n).unwrap();
            } else {
                w.write_bits_le(*v as u64, n).unwrap();
            }
        }
        let out: Buffer = write.call((want.clone(), widths.clone(), be)).unwrap();
        assert_eq!(out.to_vec(), w.into_bytes(), "round {round}");
        count += 2 * widths.len();
    }
    report("Luau bit fields", count);
}

/// LEB128: the Rust encoder's bytes read to the same value, and the Luau writer gives the
/// same bytes (shortest form); values a double cannot hold are refused.
#[test]
fn leb128_matches_rust() {
    let host = LuauHost::new().unwrap();
    let f: Function = host
        .eval(
            "leb",
            r#"
            return function(buf, v)
                local got = Statepack.uleb128(Statepack.reader(buf), "v")
                local w = Statepack.writer(1)
                Statepack.writeUleb128(w, v, "v")
                return got, Statepack.finish(w)
            end
            "#,
        )
        .unwrap();
    let s: Function = host
        .eval(
            "sleb",
            r#"
            return function(v)
                local w = Statepack.writer(1)
                Statepack.writeSleb128(w, v, "v")
                local b = Statepack.finish(w)
                return Statepack.sleb128(Statepack.reader(b), "v"), b
            end
            "#,
        )
        .unwrap();
    let mut rng = Rng(0x5EED_0005);
    let mut count = 0;
    for i in 0..5000 {
        let v = rng.next_u64() >> (11 + (i % 53));
        let mut bytes = Vec::new();
        statepack_runtime::bits::push_varint(&mut bytes, v);
        let buf = host.lua.create_buffer(&bytes).unwrap();
        let (got, out): (f64, Buffer) = f.call((buf, v as f64)).unwrap();
        assert_eq!(got, v as f64);
        assert_eq!(out.to_vec(), bytes);
        // signed: round trip and the two's-complement group rule
        let sv = if i % 2 == 0 { v as f64 } else { -(v as f64) };
        let (back, sb): (f64, Buffer) = s.call(sv).unwrap();
        assert_eq!(back, sv);
        let last = *sb.to_vec().last().unwrap();
        assert!(last < 0x80 && ((last & 0x40 != 0) == (sv < 0.0)));
        count += 3;
    }
    // 2^53 and more: refused with kind "range".
    let mut bytes = Vec::new();
    statepack_runtime::bits::push_varint(&mut bytes, 1 << 53);
    let refused: bool = host
        .eval::<Function>(
            "leb_big",
            "return function(b) local ok, e = pcall(Statepack.uleb128, Statepack.reader(b), 'v'); return not ok and e.kind == 'range' end",
        )
        .unwrap()
        .call(host.lua.create_buffer(&bytes).unwrap())
        .unwrap();
    assert!(refused);
    report("Luau LEB128", count + 1);
}

/// An error names the path and offset, as the Rust reader's errors do, and can be caught as
/// a table.
#[test]
fn errors_carry_path_and_offset() {
    let host = LuauHost::new().unwrap();
    let t: Table = host
        .eval(
            "err",
            r#"
            local r = Statepack.reader(buffer.fromstring("\1\2\3"))
            Statepack.enter(r, "frames")
            Statepack.enter(r, 2)
            Statepack.u8(r, "kind")
            local ok, e = pcall(Statepack.u32le, r, "x")
            return { ok = ok, text = tostring(e), path = e.path, offset = e.offset, kind = e.kind, isError = Statepack.isError(e) }
            "#,
        )
        .unwrap();
    assert!(!t.get::<bool>("ok").unwrap());
    assert!(t.get::<bool>("isError").unwrap());
    assert_eq!(t.get::<String>("path").unwrap(), "frames[2].x");
    assert_eq!(t.get::<u64>("offset").unwrap(), 1);
    assert_eq!(t.get::<String>("kind").unwrap(), "eof");
    assert_eq!(
        t.get::<String>("text").unwrap(),
        "frames[2].x (byte offset 1): input ends early: 4 byte(s) needed, 2 left"
    );
    // The Rust reader's message for the same read is the same text after the location.
    let mut r = ByteReader::new(&[1, 2, 3]);
    r.take_array::<1>().unwrap();
    let e = r.take_array::<4>().unwrap_err();
    assert_eq!(e.offset, 1);
    assert_eq!(
        e.kind.to_string(),
        "input ends early: 4 byte(s) needed, 2 left"
    );
}
