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

# The build cache. A fresh clone builds into a directory outside it,
# $PUBSUBPERF_BUILD_CACHE/target (default /var/cache/pubsubperf; `none`
# builds inside the clone), linked as ./target: later runs on this machine
# (CI clones afresh each time) rebuild only our own crates. A clone that
# has a target directory already keeps it. The cache is emptied when it has
# grown past $PUBSUBPERF_BUILD_CACHE_MAX_GB (default 60): the artifacts of
# clones at other paths pile up there.
cache="${PUBSUBPERF_BUILD_CACHE:-/var/cache/pubsubperf}"
if [ "$cache" != none ] && [ ! -e target ] && [ ! -L target ]; then
  if [ -d "$cache/target" ] &&
    [ "$(du -s --block-size=1G "$cache/target" | cut -f1)" -gt "${PUBSUBPERF_BUILD_CACHE_MAX_GB:-60}" ]; then
    echo "test.sh: emptying the build cache $cache/target (over ${PUBSUBPERF_BUILD_CACHE_MAX_GB:-60} GB)" >&2
    rm -rf "$cache/target"
  fi
  mkdir -p "$cache/target"
  ln -s "$cache/target" target
  echo "test.sh: building in the cache $cache/target (linked as ./target)" >&2
fi

# Each step's time, printed at the end of the run (docs/tests.md quotes them).
steps=()
timed() {
  steps+=("$(printf '%6d s  %s' "$1" "$2")")
  echo "test.sh: '$2' took $1 s" >&2
}
# A step's standard output is shown only when it fails (cargo fmt's diff, a
# script's last lines); its standard error goes to the log as it comes.
step() {
  local t=$SECONDS out
  out=$(mktemp)
  if ! "$@" >"$out"; then
    echo "test.sh: '$*' failed after $((SECONDS - t)) s; its output:" >&2
    tail -n 40 "$out" >&2
    rm -f "$out"
    exit 1
  fi
  rm -f "$out"
  timed $((SECONDS - t)) "$*"
}
print_steps() {
  echo "== steps (wall clock; the preparation ran beside the host's builds):"
  printf '%s\n' "${steps[@]}"
  echo "$(printf '%6d s' "$SECONDS")  in all"
}

step ./scripts/setup.sh --with-connext --no-build
export PATH="$HOME/.cargo/bin:$PATH"

# What the builds for other targets and the packages need is downloaded and
# installed (apt, rustup, PyPI: mostly network and disk; cargo-deb compiled
# from crates.io when missing) while this machine's builds run; its log is
# target/prepare.log.
prepare_other_targets() {
  scripts/cross.sh --prepare aarch64 && scripts/cross.sh --emulation aarch64 &&
    scripts/cross.sh --prepare armhf && scripts/cross.sh --emulation armhf &&
    scripts/static.sh --prepare x86_64 && scripts/static.sh --prepare aarch64 &&
    { command -v cargo-deb >/dev/null || cargo install --locked cargo-deb; }
}
mkdir -p target
rm -f target/prepare.took
(
  t=$SECONDS
  prepare_other_targets
  rc=$?
  echo $((SECONDS - t)) >target/prepare.took
  exit $rc
) >target/prepare.log 2>&1 &
prepare_pid=$!
wait_for_preparation() {
  local t=$SECONDS
  if ! wait "$prepare_pid"; then
    echo "test.sh: preparing the builds for other targets failed; target/prepare.log:" >&2
    tail -n 20 target/prepare.log >&2
    exit 1
  fi
  timed "$(cat target/prepare.took)" "preparation for other targets (cross.sh/static.sh --prepare, --emulation), beside the builds"
  timed $((SECONDS - t)) "waiting for that preparation after the builds"
}

step cargo fmt --all --check
step cargo build --release --locked -p pubsubperf
step cargo test --release --workspace --locked --no-run
wait_for_preparation
# The host's package: its build step is this machine's binary, which the
# tests run, so it is made before them (fresh, it rebuilds nothing).
step ./scripts/package.sh

