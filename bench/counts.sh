#!/usr/bin/env bash
# The work per sample, counted, pubsubperf beside each binding's reference
# tool (the same references as the bench/*_vs_*.sh scripts, in the same
# matched modes): counts do not swing with the VM as timings do (issue 49
# item 2), so this is what settles parity on this machine.
#
# Every process of a run (both sides; ours starts its subscriber itself, a
# two-process reference has each side wrapped) runs under `perf stat`
# (Debian linux-perf), counting in the kernel, no sampling, no ptrace:
#   syscalls      every system call (raw_syscalls:sys_enter)
#   futex-wait    futex WAIT / WAIT_BITSET calls (private or shared)
#   futex-wake    futex WAKE / WAKE_BITSET calls
#   <name>        the system calls of $NAMES, each on its own line
#   cs-vol        voluntary context switches (all switches - involuntary)
#   cs-invol      involuntary ones (switched out while runnable:
#                 sched:sched_switch with prev_state 0)
#   faults        page faults
#   migrations    CPU migrations
#   cpu-us        CPU time (task-clock) in microseconds
#   malloc        calls of glibc's malloc, calloc and realloc (uprobes on
#                 libc.so.6, set up here with `perf probe` and removed on
#                 exit; a program with its own allocator shows 0)
# Instructions and cycles are not counted: this VM has no hardware counters
# (`perf stat -e instructions` says <not supported>); on a machine that has
# them, EXTRA_EVENTS="instructions cycles" adds them.
#
# Per sample means per round trip (latency: each round trip is one ping and
# one echo) or per sample received (throughput). Set-up, discovery and
# teardown are not work per sample: each cell runs twice, SHORT and LONG
# seconds (default 3 and 9), and the figure is the difference of the counts
# over the difference of the samples (round trips or samples received, as
# each tool reports them), which cancels every fixed cost and leaves the
# steady state. Ours is the same binary and flags as the bench scripts'.
#
# Cells (SUBJECTS, default all of them; KINDS lat tp; SIZES 64 1024):
#   udp        ours --wait block             vs sockperf ping-pong (udp, blocking; latency only)
#   tcp        ours --wait block             vs sockperf ping-pong --tcp (latency only)
#   cyclonedds ours defaults                 vs ddsperf ping/pong, pub/sub (defaults)
#   zenoh      ours defaults, listener       vs bench/zenoh-pingpong (callback, its defaults)
#   iceoryx2   ours --zero-copy --wait busy  vs bench/iceoryx2-pingpong (its default: loan, busy poll)
#   fastdds    ours --receive listener       vs bench/fastdds-ref (listener, its default), both at the binding's defaults (udp+shm, best effort)
#   iceoryx    ours --zero-copy --wait busy  vs bench/iceoryx-ref (polling, as iceperf), RouDi
#              counted on both sides (ours starts its own as a child)
#   connext    ours --receive listener       vs bench/connext-ref (listener, on the XML
#              applications the binding wrote for the same test)
# A line per counter: subject kind size counter ours ref ours/ref and `ok`
# when ours <= ref (a count within 2 % of the reference's, or within 0.005
# per sample, is `ok` too: the Δ of two runs carries that much), `MORE`
# otherwise; first the samples of the Δ and their rate per second of it
# (the round-trip rate: its inverse is the mean round trip, the figure that
# needs no percentile method to compare). cpu-us is a time, shown unmarked.
# Last, a tab-separated line per cell for bench/table.sh (COUNTS=FILE):
# verdict SUBJECT KIND LABEL REF SIZE ok|MORE:counter,... (LABEL and REF
# those of the bench script's row of the same mode), judged on the totals
# (syscalls, futex waits and wakes, switches, faults, allocations): a call by
# name may trade for another (tcp's sendmsg for sockperf's sendto).
#
# usage: [SUBJECTS="udp tcp cyclonedds zenoh iceoryx2 iceoryx fastdds connext"] [KINDS="lat tp"]
#        [SIZES="64 1024"] [NAMES="sendto recvfrom ..."] bench/counts.sh [SHORT LONG]
set -euo pipefail
cd "$(dirname "$0")/.."
short=${1:-3}
long=${2:-9}
subjects=${SUBJECTS:-udp tcp cyclonedds zenoh iceoryx2 iceoryx fastdds connext}
kinds=${KINDS:-lat tp}
sizes=${SIZES:-64 1024}
names=${NAMES:-sendto sendmsg sendmmsg recvfrom recvmsg recvmmsg read write poll ppoll epoll_wait epoll_pwait select pselect6 nanosleep clock_nanosleep sched_yield}
. bench/lib/common.sh
need perf linux-perf
[ "$(id -u)" = 0 ] || { echo "bench/counts.sh: run as root (perf probe on glibc's malloc, kernel tracepoints)" >&2; exit 1; }
libc=$(ldd "$bin" | sed -n 's/.*libc\.so\.6 => \([^ ]*\).*/\1/p')
[ -n "$libc" ] || { echo "bench/counts.sh: glibc not found in ldd $bin" >&2; exit 1; }
probes=()
for f in malloc calloc realloc; do
    perf probe -q -x "$libc" --add "pubsubperf_$f=$f" 2>/dev/null || perf probe -l 2>/dev/null | grep -q "probe_libc:pubsubperf_$f" \
        || { echo "bench/counts.sh: perf probe on $libc's $f failed" >&2; exit 1; }
    probes+=("probe_libc:pubsubperf_$f")
