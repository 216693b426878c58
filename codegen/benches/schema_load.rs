//! Loading a schema (`statepack_codegen::load_checked`: read, lower, resolve, every check),
//! as `--schema` does before any data is read, for chains of 1,000 and 2,000 types (each
//! type reads the next under an `if`). The time must grow linearly with the schema: the
//! second at most 2.5 times the first (docs/performance.md, "Schema loading").

use criterion::{criterion_group, criterion_main, Criterion};
use std::path::Path;

/// A schema of `n` types, `t0` reading `t1` reading ... `t{n-1}`.
fn chain(n: usize) -> String {
    let mut out = String::from(
        "meta:\n  id: chain\n  endian: le\nseq:\n  - id: head\n    type: t0\ntypes:\n",
    );
    for i in 0..n {
        out.push_str(&format!(
            "  t{i}:\n    seq:\n      - id: a\n        type: u1\n"
        ));
        if i + 1 < n {
            out.push_str(&format!(
                "      - id: next\n        type: t{}\n        if: a != 0\n",
                i + 1
            ));
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("schema_load");
    g.sample_size(10);
    for n in [1000usize, 2000] {
        let text = chain(n);
        g.bench_function(format!("chain_of_{n}_types"), |b| {
            b.iter(|| {
                statepack_codegen::load_checked(&text, "chain.ksy", Path::new("chain.ksy"), &[])
                    .expect("the chain loads")
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
