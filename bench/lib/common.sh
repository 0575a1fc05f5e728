# Shared by the bench/*_vs_*.sh scripts: source it after `cd` to the repo root.
# Sets $bin (the release binary, built if missing) and $tmp (removed on exit,
# after killing any pid listed in $peers and every process still under the
# script), and defines:
#   json FILE EXPR     evaluate EXPR over r = the results file's runs
#   ours_lat FILE      "p50 p99" in us of a pubsubperf results file's first run
#   ours_tp FILE       received samples/s of its first run
#   ours_lat_per_second FILE  "p50 p99" in us as ddsperf computes them: the
#                      count-weighted medians of the 1-second intervals' p50 and p99
#   report KIND LABEL SIZE REFNAME   print the rounds in $tmp/rows and their median
#                      ratio (bench/lib/ratios.py says the row formats and goals)
#   first_of_round R   true when the reference goes first in round R (odd rounds),
#                      so that a drift of the machine does not favour one side
#   need CMD PACKAGE   exit 1 naming the Debian package when CMD is missing
#   build_ref NAME     build the reference cargo project bench/NAME (not a
#                      workspace member) into $CARGO_TARGET_DIR/NAME; prints
#                      the path of its binary
#   connext_ref_build OUT  compile bench/connext-ref/connext_ref.c into OUT
#                      against RTI Connector's libraries (those of
#                      scripts/setup.sh --with-connext, or $PUBSUBPERF_CONNEXT_LIB);
#                      exit 1 naming the command when they are missing
#   connext_xml KIND SIZE MODE   the XML applications of one connext cell
#                      (KIND lat|tp, MODE listener|waitset), from a short run
#                      of ours that keeps them (PUBSUBPERF_CONNEXT_XML_DIR),
#                      made once per cell: prints "AW AR BW BR", the writer
#                      and reader files of side a (ping, pub) and side b
#                      (pong, sub), "-" for none
#   ref_lat FILE       "p50 p99" in us from a reference's "p50_ns=N p99_ns=N"
#                      line; ref_tp FILE: N from its "per_s=N" line; both
#                      print nan when FILE has no such line (a failed run)
#   link_ns            the round trip of a cache line between cores 0 and 1
#                      now, p50 in ns (`pubsubperf calibrate --link-only`:
#                      200 000 round trips, 15-100 ms)
#   linked WHO CMD...  runs CMD (which prints its figures) between two
#                      link_ns readings, kept for `row`; WHO is ours or ref
#   row FIGURES...     appends one round to $tmp/rows: FIGURES, then the link
#                      readings around ours and the reference's last runs
#   alternate REF_CMD... -- OURS_CMD...
#                      $rounds rounds of the two commands (each prints its
#                      figures) into a fresh $tmp/rows, the reference first
#                      in odd rounds (first_of_round), each between link
#                      readings (linked, row); a round whose readings
#                      disagree is set aside and run again, at most
#                      $same_link_tries times (SAME_LINK_TRIES, default 2;
#                      0 keeps every round), so that both tools of a round
#                      are compared on the same link
#   wanted KIND LABEL SIZE REF
#                      true when the script is to measure this cell: always,
#                      unless ONLY_CELLS names a file of cells (one a line,
#                      tab-separated: subject kind label reference size, the
#                      key of bench/lib/table.py; each field a shell pattern,
#                      so `*` takes any), as bench/table.sh's recheck and its
#                      FASTEST=1 pass do; the subject is $BENCH_SUBJECT
#
# Why the link: on a shared VM the host moves the two vCPUs between sibling
# hyperthreads and separate cores while a script runs; a cache line then
# takes about 60 or about 300 ns to cross, and a shared-memory or loopback
# figure changes with it (iceoryx2 64 B throughput 1.1 or 3.5 M/s, in both
# tools). ratios.py prints each round's link and, beside the median of all
# rounds, the median of the rounds in which both tools ran on the same link;
# `alternate` runs a round whose link changed again, and ratios.py prints the
# rounds set aside without counting them.
bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${PUBSUBPERF:-${CARGO_TARGET_DIR:-target}/release/pubsubperf}
[ -x "$bin" ] || cargo build --release -p pubsubperf >&2
tmp=$(mktemp -d)
peers=()
bench_cleanup() {
    local p
    for p in "${peers[@]}"; do kill "$p" 2>/dev/null || true; done
    ended=()
    kill_tree $$
    wait 2>/dev/null || true
    # Not our children (a RouDi takes a second or two to remove its files).
    for p in "${ended[@]}"; do
        for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    done
    rm -rf "$tmp"
}
# Ends every process under PID, deepest first: a peer that a command started
# inside `$(...)` (each `linked` run) is in no $peers of this shell, and a
# script ended by a signal would leave it running.
# Each child is stopped before its own children are ended, so that it cannot
# start another meanwhile; one that is no longer PID's child (the pgrep's own
# subshell, gone by then) is left alone. Each one ended is added to $ended,
# for the cleanup to wait (10 s at most) until it has gone.
kill_tree() {
    local c
    for c in $(pgrep -P "$1"); do
        [ "$(ps -o ppid= -p "$c" 2>/dev/null | tr -d ' ')" = "$1" ] || continue
        kill -STOP "$c" 2>/dev/null || continue
        kill_tree "$c"
        kill -TERM "$c" 2>/dev/null || true
        kill -CONT "$c" 2>/dev/null || true
        ended+=("$c")
    done
}
trap bench_cleanup EXIT