done
remove_probes() { perf probe -q -d 'probe_libc:pubsubperf_*' 2>/dev/null || true; bench_cleanup; }
trap remove_probes EXIT

# The events in order, and each one's label (one event may appear twice,
# with different filters).
ev=() labels=()
add() { labels+=("$1"); shift; ev+=("$@"); }
add syscalls -e raw_syscalls:sys_enter
add futex-wait -e syscalls:sys_enter_futex --filter 'op == 0 || op == 128 || op == 9 || op == 137 || op == 393 || op == 265'
add futex-wake -e syscalls:sys_enter_futex --filter 'op == 1 || op == 129 || op == 10 || op == 138'
for n in $names; do add "$n" -e "syscalls:sys_enter_$n"; done
add cs -e context-switches
add cs-invol -e sched:sched_switch --filter 'prev_state == 0'
add faults -e page-faults
add migrations -e cpu-migrations
add cpu-ms -e task-clock
for p in "${probes[@]}"; do add "${p#probe_libc:pubsubperf_}" -e "$p"; done
for e in ${EXTRA_EVENTS:-}; do add "$e" -e "$e"; done

# counted OUT CMD...: CMD under perf stat, its counts (CSV) into OUT.
counted() { local out=$1; shift; perf stat -x, -o "$out" "${ev[@]}" -- "$@"; }

# end_counted PID SIG: sends SIG to the program a background `counted` (PID,
# the subshell running it) runs, so that perf stat sees it end and writes.
end_counted() {
    local p
    for p in $(pgrep -P "$1"); do pkill "-$2" -P "$p" 2>/dev/null || true; done
}

# sum_counts FILE...: "label value" lines, the files summed, derived
# counters added (cs-vol, malloc as the sum of the three, cpu-us).
sum_counts() {
    python3 - "${labels[*]}" "$@" <<'PY'
import sys
labels = sys.argv[1].split()
tot = [0.0] * len(labels)
for f in sys.argv[2:]:
    rows = [l.split(",") for l in open(f) if l.strip() and not l.startswith("#")]
    assert len(rows) == len(labels), f"{f}: {len(rows)} counters, expected {len(labels)}"
    for i, r in enumerate(rows):
        tot[i] += float(r[0]) if r[0] not in ("<not counted>", "<not supported>", "") else float("nan")
c = dict(zip(labels, tot))
c["cs-vol"] = c.pop("cs") - c["cs-invol"]
c["malloc"] = c.pop("malloc") + c.pop("calloc") + c.pop("realloc")
c["cpu-us"] = c.pop("cpu-ms") * 1000
for k, v in c.items():
    print(k, v)
PY
}

# Each subject's runs: ours_CMD and ref_CMD, called as FN KIND SIZE SECS
# OUTDIR; each leaves count files OUTDIR/*.csv and prints the samples (round
# trips or samples received).
ours_run() {
    local kind=$1 size=$2 secs=$3 d=$4 test=latency
    shift 4
    [ "$kind" = tp ] && test=throughput
    # No warm-up: the results then count every round trip or sample of
    # the run, as the divisor must (a warm-up's samples, left out of the
    # count, would be charged to the others when the two runs' warm-ups
    # went at different rates: 2-5 % here with 1 s).
    counted "$d/ours.csv" "$bin" "$test" --binding "$subject" --size "$size" --duration "${secs}s" --cpu 0,1 \
        --warmup 0s -q --no-save --json "$d/ours.json" "$@" > /dev/null
    if [ "$kind" = lat ]; then json "$d/ours.json" "r[0]['latency_ns']['count']"; else json "$d/ours.json" "r[0]['throughput']['received']"; fi
}
samples_of() { sed -n 's/.*samples=\([0-9]*\).*/\1/p' "$1" | tail -n 1; }
port=$((20000 + RANDOM % 20000))

