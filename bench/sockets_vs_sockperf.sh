#!/usr/bin/env bash
# pubsubperf's socket baselines (udp, tcp, uds) beside sockperf 3.7 and
# iperf3, measured in one run, same machine, over loopback, same pinning for
# both tools (publisher / sockperf client / iperf3 client on core 0,
# subscriber / sockperf server / iperf3 server on core 1), ROUNDS (default
# 3) alternating rounds (which tool goes first alternates), median ratios
# ours/reference against the goals (latency p50 and p99 <= 1.05 x,
# throughput >= 0.95 x). Both tools send messages of the same total size:
# sockperf's 14-byte header and our 16-byte header are inside the size.
# Over tcp our binding frames each sample with a 4-byte length (sockperf's
# length is in its header), so there ours runs SIZE - 4 byte samples: both
# put SIZE bytes per message on the wire. It matters at 64 KiB: loopback
# TCP takes a message just above 65536 bytes about 0.5 us slower than one of
# 65536 (sockperf's own busy ping-pong, 2026-11-27: p50 7.38-7.40 us at
# 65536, 7.85-7.99 us at 65538 and 65540, 7.95 at 65600).
#
# 1. udp latency, `sockperf ping-pong` / `sockperf server`, at 64 B, 1 KiB
#    and 65507 B (the largest UDP payload, for both tools; 1 MiB is beyond
#    UDP for both, so there is no 1 MiB row), in two modes:
#    - block: sockperf's default (blocking sockets, recvfrom() blocks; with
#      one socket it does not use epoll) beside our `--wait block`;
#    - busy: sockperf's fastest, `--nonblocked` on client and server
#      (recvfrom() on a non-blocking socket, retried until data: a busy
#      poll) beside our `--wait busy`.
#    sockperf's figures: its "percentile 50.000" and "percentile 99.000"
#    lines (one-way = RTT/2, as ours), over its valid duration.
# 2. tcp latency, `sockperf ping-pong --tcp` (TCP_NODELAY, its ping-pong
#    default) in the same two modes, at 64 B, 1 KiB, 64 KiB and 1048575 B:
#    sockperf refuses -m 1048576 ("max: 1048575"), so both tools run
#    1 MiB - 1 byte; its server is started with `-m 1048575`, as it refuses
#    messages above 65507 B otherwise.
# 3. udp throughput, best effort, unpaced: `sockperf throughput
#    --dontwarmup` (no warm-up messages, so that its server's count is the
#    measured messages only) into `sockperf server`; sockperf's received
#    rate = the server's "Total N messages received and handled" (printed
#    on SIGINT, sent after the client ended) / the client's "sent in T sec";
#    its loss = 1 - received / sent. Ours: `throughput --binding udp`
#    received samples/s and lost %. Both with the kernel's default socket
#    buffers (neither sets one). In sockperf's default mode (blocking)
#    beside `--wait block`. Loss of both printed per round.
# 4. tcp throughput, reliable: `iperf3 -c -l SIZE` (one write() of SIZE
#    bytes after another, no framing; its server's received bits/s from
#    `-J` converted to SIZE-byte samples/s) and `sockperf throughput --tcp`
#    (messages counted by its server as in 3), both in their defaults,
#    which leave Nagle's algorithm on (the kernel coalesces small writes
#    into full segments: batching in the kernel, not in the program),
#    beside `throughput --binding tcp --opt nodelay=off` (the same: one
#    write() per sample, Nagle on, no --batch), at 64 B, 1 KiB, 64 KiB and
#    1048575 B. (Our default, TCP_NODELAY, is the latency tests' setting.)
#    Each reference has its own alternating rounds beside its own runs of
#    ours, with link readings (a round on a changed link is run again, as
#    in 1 and 2); part 3 keeps its rounds as they come, without readings.
#    Both references count from their first second, start-up included
#    (sockperf `--dontwarmup`, iperf3 without `-O`), ours after its warm-up:
#    if anything, their figures are a little lower for it.
# 5. uds: sockperf 3.7 has no Unix domain sockets (no option for them in
#    `sockperf --help`), nor has iperf3: ours uds beside ours tcp, latency
#    p50/p99 (block) and throughput, as information only (no goal).
#
# TCP's congestion control is the kernel's default (printed at the start:
# `sysctl net.ipv4.tcp_congestion_control`). Under bbr, Linux paces every
# TCP connection, loopback ones too, at a rate bbr estimates per
# connection, and a 1 MiB message then takes longer (2026-11-27, busy
# ping-pong at 1048575 B, p50 under bbr ours 139-147 us, sockperf 112-120
# us; under cubic ours 82-122 us, sockperf 88-124 us).
# TCP_CC=NAME runs the whole script in a network namespace of its own whose
# congestion control is NAME (bench/lib/tcp_cc.sh: `ip netns`, root; the
# host's setting is left alone), so that a cell can be measured under both.
#
# iperf3: `apt-get install iperf3`; sockperf: `apt-get install sockperf`.
# The machine's load average is printed at the end: on a loaded machine only
# the ratios of one run mean something.
#
# usage: [ROUNDS=3] [SIZES="64 1024 65536 1048575"] [PARTS="1 2 3 4 5"] [TCP_CC=cubic|bbr|reno] bench/sockets_vs_sockperf.sh [SECONDS]
#   (udp uses the SIZES up to 65507; a SIZE above is replaced by 65507 once)
set -euo pipefail
script=$(realpath "$0")
cd "$(dirname "$0")/.."
. bench/lib/tcp_cc.sh "$script" "$@"
secs=${1:-3}
rounds=${ROUNDS:-3}
sizes=${SIZES:-64 1024 65536 1048575}
parts=${PARTS:-1 2 3 4 5}
. bench/lib/common.sh
need sockperf sockperf
need iperf3 iperf3
# The next port, from a counter in a file: the servers start inside `$(...)`
# (each round's `linked` run), whose own variables do not outlive it, and a
# server must never bind the port another server had just used.
echo $(( 20000 + RANDOM % 20000 )) > "$tmp/port"
next_port() {
    local p
    p=$(( $(cat "$tmp/port") + 1 ))
    echo "$p" > "$tmp/port"
    port=$p
}