# The builds for other targets and their packages, which only the tests of
# crates/builds check (emulated.rs, install.rs, static_build.rs;
# docs/install.md): the aarch64 and armhf cross builds (run under
# qemu-user), their Debian packages, the static builds; and the lints. They
# run beside the other tests at the idle scheduling class (chrt --idle,
# ionice idle): on the CPU only when the tests leave it idle (their waits,
# sleeps and timeouts), so the tests' own work and timing keep the machine;
# crates/builds's tests run once they are done.
#
# Those tests check what the builds hold and that they run, not how fast:
# the builds for other targets are made at optimization level 0, to keep the
# suite inside CI's time (the measured times: docs/tests.md). The scripts run
# by hand build at level 3, as released.
opt0() { CARGO_PROFILE_RELEASE_OPT_LEVEL=0 "$@"; }
other_builds() {
  local t rc
  for cmd in \
    "cargo clippy --release --workspace --all-targets --locked -- -D warnings" \
    "opt0 ./scripts/cross.sh aarch64" \
    "opt0 ./scripts/cross.sh armhf" \
    "opt0 ./scripts/package.sh aarch64" \
    "opt0 ./scripts/package.sh armhf" \
    "opt0 ./scripts/static.sh" \
    "opt0 ./scripts/static.sh aarch64"; do
    t=$SECONDS
    echo "== $cmd" >&2
    rc=0
    eval "$cmd" >target/other-builds.out 2>&2 || rc=$?
    if [ "$rc" != 0 ]; then
      echo "== FAILED ($rc) after $((SECONDS - t)) s: $cmd; its output:" >&2
      tail -n 40 target/other-builds.out >&2
      return 1
    fi
    printf '%6d s  %s (beside the tests)\n' $((SECONDS - t)) "$cmd" >>target/other-builds.took
  done
}

# This machine runs nothing but the suite: a test whose check needs a quiet
# machine (the relay's 1 ms known answer in netns.rs; --explain's known
# answers, tests/explain.rs `on_a_quiet_machine::`, where a compiler beside
# them is named as a cause) fails if it was busy instead of passing
# unchecked; those run last, after the builds.
export PUBSUBPERF_TEST_QUIET_MACHINE=1
quiet_test=relay_delay_of_1ms_is_measured_as_1ms
quiet_module=on_a_quiet_machine::
log="${PUBSUBPERF_TEST_LOG:-target/test.log}"
mkdir -p "$(dirname "$log")"
: >"$log"
# Every test binary runs even after a failure, so the summary is complete.
status=0
t=$SECONDS
rm -f target/other-builds.took
cargo test --release --workspace --locked --no-fail-fast --exclude pubsubperf-builds \
  -- --skip "$quiet_test" --skip "$quiet_module" >>"$log" 2>&1 &
tests_pid=$!
# The builds start once cargo runs the tests (it has let go of the build
# directory's lock by then: were the builds first, the tests would wait).
until grep -q '^ *Running ' "$log" || ! kill -0 "$tests_pid" 2>/dev/null; do sleep 1; done
(
  ionice -c 3 -p $BASHPID >/dev/null 2>&1 || true
  exec chrt --idle 0 bash -c "$(declare -f opt0 other_builds); other_builds"
) 2>target/other-builds.log &
builds_pid=$!
tail -n +1 -f "$log" --pid "$tests_pid" &
tail_pid=$!
wait "$tests_pid" || status=$?
wait "$tail_pid" || true
timed $((SECONDS - t)) "cargo test --release --workspace --locked --no-fail-fast --exclude pubsubperf-builds (the tests but the builds' and the quiet ones)"
t=$SECONDS
if ! wait "$builds_pid"; then
  echo "test.sh: the builds for other targets failed; target/other-builds.log:" >&2
  tail -n 45 target/other-builds.log >&2
  status=1
fi
while IFS= read -r line; do steps+=("$line"); done <target/other-builds.took
timed $((SECONDS - t)) "waiting for those builds after the tests"
t=$SECONDS
last_tests() {
  local rc=0
  cargo test --release --locked --no-fail-fast -p pubsubperf-builds || rc=1
  cargo test --release --locked --no-fail-fast -p pubsubperf --test netns -- --exact "$quiet_test" || rc=1
  cargo test --release --locked --no-fail-fast -p pubsubperf --test explain -- "$quiet_module" || rc=1
  return $rc
}
last_tests 2>&1 | tee -a "$log" || status=1
timed $((SECONDS - t)) "cargo test -p pubsubperf-builds, and the quiet ones ($quiet_test, explain's $quiet_module)"
summary "$log"
print_steps
if [ "$status" != 0 ]; then
  echo "== FAILED (cargo test exit status $status); the whole log: $log"
else
  echo "== ok; the whole log: $log"
fi
exit "$status"
