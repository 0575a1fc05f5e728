#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine (root): installs what is
# missing, builds, checks formatting and lints, runs every test, and ends
# with how many tests passed, failed and were ignored (each ignored test
# with its reason). Exit status: that of the run (any failure fails it).
#
# No test passes by skipping: a test whose prerequisite (root, ip, nft, a
# DDS library, iox-roudi, chromium, ...) is missing fails naming it, and
# setup.sh installs them all; a test that cannot run here on purpose is
# `#[ignore = "why"]` and listed at the end with its reason.
#
#   scripts/test.sh                    the suite (CI: .ci/run)
#   scripts/test.sh --summary LOG      only the summary of a saved `cargo test` log
#
# The log of the run is kept in $PUBSUBPERF_TEST_LOG (default
# target/test.log).
set -euo pipefail
cd "$(dirname "$0")/.."

# The summary of a `cargo test` log (its stdout and stderr): the totals of
# the "test result:" lines, each failed and each ignored test named with its
# test binary (crate, and the tests/ file of an integration test), and the
# ignored tests' reasons.
summary() {
  awk '
    # "Running unittests src/lib.rs (/t/release/deps/pubsubperf_roudi-0123abcd)"
    # names the crate; its integration tests ("Running tests/x.rs (...)")
    # follow it. "Doc-tests pubsubperf_roudi" runs the doc tests of one crate.
    /^ *Running / {
      bin = $NF; sub(/^\(/, "", bin); sub(/\)$/, "", bin)
      sub(/.*\//, "", bin); sub(/-[0-9a-f]+$/, "", bin)
      if ($2 == "unittests") { crate = bin; where = crate } else { where = (crate == "" ? "" : crate " ") $2 }
      next
    }
    /^ *Doc-tests / { where = $2 " doc tests"; next }
    /^test .* \.\.\. ignored/ {
      line = $0; sub(/^test /, "", line)
      i = index(line, " ... ignored"); name = substr(line, 1, i - 1)
      why = substr(line, i + length(" ... ignored"))
      sub(/^, /, "", why); if (why == "") why = "(no reason given)"
      ignored[++ni] = "  " where ": " name ": " why
      next
    }
    /^test .* \.\.\. FAILED$/ {
      line = $0; sub(/^test /, "", line); sub(/ \.\.\. FAILED$/, "", line)
      failed[++nf] = "  " where ": " line
      next
    }
    /^test result: / {
      binaries++
      for (k = 3; k <= NF; k++) {
        n = $(k - 1) + 0; w = $k; sub(/[;,.]$/, "", w)
        if (w == "passed") p += n; else if (w == "failed") f += n; else if (w == "ignored") ig += n
      }
      next
    }
    # Cargo names each failed test binary (also one that died without a
    # "test result:" line) and how to rerun it.
    /^error: test failed, to rerun pass/ {
      r = $0; sub(/^error: test failed, to rerun pass /, "", r); gsub(/`/, "", r)
      died[++nd] = "  cargo test --release " r
      next
    }
    # What a failed test found missing (testkit::require), once each.
    /prerequisite missing: / {
      m = $0; sub(/.*prerequisite missing: /, "", m)
      if (!(m in seen)) { seen[m] = 1; missing[++nm] = "  " m }
    }
    END {
      printf "\n== tests: %d ran (%d passed, %d failed), %d ignored, in %d test binaries\n", p + f, p, f, ig, binaries
      if (nf) { print "== failed:"; for (k = 1; k <= nf; k++) print failed[k] }
      if (nm) { print "== prerequisites missing:"; for (k = 1; k <= nm; k++) print missing[k] }
      if (nd) { print "== failed test binaries, to rerun:"; for (k = 1; k <= nd; k++) print died[k] }
      if (ni) { print "== ignored (and why):"; for (k = 1; k <= ni; k++) print ignored[k] }
      if (ig != ni) printf "== note: %d ignored by the totals, %d ignored lines found\n", ig, ni
    }
  ' "$1"
}

if [ "${1:-}" = "--summary" ]; then
  summary "${2:?usage: scripts/test.sh --summary LOG}"
  exit 0
fi

if [ "$(id -u)" != 0 ]; then
  echo "test.sh: run as root: the network namespace tests need it, setup.sh installs packages" >&2
fi
# Each step's time goes to the log (docs/install.md quotes them).
step() {
  local t=$SECONDS
  "$@" >/dev/null
  echo "test.sh: '$*' took $((SECONDS - t)) s" >&2
}
step ./scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
cargo fmt --all --check
step cargo clippy --release --workspace --all-targets --locked -- -D warnings

# The builds the install tests check (crates/cli/tests/emulated.rs,
# install.rs and static_build.rs; docs/install.md): the aarch64 and armhf
# cross builds, run under qemu-user; the amd64, arm64 and armhf Debian
# packages; the static builds.
#
# Those tests check what the builds hold and that they run, not how fast:
# the builds for other targets are made at optimization level 1, to keep the
# suite inside CI's time (the measured times: docs/tests.md). The scripts run
# by hand build at level 3, as released.
opt1() { CARGO_PROFILE_RELEASE_OPT_LEVEL=1 "$@"; }
step opt1 ./scripts/cross.sh aarch64
step ./scripts/cross.sh --emulation aarch64
step opt1 ./scripts/cross.sh armhf
step ./scripts/cross.sh --emulation armhf
step ./scripts/package.sh
step opt1 ./scripts/package.sh aarch64
step opt1 ./scripts/package.sh armhf
step opt1 ./scripts/static.sh
step opt1 ./scripts/static.sh aarch64

# This machine runs nothing but the suite: a test whose check needs a quiet
# machine (netns.rs, the relay's 1 ms known answer) fails if it was busy
# instead of passing unchecked.
export PUBSUBPERF_TEST_QUIET_MACHINE=1
log="${PUBSUBPERF_TEST_LOG:-target/test.log}"
mkdir -p "$(dirname "$log")"
# Every test binary runs even after a failure, so the summary is complete.
status=0
cargo test --release --workspace --locked --no-fail-fast 2>&1 | tee "$log" || status=$?
summary "$log"
if [ "$status" != 0 ]; then
  echo "== FAILED (cargo test exit status $status); the whole log: $log"
else
  echo "== ok; the whole log: $log"
fi
exit "$status"