# The udp sizes: SIZES capped at the largest UDP payload, once.
udp_sizes=$(for s in $sizes; do echo $(( s > 65507 ? 65507 : s )); done | awk '!seen[$0]++' | tr '\n' ' ')

part() { [[ " $parts " == *" $1 "* ]]; }

# A sockperf server on core 1 for PROTO (udp|tcp) and MODE (block|busy),
# its output in $tmp/srv.txt; a fresh port each time.
sp_server() {
    local proto=$1 mode=$2 a=()
    next_port
    [ "$proto" = tcp ] && a+=(--tcp)
    [ "$mode" = busy ] && a+=(--nonblocked)
    taskset -c 1 sockperf server "${a[@]}" -m 1048575 -i 127.0.0.1 -p "$port" > "$tmp/srv.txt" 2>&1 &
    peers=($!)
    sleep 0.3
}

# Ends the sockperf server with SIGINT (it then prints its totals).
sp_stop() {
    kill -INT "${peers[0]}" 2>/dev/null || true
    wait "${peers[0]}" 2>/dev/null || true
    peers=()
}

# sockperf ping-pong over PROTO in MODE at SIZE; prints "p50 p99" in us.
sp_lat() {
    local proto=$1 mode=$2 size=$3 a=()
    [ "$proto" = tcp ] && a+=(--tcp)
    [ "$mode" = busy ] && a+=(--nonblocked)
    sp_server "$proto" "$mode"
    taskset -c 0 sockperf ping-pong "${a[@]}" -i 127.0.0.1 -p "$port" -m "$size" -t "$secs" > "$tmp/pp.txt" 2>&1 || true
    sp_stop
    python3 - "$tmp/pp.txt" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
p = {k: float(v) for k, v in re.findall(r'percentile (50|99)\.000 =\s*([0-9.]+)', t)}
print(p.get("50", float("nan")), p.get("99", float("nan")))
PY
}

