//! What the modular-bitfield view of a generated type costs or saves, next to the generated
//! reader and writer in the same run.
//!
//! Input: 4,096 DOS times (`tests/schemas/fat_dir_entry.ksy`, type `dos_time`: seconds / 2,
//! minutes and hours packed least significant bit first into a little-endian u16), every
//! one valid, in one 8,192-byte buffer. Groups (per time):
//!
//! - `dos_time_decode`: `generated` reads each time with the generated reader (one
//!   `ByteReader` over the whole buffer, the three fields and their `valid` rules);
//!   `modular_bitfield` takes each two bytes as a `bitfield::DosTime` and calls its three
//!   getters (no rule checked); `generated_then_view` is the generated reader followed by
//!   the `TryFrom` conversion into the view (what a user pays to get the view of a value).
//! - `dos_time_encode`: `generated` writes every time with the generated writer into one
//!   `ByteWriter`; `modular_bitfield` builds each with `new().with_*()` and appends its
//!   `into_bytes()`.
//!
//! Before timing, every path's values and bytes are compared, so a broken variant stops the
//! run. Figures: docs/performance.md, "modular-bitfield view".

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use statepack_runtime::io::{ByteReader, ByteWriter};

include!(concat!(env!("OUT_DIR"), "/test_schemas/mod.rs"));

use fat_dir_entry::{bitfield, DosTime};

const N: usize = 4096;

/// 4,096 valid times spread over the day, as stored.
fn words() -> Vec<u8> {
    let mut out = Vec::with_capacity(2 * N);
    for i in 0..N as u32 {
        let s = i * 7919 % 86_400;
        let word = (s / 3600) << 11 | (s / 60 % 60) << 5 | (s % 60) / 2;
        out.extend_from_slice(&(word as u16).to_le_bytes());
    }
    out
}

fn read_generated(bytes: &[u8]) -> Vec<DosTime> {
    let mut r = ByteReader::new(bytes);
    (0..N)
        .map(|_| DosTime::read_from(&mut r).expect("valid times"))
        .collect()
}

fn sum_generated(bytes: &[u8]) -> u32 {
    let mut r = ByteReader::new(bytes);
    let mut sum = 0u32;
    for _ in 0..N {
        let t = DosTime::read_from(&mut r).expect("valid times");
        sum += u32::from(t.hours) + u32::from(t.minutes) + u32::from(t.second_halves);
    }
    sum
}

fn sum_view(bytes: &[u8]) -> u32 {
    let mut sum = 0u32;
    for w in bytes.chunks_exact(2) {
        let t = bitfield::DosTime::from_bytes([w[0], w[1]]);
        sum += u32::from(t.hours()) + u32::from(t.minutes()) + u32::from(t.second_halves());
    }
    sum
}

fn sum_generated_then_view(bytes: &[u8]) -> u32 {
    let mut r = ByteReader::new(bytes);
    let mut sum = 0u32;
    for _ in 0..N {
        let t = DosTime::read_from(&mut r).expect("valid times");
        let v = bitfield::DosTime::try_from(&t).expect("fits");
        sum += u32::from(v.hours()) + u32::from(v.minutes()) + u32::from(v.second_halves());
    }
    sum
}

fn write_generated(times: &[DosTime]) -> Vec<u8> {
    let mut w = ByteWriter::new();
    for t in times {
        t.write_to(&mut w).expect("fits");
    }
    w.into_bytes()
}

fn write_view(times: &[(u8, u8, u8)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(2 * times.len());
    for &(h, m, s) in times {
        let v = bitfield::DosTime::new()
            .with_hours(h)
            .with_minutes(m)
            .with_second_halves(s);
        out.extend_from_slice(&v.into_bytes());
    }
    out
}

fn bench(c: &mut Criterion) {
    let bytes = words();
    let times = read_generated(&bytes);
    let parts: Vec<(u8, u8, u8)> = times
        .iter()
        .map(|t| (t.hours, t.minutes, t.second_halves))
        .collect();
    // Every path agrees before anything is timed.
    let sum = sum_generated(&bytes);
    assert_eq!(sum_view(&bytes), sum);
    assert_eq!(sum_generated_then_view(&bytes), sum);
    assert_eq!(write_generated(&times), bytes);
    assert_eq!(write_view(&parts), bytes);

    let mut g = c.benchmark_group("dos_time_decode");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("generated", |b| b.iter(|| sum_generated(black_box(&bytes))));
    g.bench_function("modular_bitfield", |b| {
        b.iter(|| sum_view(black_box(&bytes)))
    });
    g.bench_function("generated_then_view", |b| {
        b.iter(|| sum_generated_then_view(black_box(&bytes)))
    });
    g.finish();

    let mut g = c.benchmark_group("dos_time_encode");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("generated", |b| {
        b.iter(|| write_generated(black_box(&times)))
    });
    g.bench_function("modular_bitfield", |b| {
        b.iter(|| write_view(black_box(&parts)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
