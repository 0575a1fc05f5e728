#!/usr/bin/env bash
# Fuzzes every parser of untrusted input for SECONDS each (default 60):
# the control-channel decoder, results files (with histogram decoding),
# the histogram decoder alone, sizes and sweep files (crates/fuzz).
#
# With a nightly toolchain and cargo-fuzz (rustup toolchain install nightly;
# cargo install cargo-fuzz) it runs libFuzzer on each target; crashes land
# in crates/fuzz/fuzz/artifacts/TARGET/. Without them it runs the same
# targets on stable as a bounded deterministic smoke test and says so.
#
# usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(control_decode handshake results_file histogram size sweep)
fi
export PATH="$HOME/.cargo/bin:$PATH"
if rustup run nightly rustc --version >/dev/null 2>&1 && cargo fuzz --version >/dev/null 2>&1; then
  export CARGO_TARGET_DIR="${FUZZ_TARGET_DIR:-$PWD/target/fuzz}"
  cd crates/fuzz
  for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t"
    echo "fuzz.sh: $t for ${secs}s (libFuzzer, nightly)" >&2
    # -rss_limit_mb: a decoder must not balloon on a small input.
    cargo +nightly fuzz run "$t" -- -max_total_time="$secs" -rss_limit_mb=2048 \
      -max_len=65536 -print_final_stats=1 2>&1 | grep -E "^(#[0-9]+.*DONE|Done|stat::number_of_executed_units|stat::peak_rss_mb|SUMMARY|==[0-9]+==|thread .* panicked)" || true
    if [ "${PIPESTATUS[0]}" -ne 0 ]; then
      echo "fuzz.sh: $t FAILED (see crates/fuzz/fuzz/artifacts/$t)" >&2
      exit 1
    fi
  done
  echo "fuzz.sh: no crash in ${#targets[@]} target(s), ${secs}s each" >&2
else
  echo "fuzz.sh: no nightly toolchain or cargo-fuzz here; running the stable fuzz smoke instead" >&2
  PUBSUBPERF_FUZZ_SECONDS="$secs" cargo test --release -p pubsubperf-fuzz -- --nocapture
fi