# sockperf throughput over PROTO at SIZE; prints "received_per_s loss_percent".
sp_tp() {
    local proto=$1 size=$2 a=()
    [ "$proto" = tcp ] && a+=(--tcp)
    sp_server "$proto" block
    taskset -c 0 sockperf throughput "${a[@]}" --dontwarmup -i 127.0.0.1 -p "$port" -m "$size" -t "$secs" > "$tmp/tp.txt" 2>&1 || true
    sleep 0.2
    sp_stop
    python3 - "$tmp/tp.txt" "$tmp/srv.txt" <<'PY'
import re, sys
c, s = open(sys.argv[1]).read(), open(sys.argv[2]).read()
m = re.search(r'Total of (\d+) messages sent in ([0-9.]+) sec', c)
r = re.search(r'Total (\d+) messages received', s)
if not (m and r):
    print("nan nan")
else:
    sent, t, got = int(m.group(1)), float(m.group(2)), int(r.group(1))
    print(got / t, 100.0 * (1 - got / sent) if sent else float("nan"))
PY
}

# iperf3 over TCP with SIZE-byte writes; prints received SIZE-byte samples/s.
iperf_tp() {
    local size=$1
    next_port
    taskset -c 1 iperf3 -s -1 -p "$port" > /dev/null 2>&1 &
    peers=($!)
    sleep 0.3
    taskset -c 0 iperf3 -c 127.0.0.1 -p "$port" -l "$size" -t "$secs" -J > "$tmp/iperf.json" 2>/dev/null || true
    wait "${peers[0]}" 2>/dev/null || true
    peers=()
    python3 - "$tmp/iperf.json" "$size" <<'PY'
import json, sys
try:
    bps = json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]
    print(bps / 8 / int(sys.argv[2]))
except Exception:
    print(float("nan"))
PY
}

# Our sample size for SIZE bytes per message on the wire over PROTO: tcp
# frames each sample with a 4-byte length (see the header).
ours_size() { if [ "$1" = tcp ]; then echo $(( $2 - 4 )); else echo "$2"; fi; }

# pubsubperf TEST over BINDING at SIZE with extra args; results in $tmp/o.json.
ours() {
    local test=$1 binding=$2 size=$3
    shift 3
    "$bin" "$test" --binding "$binding" --size "$size" --duration "${secs}s" --cpu 0,1 "$@" -q --no-save --json "$tmp/o.json" > /dev/null
}

# ours latency over PROTO at SIZE with ARGS: "p50 p99" in us, "nan nan" when it failed.
lat_run() {
    if ours latency "$@"; then ours_lat "$tmp/o.json"; else echo "nan nan"; fi
}

# ours throughput over PROTO at SIZE with ARGS: received samples/s, "nan" when it failed.
tp_run() {
    if ours throughput "$@"; then ours_tp "$tmp/o.json"; else echo nan; fi
}

lat_section() {
    local proto=$1 list=$2 mode size
    for mode in block busy; do
        for size in $list; do
            wanted lat "$mode" "$size" sockperf || continue
            alternate sp_lat "$proto" "$mode" "$size" -- lat_run "$proto" "$(ours_size "$proto" "$size")" --wait "$mode"
            report lat "$mode" "$size" sockperf
        done
    done
}

if part 1; then
    export BENCH_SUBJECT=udp # the row name in bench/table.sh's table
    echo "== 1. udp latency p50/p99 (one-way = RTT/2), ${secs} s per run, ${rounds} alternating rounds: sockperf ping-pong (block: default; busy: --nonblocked) vs --wait block|busy"
    lat_section udp "$udp_sizes"
    echo "  1 MiB: beyond UDP (65507 B) for both tools"