ours_udp() { ours_run "$@" --wait block; }
ref_udp() { sockperf_run "$@" ""; }
ours_tcp() { ours_run "$@" --wait block; }
ref_tcp() { sockperf_run "$@" --tcp; }
sockperf_run() {
    local kind=$1 size=$2 secs=$3 d=$4 proto=$5
    port=$((port + 1))
    counted "$d/srv.csv" taskset -c 1 sockperf server $proto -i 127.0.0.1 -p "$port" > "$d/srv.txt" 2>&1 &
    local srv=$!
    peers=("$srv")
    sleep 0.5
    counted "$d/cli.csv" taskset -c 0 sockperf ping-pong $proto -i 127.0.0.1 -p "$port" -m "$size" -t "$secs" > "$d/cli.txt" 2>&1 || true
    end_counted "$srv" INT
    wait "$srv" 2>/dev/null || true
    peers=()
    sed -n 's/.*\[Total Run\].*ReceivedMessages=\([0-9]*\).*/\1/p' "$d/cli.txt" | tail -n 1
}

ours_cyclonedds() { ours_run "$@"; }
ref_cyclonedds() {
    local kind=$1 size=$2 secs=$3 d=$4 a=ping b=pong
    [ "$kind" = tp ] && { a=pub; b=sub; }
    local domain=$((RANDOM % 200 + 20))
    counted "$d/b.csv" taskset -c 1 ddsperf -i "$domain" -D $((secs + 3)) "$b" > "$d/b.txt" 2>&1 &
    peers=($!)
    counted "$d/a.csv" taskset -c 0 ddsperf -i "$domain" -D $((secs + 1)) "$a" size "$size" > "$d/a.txt" 2>&1 || true
    [ "$kind" = lat ] && end_counted "${peers[0]}" INT
    wait "${peers[0]}" 2>/dev/null || true
    peers=()
    if [ "$kind" = lat ]; then
        sed -n 's/.* size [0-9]* mean .* cnt \([0-9]*\).*/\1/p' "$d/a.txt" | awk '{ s += $1 } END { print s }'
    else
        sed -n 's/.* size [0-9]* total \([0-9]*\) lost .*/\1/p' "$d/b.txt" | tail -n 1
    fi
}

# As zenoh_vs_ref.sh's lat:default and tp:default.
ours_zenoh() { if [ "$1" = lat ]; then ours_run "$@" --receive listener; else ours_run "$@"; fi; }
ref_zenoh() {
    local kind=$1 size=$2 secs=$3 d=$4 test=latency
    [ "$kind" = tp ] && test=throughput
    local mode=(--recv callback --wait block)
    [ "$kind" = tp ] && mode=(--recv callback --express false)
    counted "$d/ref.csv" "$zenoh_pp" --test "$test" --size "$size" --duration "$secs" --cpu 0,1 "${mode[@]}" > "$d/ref.txt" 2>&1 || true
    samples_of "$d/ref.txt"
}

ours_iceoryx2() { ours_run "$@" --zero-copy --wait busy --receive-queue 256; }
ref_iceoryx2() {
    local kind=$1 size=$2 secs=$3 d=$4 test=latency
    [ "$kind" = tp ] && test=throughput
    counted "$d/ref.csv" "$iox2_pp" --test "$test" --size "$size" --duration "$secs" --cpu 0,1 --wait busy > "$d/ref.txt" 2>&1 || true
    samples_of "$d/ref.txt"
}

# Both at the binding's defaults, which are Fast DDS LatencyTest's: shared
# memory beside UDPv4, best effort.
ours_fastdds() { ours_run "$@" --receive listener; }
ref_fastdds() {
    local kind=$1 size=$2 secs=$3 d=$4 a=ping b=pong
    [ "$kind" = tp ] && { a=pub; b=sub; }
    local domain=$((RANDOM % 200 + 20))
    counted "$d/b.csv" taskset -c 1 "$fastdds_ref" "$b" --size "$size" --domain "$domain" --seconds $((secs + 3)) --transport udp+shm --best-effort > "$d/b.txt" 2>&1 &
    peers=($!)
    counted "$d/a.csv" taskset -c 0 "$fastdds_ref" "$a" --size "$size" --domain "$domain" --seconds "$secs" --transport udp+shm --best-effort > "$d/a.txt" 2>&1 || true
    [ "$kind" = lat ] && end_counted "${peers[0]}" TERM
    wait "${peers[0]}" 2>/dev/null || true
    peers=()
    if [ "$kind" = lat ]; then awk 'NF == 3 { n = $3 } END { print n }' "$d/a.txt"; else sed -n 's/^total \([0-9]*\) lost .*/\1/p' "$d/b.txt" | tail -n 1; fi
}

