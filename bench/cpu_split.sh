#!/usr/bin/env bash
# Where the CPU of a run goes, by owner: the tool's own code, the middleware,
# the C/C++ and Rust runtimes, the kernel, idle. For a cell where pubsubperf
# is behind its reference, run it once over ours and once over the reference
# (same size, pinning, mode) and compare the lines: a gap that sits in the
# middleware's and the kernel's lines while the tool's own line is small is
# the middleware's, not ours (issue 17's "profile that proves it").
#
# usage: [FREQ=2999] [COUNT=N] [TOP=5] [TOOL=NAME] bench/cpu_split.sh CMD [ARGS...]
#   Runs CMD under `perf record -a` (every process on every core while CMD
#   runs: the tool's children and the peers it starts are seen too) and
#   prints, per owner, the CPU time (ms), its share of the busy time, and
#   with COUNT (the samples the run handled, from its output) the CPU
#   nanoseconds per sample; then the TOP symbols of each owner.
#   COUNT=@FILE reads the count from FILE once CMD has ended (a wrapper
#   writes it there from the run's output). TOOL names the tool's binary
#   when CMD is a wrapper (`TOOL=sockperf bash -c '...'`
#   to start a server and a client); default: CMD's basename.
# Owners: by the sampled code's file (kernel, vdso, libc/libstdc++/ld.so,
# the middleware's shared libraries: libddsc, libfastrtps, libfastcdr,
# libiceoryx*), and inside the tool's own binary (pubsubperf or the reference
# program) by the symbol's crate: zenoh*, iceoryx2*, tokio* and their helpers
# are `middleware`, std/core/alloc `rust std`, the rest `tool` (pubsubperf's
# crates and dependencies and the C++ shims linked in; a C/C++ reference
# program's own code). `other`: any other file (another process's binary).
# Samples of other processes running meanwhile are counted by their owner
# too (a quiet machine is assumed, as for every bench script).
# Needs linux-perf and root (or kernel.perf_event_paranoid <= -1).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: bench/cpu_split.sh CMD [ARGS...]" >&2; exit 2; }
command -v perf >/dev/null || { echo "perf missing: apt-get install linux-perf" >&2; exit 1; }
freq=${FREQ:-2999}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tool=${TOOL:-$(basename "$1")}
perf record -q -a -F "$freq" -o "$work/perf.data" -- "$@"
count=${COUNT:-0}
[[ $count == @* ]] && count=$(cat "${count#@}")
perf script -i "$work/perf.data" -F comm,cpu,ip,sym,dso 2>/dev/null \
    | python3 "$(dirname "$0")/lib/cpu_split.py" "$freq" "$tool" "$count" "${TOP:-5}"
