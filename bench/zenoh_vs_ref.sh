#!/usr/bin/env bash
# pubsubperf's zenoh binding beside zenoh used directly, measured in one
# run, same machine, same pinning (publisher/ping thread on core 0,
# subscriber/pong thread on core 1; zenoh's own runtime threads float on
# both, for both tools), reliable (CongestionControl::Block), tcp on
# loopback, with the binding's session config (peer mode, no multicast
# scouting, no gossip, shared memory off).
#
# The reference is bench/zenoh-pingpong (our own program, built here; not
# part of the workspace): the equivalents of zenoh's z_ping/z_pong and
# z_pub_thr/z_sub_thr. Compared (MODES, each "KIND:MODE"):
#   lat:default   z_ping/z_pong as shipped (ping waits in a FIFO channel's
#                 recv, pong echoes from its subscriber callback, express)
#                 vs `pubsubperf latency -b zenoh --receive listener` (the
#                 echo written from the subscriber callback too)
#   lat:busy      the same with ping polling try_recv vs --receive listener
#                 --wait busy (our subscriber in the callback, our
#                 publisher polling the channel for its echo)
#   lat:channel   pong taking from a FIFO channel on its own thread and
#                 echoing a copy vs --receive thread --wait block
#   tp:default    z_pub_thr/z_sub_thr as shipped (express off: zenoh
#                 batches; counting in the subscriber callback) vs
#                 `throughput -b zenoh` as shipped (the same: batched data,
#                 counted in the subscriber callback)
#   tp:express    both with express on (no batching) vs --opt express=true
#   tp:channel    z_pub_thr (express off) with the subscriber counting from
#                 a FIFO channel on its own thread vs --receive thread
#                 --opt express=false
# The reference's latency percentiles (p50_ns, p99_ns, one-way = RTT/2)
# and rate (per_s: samples counted over SECONDS after a 1 s warm-up from
# the first sample) are its own; ours are read from the results file.
# ROUNDS rounds, which tool goes first alternating; each round's figures,
# and the median ratio per size and mode against the goals (latency
# ours/ref <= 1.05, throughput ours/ref >= 0.95).
#
# Both tools' sessions talk TCP over loopback: the kernel's congestion
# control is printed first, and TCP_CC=NAME runs the script under another
# (bench/lib/tcp_cc.sh).
#
# REF_RUNTIME=pinned opens the reference's sessions on its pinned threads,
# so zenoh's runtime threads share each side's core (as a z_ping started
# under taskset has them); the default, float, is the binding's policy
# (docs/bindings/zenoh.md, "Threads and CPU pinning").
#
# usage: [ROUNDS=3] [SIZES="64 1024 65536 1048576"] [MODES="..."] [ZENOH_PINGPONG=PATH]
#        [REF_RUNTIME=float|pinned] [TCP_CC=cubic|bbr|reno] bench/zenoh_vs_ref.sh [SECONDS]
set -euo pipefail
script=$(realpath "$0")
cd "$(dirname "$0")/.."
. bench/lib/tcp_cc.sh "$script" "$@"
secs=${1:-3}
rounds=${ROUNDS:-3}
sizes=${SIZES:-64 1024 65536 1048576}
modes=${MODES:-lat:default lat:busy lat:channel tp:default tp:express tp:channel}
. bench/lib/common.sh
export BENCH_SUBJECT=zenoh # the row name in bench/table.sh's table
# ZENOH_PINGPONG=PATH uses a reference binary built elsewhere (a first build
# of zenoh takes long on a small machine).
pp=${ZENOH_PINGPONG:-$(build_ref zenoh-pingpong)}

# Reference and our flags of KIND:MODE.
mode_flags() {
    case $1 in
        lat:default) ref=(--recv callback --wait block); ours=(--receive listener) ;;
        lat:busy) ref=(--recv callback --wait busy); ours=(--receive listener --wait busy) ;;
        lat:channel) ref=(--recv channel --wait block); ours=(--receive thread --wait block) ;;
        tp:default) ref=(--recv callback --express false); ours=() ;;
        tp:express) ref=(--recv callback --express true); ours=(--receive listener --opt express=true) ;;
        tp:channel) ref=(--recv channel --express false); ours=(--receive thread --opt express=false) ;;
        *) echo "MODES: $1 is not one of lat:default lat:busy lat:channel tp:default tp:express tp:channel" >&2; exit 2 ;;
    esac
}
ref_run() { # KIND SIZE
    local test=latency
    [ "$1" = tp ] && test=throughput
    "$pp" --test "$test" --size "$2" --duration "$secs" --cpu 0,1 --runtime "${REF_RUNTIME:-float}" "${ref[@]}" > "$tmp/ref.txt" || true
    if [ "$1" = lat ]; then ref_lat "$tmp/ref.txt"; else ref_tp "$tmp/ref.txt"; fi
}
ours_run() { # KIND SIZE
    local test=latency
    [ "$1" = tp ] && test=throughput
    if "$bin" "$test" -b zenoh --size "$2" --duration "${secs}s" --cpu 0,1 "${ours[@]}" \
        -q --no-save --json "$tmp/o.json" > /dev/null; then
        if [ "$1" = lat ]; then ours_lat "$tmp/o.json"; else ours_tp "$tmp/o.json"; fi
    else
        [ "$1" = lat ] && echo "nan nan" || echo nan
    fi
}

echo "== zenoh binding vs zenoh-pingpong (z_ping/z_pong, z_pub_thr/z_sub_thr equivalents), tcp, reliable, ${secs} s per run, ${rounds} alternating rounds (load average $(cut -d' ' -f1-3 /proc/loadavg))"
for km in $modes; do
    mode_flags "$km"
    kind=${km%%:*}
    for size in $sizes; do
        wanted "$kind" "$km" "$size" zenoh-pingpong || continue
        alternate ref_run "$kind" "$size" -- ours_run "$kind" "$size"
        report "$kind" "$km" "$size" zenoh-pingpong
    done
done
echo "  (load average: $(cut -d' ' -f1-3 /proc/loadavg); this VM has $(nproc) vCPUs and is shared, so compare figures of one run only)"