ours_iceoryx() { ours_run "$@" --zero-copy --wait busy; }
# iox_ref with its own RouDi, RouDi counted too (ours starts its RouDi as a
# child, which perf stat counts with it): WARMUP 0, so that its samples=
# counts every round trip or sample, as ours does here.
ref_iceoryx() {
    local kind=$1 size=$2 secs=$3 d=$4 a=ping b=pong tag=c$RANDOM n real
    [ "$kind" = tp ] && { a=pub; b=sub; }
    ROUDI_WRAP=(perf stat -x, -o "$d/roudi.csv" "${ev[@]}" --)
    roudi_start >&2
    ROUDI_WRAP=()
    counted "$d/b.csv" "$iox_ref" "$b" "$tag" "$size" "$secs" 0 1 busy > "$d/b.txt" 2> /dev/null &
    local peer=$!
    counted "$d/a.csv" "$iox_ref" "$a" "$tag" "$size" "$secs" 0 0 busy > "$d/a.txt" 2> /dev/null || true
    wait "$peer" 2>/dev/null || true
    # RouDi itself ends, so that its perf stat writes; then the usual stop
    # (reaped, nothing left behind).
    real=$(pgrep -x iox-roudi | head -n 1)
    [ -n "$real" ] && kill -TERM "$real" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$roudi_pid" 2>/dev/null || break; sleep 0.1; done
    roudi_stop >&2
    if [ "$kind" = lat ]; then n=$(samples_of "$d/a.txt"); else n=$(samples_of "$d/b.txt"); fi
    echo "$n"
}

ours_connext() { ours_run "$@" --receive listener; }
# connext_ref (bench/connext-ref, Connector's native path, a listener as
# the binding's default) on the XML applications a short uncounted run of
# ours wrote for the same test (as bench/connext_vs_ref.sh), WARMUP 0.
ref_connext() {
    local kind=$1 size=$2 secs=$3 d=$4 a=ping b=pong aw ar bw br
    [ "$kind" = tp ] && { a=pub; b=sub; }
    read -r aw ar bw br <<<"$(connext_xml "$kind" "$size" listener)"
    counted "$d/b.csv" "$connext_ref" "$b" "$size" "$secs" 0 1 listener "$bw" "$br" > "$d/b.txt" 2> /dev/null &
    local peer=$!
    counted "$d/a.csv" "$connext_ref" "$a" "$size" "$secs" 0 0 listener "$aw" "$ar" > "$d/a.txt" 2> /dev/null || true
    wait_peer "$peer" 20 2>/dev/null || true
    if [ "$kind" = lat ]; then samples_of "$d/a.txt"; else samples_of "$d/b.txt"; fi
}

for subject in $subjects; do
    case $subject in
        udp | tcp) need sockperf sockperf ;;
        cyclonedds) need ddsperf cyclonedds-tools ;;
        zenoh) zenoh_pp=$(build_ref zenoh-pingpong) ;;
        iceoryx2) iox2_pp=$(build_ref iceoryx2-pingpong) ;;
        iceoryx)
            need iox-roudi iceoryx
            . bench/lib/roudi.sh
            roudi_none
            iox_ref=$tmp/iox_ref
            cc -O2 -Wall -Wextra -I/usr/include/iceoryx/v2.0.3 -o "$iox_ref" bench/iceoryx-ref/iox_ref.c -liceoryx_binding_c
            ;;
        fastdds)
            need g++ g++
            fastdds_ref=$tmp/fastdds-ref
            [ -x "$fastdds_ref" ] || g++ -O2 -std=c++17 -o "$fastdds_ref" bench/fastdds-ref/ref.cpp -lfastrtps -lfastcdr -lpthread
            ;;
        connext)
            connext_ref=$tmp/connext_ref
            connext_ref_build "$connext_ref"
            ;;
        *) echo "SUBJECTS: no reference known for $subject (udp tcp cyclonedds zenoh iceoryx2 iceoryx fastdds connext)" >&2; exit 2 ;;
    esac
done