# wait_peer PID SECS: waits for the background peer PID to end, at most
# SECS seconds; then ends it (TERM, KILL a second later) and fails. A
# reference whose partner gave up must not hold the script: a connext_ref
# pong whose ping had given up ("nothing received within 30 s") was still
# running nine minutes later.
wait_peer() {
    local pid=$1 left=$(( $2 * 10 ))
    while kill -0 "$pid" 2>/dev/null && (( left-- > 0 )); do sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
        echo "bench: peer $pid still running $2 s after its partner ended; ended" >&2
        kill -TERM "$pid" 2>/dev/null || true
        sleep 1
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        return 1
    fi
    wait "$pid"
}

json() {
    python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runs']; print(eval(sys.argv[2]))" "$1" "$2"
}
ours_lat() { json "$1" "f\"{r[0]['latency_ns']['p50']/1000} {r[0]['latency_ns']['p99']/1000}\""; }
ours_tp() { json "$1" "r[0]['throughput']['samples_per_s']"; }
# "p50 p99" in us as ddsperf reports them: the medians of the 1-second
# intervals' p50 and p99, weighted by the intervals' counts.
ours_lat_per_second() {
    PYTHONPATH="$bench_dir/lib" python3 - "$1" <<'PY'
import json, sys
from wmedian import wmedian
iv = json.load(open(sys.argv[1]))["runs"][0].get("intervals", [])
print(wmedian([(i.get("latency_p50_ns"), i["received"]) for i in iv]) / 1000,
      wmedian([(i.get("latency_p99_ns"), i["received"]) for i in iv]) / 1000)
PY
}
wanted() {
    [ -n "${ONLY_CELLS:-}" ] || return 0
    local s k l r z
    while IFS=$'\t' read -r s k l r z; do
        # Unquoted right-hand sides: each field is a pattern.
        [[ ${BENCH_SUBJECT:-?} == $s && $1 == $k && $2 == $l && $3 == $z && $4 == $r ]] && return 0
    done < "$ONLY_CELLS"
    return 1
}
report() { python3 "$bench_dir/lib/ratios.py" "$tmp/rows" "$@"; }
first_of_round() { (( $1 % 2 )); }
need() { command -v "$1" >/dev/null || { echo "$1 missing: apt-get install $2" >&2; exit 1; }; }
build_ref() {
    local t=${CARGO_TARGET_DIR:-target}/$1
    CARGO_TARGET_DIR=$t cargo build --release -q --manifest-path "$bench_dir/$1/Cargo.toml" >&2
    echo "$t/release/$1"
}
ref_lat() {
    sed -n 's/.*p50_ns=\([0-9]*\).*p99_ns=\([0-9]*\).*/\1 \2/p' "$1" \
        | awk 'BEGIN { r = "nan nan" } { r = $1 / 1000 " " $2 / 1000 } END { print r }'
}
ref_tp() { sed -n 's/^per_s=\([0-9.]*\).*/\1/p' "$1" | awk 'BEGIN { r = "nan" } { r = $1 } END { print r }'; }
link_ns() {
    "$bin" calibrate --link-only --no-save --json "$tmp/link.json" > /dev/null 2>&1 \
        && json_file "$tmp/link.json" "round(d['cache_line']['rtt_p50_ns'])" || echo nan
}
json_file() {
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"
}
linked() {
    local who=$1 before out
    shift
    before=$(link_ns)
    out=$("$@")
    echo "$before $(link_ns)" > "$tmp/link.$who"
    echo "$out"
}
row() { echo "$* | $(cat "$tmp/link.ours") $(cat "$tmp/link.ref")" >> "$tmp/rows"; }
same_link_tries=${SAME_LINK_TRIES:-2}
[[ $same_link_tries =~ ^[0-9]+$ ]] || { echo "SAME_LINK_TRIES=$same_link_tries: expected a whole number of tries (0 keeps every round)" >&2; exit 2; }
same_link_tries=$(( 10#$same_link_tries ))
# The commands run inside this function and read the scripts' globals (a
# script's `ref` binary, its `ours` flags): its own names all start with
# _alt_ so that none hides one of those.
alternate() {
    local _alt_n=0 _alt_r=1 _alt_tries=0 _alt_o _alt_d
    while (( _alt_n < $# )) && [ "${@:_alt_n+1:1}" != -- ]; do
        _alt_n=$(( _alt_n + 1 ))
    done
    (( _alt_n > 0 && _alt_n + 2 <= $# )) || { echo "alternate: expected REF_CMD... -- OURS_CMD..." >&2; exit 2; }
    : > "$tmp/rows"
    while (( _alt_r <= rounds )); do
        # Alternate which tool goes first, so that a drift of the machine
        # (other load, the vCPUs moving) does not always favour one.
        if first_of_round "$_alt_r"; then _alt_d=$(linked ref "${@:1:_alt_n}"); fi
        _alt_o=$(linked ours "${@:_alt_n+2}")
        if ! first_of_round "$_alt_r"; then _alt_d=$(linked ref "${@:1:_alt_n}"); fi
        row "$_alt_o $_alt_d"
        if (( _alt_tries < same_link_tries )) && python3 "$bench_dir/lib/ratios.py" --changed "$tmp/rows"; then
            sed -i '$ s/^/set-aside /' "$tmp/rows"
            _alt_tries=$(( _alt_tries + 1 ))
        else
            _alt_r=$(( _alt_r + 1 ))
            _alt_tries=0
        fi
    done
}
connext_ref_build() {
    local lib=${PUBSUBPERF_CONNEXT_LIB:-/usr/local/lib/pubsubperf/connext/linux-x64}
    [ -f "$lib/librtiddsconnector.so" ] \
        || { echo "RTI Connector's libraries missing in $lib: scripts/setup.sh --with-connext (or PUBSUBPERF_CONNEXT_LIB=DIR)" >&2; exit 1; }
    cc -O2 -Wall -Wextra -o "$1" "$bench_dir/connext-ref/connext_ref.c" \
        -L"$lib" -lrtiddsconnector -lnddsc -lnddscore -Wl,-rpath,"$lib" -lpthread
}
connext_xml() {
    local kind=$1 size=$2 mode=$3 dir=$tmp/connext-xml-$1-$2-$3 test=latency receive=listener
    [ "$kind" = tp ] && test=throughput
    [ "$mode" = waitset ] && receive=thread
    if [ ! -d "$dir" ]; then
        mkdir -p "$dir"
        PUBSUBPERF_CONNEXT_XML_DIR=$dir "$bin" "$test" -b connext --receive "$receive" --size "$size" \
            --duration 1s --warmup 0s --cpu 0,1 -q --no-save > /dev/null 2> "$dir.err" \
            || { cat "$dir.err" >&2; exit 1; }
    fi
    _connext_one() {
        local f=("$dir"/*"$1")
        [ ${#f[@]} = 1 ] && [ -f "${f[0]}" ] || { echo "connext_xml: expected one *$1 in $dir: ${f[*]}" >&2; exit 1; }
        echo "${f[0]}"
    }
    if [ "$kind" = lat ]; then
        echo "$(_connext_one _ping.writer.xml) $(_connext_one _echo0.reader.xml) $(_connext_one _echo0.writer.xml) $(_connext_one _ping.reader.xml)"
    else
        echo "$(_connext_one _data.writer.xml) - - $(_connext_one _data.reader.xml)"
    fi
}
