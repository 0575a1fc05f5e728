# A RouDi for a bench script's reference program, started and stopped the
# way pubsubperf's crates/roudi does it for a run of ours: the same mempools
# (crates/roudi/src/config.rs default_pools: every size class up to 256 MiB
# plus 4 KiB headroom, ~1.3 GiB), its own process group, log level warning,
# ready when its log says so; stopped with SIGTERM (SIGKILL after 5 s),
# waited for (reaped), and its files (/dev/shm/iceoryx_mgmt, the user's
# payload segment, /tmp/roudi*, the reference's runtime files /tmp/iox_ref_*) checked
# gone. Source after bench/lib/common.sh (uses $tmp and $peers).
#   roudi_start     starts it, returns once ready (exit 1 with its log if not)
#   roudi_stop      stops and reaps it; exit 1 naming what it left behind
#   roudi_none      exit 1 when any iox-roudi already runs (one per host)
# With ROUDI_WRAP set (an array: a command and its arguments), RouDi runs
# under it; roudi_pid is then the wrapper's.
roudi_pid=
# A command RouDi runs under (bench/counts.sh: perf stat), none by default.
ROUDI_WRAP=()

roudi_none() {
    if pgrep -x iox-roudi > /dev/null; then
        echo "an iox-roudi already runs (pid $(pgrep -x iox-roudi | tr '\n' ' ')): iceoryx allows one per host; stop it and rerun" >&2
        exit 1
    fi
}

roudi_start() {
    local k=1024 m=$((1024 * 1024)) h=4096 s c
    {
        printf '[general]\nversion = 1\n\n[[segment]]\n'
        for s_c in "256 10000" "$((k + 256)) 5000" "$((16 * k + 256)) 1000" \
            "$((128 * k + 256)) 256" "$((m + h)) 64" "$((4 * m + h)) 16" \
            "$((16 * m + h)) 8" "$((64 * m + h)) 3" "$((256 * m + h)) 3"; do
            read -r s c <<< "$s_c"
            printf '\n[[segment.mempool]]\nsize = %s\ncount = %s\n' "$s" "$c"
        done
    } > "$tmp/roudi.toml"
    setsid "${ROUDI_WRAP[@]}" iox-roudi -c "$tmp/roudi.toml" -l warning > "$tmp/roudi.log" 2>&1 &
    roudi_pid=$!
    peers+=("$roudi_pid")
    local i
    for i in $(seq 900); do
        grep -q "RouDi is ready for clients" "$tmp/roudi.log" && return 0
        kill -0 "$roudi_pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "iox-roudi did not get ready: $(tail -n 3 "$tmp/roudi.log" | tr '\n' ' ')" >&2
    exit 1
}

roudi_stop() {
    [ -n "$roudi_pid" ] || return 0
    kill -TERM "$roudi_pid" 2>/dev/null || true
    local i
    for i in $(seq 50); do
        kill -0 "$roudi_pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$roudi_pid" 2>/dev/null || true
    wait "$roudi_pid" 2>/dev/null || true
    peers=("${peers[@]/$roudi_pid/}")
    roudi_pid=
    local left
    left=$(ls -d /dev/shm/iceoryx_mgmt "/dev/shm/$(id -un)" /tmp/roudi /tmp/roudi.lock \
        /tmp/iox-unique-roudi.lock /tmp/iox_ref_* 2>/dev/null || true)
    if [ -n "$left" ]; then
        # Reported as a failure, then removed: nothing of ours may stay.
        echo "the reference's RouDi left: $(echo $left) (removed)" >&2
        rm -f $left
        exit 1
    fi
}
