#!/usr/bin/env bash
# Fuzzes statepack for a bounded time and fails on any crash.
#
#   fuzz/run.sh [SECONDS] [TARGET...]
#
# SECONDS per target (default 60); targets default to all of them (decode_raw, decode_full,
# generate, kaitai_lang), run one after the other. Installs the pinned cargo-fuzz when missing, seeds the
# corpora from the formats' samples and the schemas, builds every target, then runs each one.
# Extra libFuzzer flags can be given in FUZZ_FLAGS (e.g. FUZZ_FLAGS="-jobs=2 -workers=2").
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_FUZZ_VERSION=0.13.2
secs="${1:-60}"
[ $# -gt 0 ] && shift
if [ $# -gt 0 ]; then targets=("$@"); else targets=(decode_raw decode_full generate kaitai_lang); fi

if ! cargo fuzz --version 2>/dev/null | grep -qx "cargo-fuzz $CARGO_FUZZ_VERSION"; then
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi

# Seed: every format's samples for the decoder targets, every schema for the generator.
cargo test --test fuzz_regressions -- --ignored --exact seed_fuzz_corpora

cd fuzz
# fuzz/ is its own workspace with its own target folder.
unset CARGO_TARGET_DIR
# cargo-fuzz passes nightly-only flags (-Zsanitizer=address, sanitizer coverage); the stable
# toolchain accepts them with RUSTC_BOOTSTRAP=1.
export RUSTC_BOOTSTRAP=1
cargo fuzz build
for t in "${targets[@]}"; do
  echo "== fuzz $t for ${secs}s"
  # Inputs up to 4 KiB: every frame shape and every error fits, and large inputs only slow
  # each run down (the study-walk seed is cut to its first 4 KiB).
  # shellcheck disable=SC2086
  cargo fuzz run "$t" -- -max_total_time="$secs" -max_len=4096 -timeout=10 \
    -print_final_stats=1 ${FUZZ_FLAGS:-}
done
