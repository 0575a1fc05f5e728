"""CPU samples of `perf script -F comm,cpu,ip,sym,dso` -> CPU time per owner.

  perf script ... | python3 bench/lib/cpu_split.py FREQ TOOL COUNT TOP

FREQ: perf record's sampling rate (samples per second per core); TOOL: the
basename of the command that ran (its own code counts as `tool`); COUNT: the
samples the run handled (0: no per-sample column); TOP: symbols listed per
owner. Each perf sample stands for 1/FREQ s of one core; idle is the kernel's
idle task (comm "swapper"). See bench/cpu_split.sh for the owners.
"""
import collections
import re
import sys

LINE = re.compile(r"^\s*(.+?)\s+\[(\d+)\]\s+([0-9a-f]+)\s+(.*?)\s*\(([^()]*)\)\s*$")
MIDDLEWARE_LIBS = ("libddsc", "libfastrtps", "libfastcdr", "libiceoryx", "libfoonathan")
RUNTIME_LIBS = ("libc.so", "libm.so", "ld-linux", "libstdc++", "libgcc_s", "libpthread")
RUST_STD = ("std", "core", "alloc", "__rust", "rust_begin_unwind")
RUST_MIDDLEWARE = ("zenoh", "iceoryx2", "tokio", "async_", "flume", "crossbeam", "quinn",
                   "rustls", "ring", "lz4", "uhlc", "petgraph", "event_listener",
                   "concurrent_queue", "futures")
OWNERS = ("tool", "middleware", "runtime (libc, libstdc++)", "rust std", "kernel", "vdso",
          "other", "idle")


def crate(sym):
    """The first path segment of a demangled Rust symbol (`<a::b as c>::d` -> a)."""
    s = sym.lstrip("<&*_ ")
    s = re.sub(r"^(mut |dyn |const )", "", s)
    return re.split(r"::|<| ", s, maxsplit=1)[0]


def owner(comm, sym, dso, tool):
    if comm == "swapper":
        return "idle"
    if dso.startswith("[kernel"):
        return "kernel"
    if dso == "[vdso]":
        return "vdso"
    base = dso.rsplit("/", 1)[-1]
    if base.startswith(MIDDLEWARE_LIBS):
        return "middleware"
    if base.startswith(RUNTIME_LIBS):
        return "runtime (libc, libstdc++)"
    if base == tool or base.startswith("pubsubperf"):
        c = crate(sym)
        if c == tool.replace("-", "_"):
            return "tool"
        if c in RUST_STD:
            return "rust std"
        if c.startswith(RUST_MIDDLEWARE):
            return "middleware"
        # The rest of the tool's binary: its own crates and dependencies,
        # the C++ shims linked into pubsubperf, a C/C++ reference's code.
        return "tool"
    return "other"


def main():
    freq, tool, count, top = float(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    per = collections.Counter()
    syms = collections.defaultdict(collections.Counter)
    cores = collections.defaultdict(collections.Counter)
    for line in sys.stdin:
        m = LINE.match(line)
        if not m:
            continue
        comm, cpu, _, sym, dso = m.groups()
        o = owner(comm, sym, dso, tool)
        per[o] += 1
        cores[int(cpu)][o] += 1
        if o != "idle":
            syms[o][f"{sym} ({dso.rsplit('/', 1)[-1]})"] += 1
    busy = sum(n for o, n in per.items() if o != "idle")
    ms = lambda n: n / freq * 1000  # noqa: E731
    print(f"cpu split of {tool}: {sum(per.values())} perf samples at {freq:.0f} Hz, "
          f"busy {ms(busy):.0f} ms" + (f", {count} samples handled" if count else ""))
    head = f"{'owner':<28}{'cpu ms':>10}{'% busy':>8}" + ("  ns/sample" if count else "")
    head += "".join(f"{'core ' + str(c) + ' ms':>12}" for c in sorted(cores))
    print(head)
    for o in OWNERS:
        n = per.get(o, 0)
        if not n:
            continue
        line = f"{o:<28}{ms(n):>10.1f}{(100 * n / busy if busy and o != 'idle' else 0):>8.1f}"
        if count:
            line += f"{ms(n) * 1e6 / count:>11.1f}" if o != "idle" else f"{'':>11}"
        line += "".join(f"{ms(cores[c].get(o, 0)):>12.1f}" for c in sorted(cores))
        print(line)
    if count:
        print(f"{'busy, all owners':<28}{ms(busy):>10.1f}{100.0:>8.1f}{ms(busy) * 1e6 / count:>11.1f}")
    for o in OWNERS:
        if o == "idle" or not syms.get(o):
            continue
        print(f"top of {o}:")
        for s, n in syms[o].most_common(top):
            print(f"  {100 * n / busy:5.1f} %  {s}")


if __name__ == "__main__":
    main()