fi

if part 2; then
    export BENCH_SUBJECT=tcp # the row name in bench/table.sh's table
    echo "== 2. tcp latency p50/p99 (one-way = RTT/2), ${secs} s per run, ${rounds} alternating rounds: sockperf ping-pong --tcp (block: default; busy: --nonblocked) vs --wait block|busy at SIZE - 4 B (+ a 4-byte frame: SIZE bytes a message for both)"
    lat_section tcp "$sizes"
fi

if part 3; then
    export BENCH_SUBJECT=udp # the row name in bench/table.sh's table
    echo "== 3. udp throughput, best effort, unpaced, default socket buffers, ${secs} s per run: sockperf throughput -> server (blocking) vs --wait block; received samples/s"
    for size in $udp_sizes; do
        wanted tp tp "$size" sockperf || continue
        : > "$tmp/rows"
        : > "$tmp/loss"
        for r in $(seq "$rounds"); do
            if first_of_round "$r"; then read -r d dl < <(sp_tp udp "$size"); fi
            ours throughput udp "$size" --wait block
            o=$(ours_tp "$tmp/o.json")
            ol=$(json "$tmp/o.json" "r[0]['throughput']['lost_percent']")
            if ! first_of_round "$r"; then read -r d dl < <(sp_tp udp "$size"); fi
            echo "$o $d" >> "$tmp/rows"
            printf '  %-10s %9s B  round %d: lost sockperf %.1f %%, pubsubperf %.1f %%\n' tp "$size" "$r" "$dl" "$ol" >> "$tmp/loss"
        done
        report tp tp "$size" sockperf
        cat "$tmp/loss"
    done
fi

# sockperf's tcp throughput at SIZE: received samples/s.
sp_tcp_tp() {
    local d
    read -r d _ < <(sp_tp tcp "$1")
    echo "$d"
}

if part 4; then
    export BENCH_SUBJECT=tcp # the row name in bench/table.sh's table
    echo "== 4. tcp throughput, reliable, ${secs} s per run: iperf3 -l SIZE, then sockperf throughput --tcp (Nagle on, their default), each in ${rounds} rounds alternating with throughput --binding tcp --opt nodelay=off at SIZE - 4 B (+ a 4-byte frame); received samples/s"
    for size in $sizes; do
        if wanted tp iperf3 "$size" iperf3; then
            alternate iperf_tp "$size" -- tp_run tcp "$(ours_size tcp "$size")" --opt nodelay=off
            report tp iperf3 "$size" iperf3
        fi
        if wanted tp sockperf "$size" sockperf; then
            alternate sp_tcp_tp "$size" -- tp_run tcp "$(ours_size tcp "$size")" --opt nodelay=off
            report tp sockperf "$size" sockperf
        fi
    done
fi

if part 5; then
    echo "== 5. uds (no sockperf or iperf3 mode for Unix sockets): ours uds beside ours tcp, ${secs} s per run, information only"
    for size in $sizes; do
        ours latency uds "$size" --wait block
        ul=$(ours_lat "$tmp/o.json")
        ours latency tcp "$size" --wait block
        tl=$(ours_lat "$tmp/o.json")
        ours throughput uds "$size"
        ut=$(ours_tp "$tmp/o.json")
        ours throughput tcp "$size"
        tt=$(ours_tp "$tmp/o.json")
        printf '  %9s B  latency p50/p99 us: uds %s, tcp %s   throughput /s: uds %.0f, tcp %.0f\n' "$size" "${ul/ / / }" "${tl/ / / }" "$ut" "$tt"
    done
fi
echo "  (load average: $(cut -d' ' -f1-3 /proc/loadavg); this VM has $(nproc) vCPUs and is shared, so compare figures of one run only)"