# The bench script's mode label and reference name of SUBJECT's KIND cell
# (bench/lib/table.py joins the verdict lines on them).
cell_label() {
    case $1:$2 in
        udp:lat | tcp:lat) echo "block sockperf" ;;
        cyclonedds:lat) echo "listener ddsperf" ;;
        cyclonedds:tp) echo "tp ddsperf" ;;
        zenoh:*) echo "$2:default zenoh-pingpong" ;;
        iceoryx2:*) echo "zc-busy iceoryx2-pingpong" ;;
        iceoryx:*) echo "busy iox_ref" ;;
        fastdds:*) echo "listener fastdds-ref" ;;
        connext:*) echo "listener connext_ref" ;;
    esac
}

# cell WHO KIND SIZE: both durations, then "label per-sample" lines.
cell() {
    local who=$1 kind=$2 size=$3 n1 n2
    mkdir -p "$tmp/$who.1" "$tmp/$who.2"
    rm -f "$tmp/$who".[12]/*
    n1=$("${who}_$subject" "$kind" "$size" "$short" "$tmp/$who.1")
    n2=$("${who}_$subject" "$kind" "$size" "$long" "$tmp/$who.2")
    sum_counts "$tmp/$who.1"/*.csv > "$tmp/$who.c1"
    sum_counts "$tmp/$who.2"/*.csv > "$tmp/$who.c2"
    python3 - "$tmp/$who.c1" "$tmp/$who.c2" "${n1:-0}" "${n2:-0}" <<'PY'
import sys
a = dict(l.split() for l in open(sys.argv[1]))
b = dict(l.split() for l in open(sys.argv[2]))
n1, n2 = float(sys.argv[3]), float(sys.argv[4])
dn = n2 - n1
for k in a:
    print(k, (float(b[k]) - float(a[k])) / dn if dn > 0 else float("nan"), int(dn))
PY
}

echo "work per sample (latency: per round trip; throughput: per sample received), Δ of a ${short} s and a ${long} s run, both sides of each tool counted"
printf '%-10s %-4s %6s %-14s %12s %12s %8s\n' subject kind size counter ours ref ours/ref
for subject in $subjects; do
    for kind in $kinds; do
        # sockperf's throughput test is best effort and loses samples at full
        # speed: per sample received would charge the loss to each tool.
        [[ $subject:$kind == @(udp|tcp):tp ]] && continue
        for size in $sizes; do
            cell ours "$kind" "$size" > "$tmp/ours.per"
            cell ref "$kind" "$size" > "$tmp/ref.per"
            python3 - "$subject" "$kind" "$size" "$tmp/ours.per" "$tmp/ref.per" "$((long - short))" "$(cell_label "$subject" "$kind")" <<'PY'
import math, sys
s, k, z = sys.argv[1:4]
o = {l.split()[0]: (float(l.split()[1]), l.split()[2]) for l in open(sys.argv[4])}
r = {l.split()[0]: (float(l.split()[1]), l.split()[2]) for l in open(sys.argv[5])}
dt = float(sys.argv[6])
more = []
no, nr = int(o["syscalls"][1]), int(r["syscalls"][1])
print(f"{s:<10} {k:<4} {z:>6} {'samples Δ':<14} {no:>12} {nr:>12}")
print(f"{s:<10} {k:<4} {z:>6} {'per s':<14} {no / dt:12.0f} {nr / dt:12.0f} {no / nr if nr else float('nan'):8.2f}")
for c in o:
    a, b = o[c][0], r[c][0]
    if abs(a) < 0.0005 and abs(b) < 0.0005 or math.isnan(a) and math.isnan(b):
        continue
    ratio = f"{a / b:8.2f}" if abs(b) >= 0.0005 else f"{'-':>8}"
    # CPU time is a time, not a count: shown, never marked.
    ok = "" if c == "cpu-us" else "ok" if a <= b or a - b <= max(0.02 * b, 0.005) else "MORE"
    # The verdict is on the totals; a call by name may trade for another
    # (tcp: our sendmsg for sockperf's sendto), shown but not judged.
    if ok == "MORE" and c in ("syscalls", "futex-wait", "futex-wake", "cs-vol", "cs-invol", "faults", "malloc"):
        more.append(c)
    print(f"{s:<10} {k:<4} {z:>6} {c:<14} {a:12.3f} {b:12.3f} {ratio} {ok}")
label, ref = sys.argv[7].split()
print("\t".join(["verdict", s, k, label, ref, z, "MORE:" + ",".join(more) if more else "ok"]))
PY
        done
    done
done
