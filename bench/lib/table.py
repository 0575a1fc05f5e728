"""The median ratios of bench/*_vs_*.sh runs -> one Markdown table.

  python3 bench/lib/table.py TABLE.tsv [ROUNDS]
  python3 bench/lib/table.py --recheck TABLE.tsv
      prints the cells not clearly met (bench/table.sh measures them again),
      one a line: subject kind label reference size, tab-separated

TABLE.tsv is what bench/lib/ratios.py appends when BENCH_TABLE is set (one
line per binding, kind, mode, reference and size; bench/table.sh sets it).
One table row per binding, kind, mode and reference, one column per size:
latency cells are "p50 / p99", throughput cells one ratio; a ratio that
misses its goal (latency <= 1.05, throughput >= 0.95) is in bold, and a cell
whose median counts fewer than ROUNDS rounds (a run that gave no figure)
says how many it counts (without ROUNDS: fewer than the row's fullest cell).
Then the same table over the rounds in which both tools ran on the same
link between the two cores (bench/lib/common.sh says why), for the rows
that read the link; there every cell says how many rounds it counts.

A cell reported more than once (bench/table.sh's recheck runs it again)
pools the rounds of all its reports: its ratios are the medians over every
round of every report, and it says how many rounds it counts ("(9 rounds)").
A line without its rounds (a table.tsv written before they were kept) is
taken as it is, the last such line of a cell winning.

With BENCH_COUNTS naming a bench/counts.sh output (bench/table.sh's
COUNTS), a cell that was counted says whether its work per sample is at or
under the reference's ("counts ≤ ref") or which totals are above; a cell
whose counts are at or under and whose intervals say met or "holds the
goal" is settled ("(settled by counts)" where a ratio missed) and --recheck
leaves it out: more rounds of it would only sample the VM's noise.

A ratio whose cell counts six rounds or more has the 95 % interval of its
median (bench/lib/ratios.py's `median_interval`); when the goal lies inside
that interval the ratio is marked with a dagger: its rounds do not tell it
from the goal, whichever side of the goal its median fell. Under the table,
how many of the cells with a figure met every goal, and of those that
missed, how many missed only within their rounds' noise, beyond it, or with
too few rounds for an interval.

Which cells are measured again (--recheck): a latency cell whose p50 or p99
ratio is above LAT_GOAL - MARGIN, a throughput cell whose ratio is below
TP_GOAL + MARGIN, and a cell without a figure. So a cell is settled by its
first rounds only when it meets its goal by more than MARGIN; one near its
goal on either side, or missing it, gets more rounds before its verdict
(three rounds on this VM spread by more than the goal's 5 %).
"""
import math
import os
import statistics
import sys

from ratios import LAT_GOAL, TP_GOAL, beyond_noise, median_interval, series  # the goals the scripts' own lines are judged by

MARGIN = 0.05
# Sizes are put in the column of the nearest power of two's name: the socket
# scripts run UDP's largest payload (65507 B) and sockperf's largest message
# (1048575 B) where the others run 64 KiB and 1 MiB.
COLUMNS = [(64, "64 B"), (1024, "1 KiB"), (65536, "64 KiB"), (1 << 20, "1 MiB"), (16 << 20, "16 MiB"), (64 << 20, "64 MiB")]


def column(size):
    return min(range(len(COLUMNS)), key=lambda i: abs(math.log(size) - math.log(COLUMNS[i][0])))


DAGGER = "†"


def goal(kind):
    return (lambda r: r <= LAT_GOAL) if kind == "lat" else (lambda r: r >= TP_GOAL)


def noise_verdicts(kind, rounds):
    """Per series, what its interval says of the goal (ratios.py's beyond_noise):
    "met", "NOT met", "holds the goal", or None without rounds or with too few."""
    k = 2 if kind == "lat" else 1
    if rounds is None:
        return [None] * k
    return [beyond_noise(median_interval(series(rounds, i)), goal(kind)) for i in range(k)]


def within_noise(kind, rounds):
    """Per series: True when the goal lies inside the interval of the median over the rounds."""
    return [v == "holds the goal" for v in noise_verdicts(kind, rounds)]


def cell(kind, ratios, counted, most, always, pooled=False, noisy=None):
    def one(r, ok, dagger):
        if math.isnan(r):
            return "no figure"
        text = f"{r:.3f}" if ok(r) else f"**{r:.3f}**"
        return text + (DAGGER if dagger else "")

    noisy = noisy or [False] * len(ratios)
    text = " / ".join(one(r, goal(kind), d) for r, d in zip(ratios, noisy))
    if pooled:
        text += f" ({counted} round{'' if counted == 1 else 's'})"
    elif 0 < counted < most or (always and counted):
        text += f" ({counted} of {most})"
    return text


def parse_rounds(field, k):
    """[(ratios, same_link)] of a "rounds:" field."""
    out = []
    for r in field.removeprefix("rounds:").split(";"):
        if r:
            v = r.split(",")
            out.append((list(map(float, v[:k])), v[k] == "1"))
    return out


def medians(rounds, k):
    """Per-series medians of rounds' ratios (nan left out; nan when none is left)."""
    out = []
    for i in range(k):
        xs = [rs[i] for rs, _ in rounds if not math.isnan(rs[i])]
        out.append(statistics.median(xs) if xs else float("nan"))
    return out


def pool(reports, k):
    """One cell (counted, ratios, same_counted, same_ratios, pooled, rounds) from its
    reports; rounds None when a report did not keep them."""
    if len(reports) > 1 and all(r[4] is not None for r in reports):
        rounds = [x for r in reports for x in r[4]]
        same = [x for x in rounds if x[1]]
        return len(rounds), medians(rounds, k), len(same), medians(same, k), True, rounds
    n, ratios, same_n, same, rounds = reports[-1]
    return n, ratios, same_n, same, False, rounds


def read(path):
    """{(subject, kind, label, ref): {size: (counted, ratios, same_counted, same_ratios, pooled, rounds)}}"""
    reports = {}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) < 8:
            continue
        subject, kind, label, ref, size, n = f[:6]
        k = 2 if kind == "lat" else 1
        ratios = list(map(float, f[6 : 6 + k]))
        same_n = int(f[6 + k])
        same = list(map(float, f[7 + k : 7 + 2 * k]))
        rounds = parse_rounds(f[7 + 2 * k], k) if len(f) > 7 + 2 * k else None
        reports.setdefault((subject, kind, label, ref), {}).setdefault(int(size), []).append((int(n), ratios, same_n, same, rounds))
    return {key: {size: pool(r, 2 if key[1] == "lat" else 1) for size, r in cells.items()} for key, cells in reports.items()}


def read_counts(path):
    """{(subject, kind, label, ref, size): "ok" or "MORE:counter,..."} from the
    verdict lines of a bench/counts.sh output ($BENCH_COUNTS; {} without one)."""
    out = {}
    if not path:
        return out
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) == 7 and f[0] == "verdict":
            out[(f[1], f[2], f[3], f[4], int(f[5]))] = f[6]
    return out


COUNTS = read_counts(os.environ.get("BENCH_COUNTS"))


def counts_mark(key, size):
    """What the cell's counts say beside its ratio: "" when not counted."""
    v = COUNTS.get((*key, size))
    if v is None:
        return ""
    return " · counts ≤ ref" if v == "ok" else f" · counts above ref: {v.removeprefix('MORE:')}"


def settled(kind, key, size, rounds):
    """True when counting settles a cell: its counts are at or under the
    reference's and no series' interval says NOT met (each met or holds the
    goal). More rounds of it would only sample the VM's noise."""
    if COUNTS.get((*key, size)) != "ok":
        return False
    verdicts = noise_verdicts(kind, rounds)
    return all(v in ("met", "holds the goal") for v in verdicts)


def unsettled(kind, ratios):
    """True when a cell is to be measured again (see the module's text)."""
    if kind == "lat":
        return any(math.isnan(r) or r > LAT_GOAL - MARGIN for r in ratios)
    return math.isnan(ratios[0]) or ratios[0] < TP_GOAL + MARGIN


def recheck(path):
    for (subject, kind, label, ref), cells in read(path).items():
        for size, (_, ratios, _, _, _, rounds) in sorted(cells.items()):
            if unsettled(kind, ratios) and not settled(kind, (subject, kind, label, ref), size, rounds):
                print("\t".join([subject, kind, label, ref, str(size)]))


def sizes_used(rows):
    """{column: set of sizes} over all rows."""
    used = {}
    for cells in rows.values():
        for size in cells:
            used.setdefault(column(size), set()).add(size)
    return used


def table(rows, used, same, rounds):
    cols = sorted(used)
    head = ["binding", "test", "mode", "reference"] + [COLUMNS[c][1] for c in cols]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (subject, kind, label, ref), cells in rows.items():
        by_col = {column(s): v for s, v in cells.items()}
        if same and not any(v[2] for v in by_col.values()):
            continue
        most = rounds or max((v[0] for v in by_col.values() if not v[4]), default=0)
        mode = "default" if label in ("tp", ref) else label  # the scripts' labels for one-mode rows
        line = [subject, "latency p50 / p99" if kind == "lat" else "throughput", mode, ref]
        for c in cols:
            if c not in by_col:
                line.append("")
                continue
            n, ratios, same_n, same_ratios, pooled, cell_rounds = by_col[c]
            if same:
                same_rounds = None if cell_rounds is None else [x for x in cell_rounds if x[1]]
                line.append(cell(kind, same_ratios, same_n, most, True, pooled, within_noise(kind, same_rounds)))
            else:
                text = cell(kind, ratios, n, most, False, pooled, within_noise(kind, cell_rounds))
                size = next(s for s in cells if column(s) == c)
                text += counts_mark((subject, kind, label, ref), size)
                if settled(kind, (subject, kind, label, ref), size, cell_rounds) and not all(map(goal(kind), ratios)):
                    text += " (settled by counts)"
                line.append(text)
        out.append("| " + " | ".join(line) + " |")
    return out


def tally(rows):
    """The line under the table: of the cells with a figure, those that met every
    goal, and of those that missed, how many missed only within their rounds'
    noise, beyond it, or with too few rounds for an interval."""
    met = noisy = beyond = unsure = 0
    for (_, kind, _, _), cells in rows.items():
        for _, ratios, _, _, _, rounds in cells.values():
            if any(math.isnan(r) for r in ratios):
                continue
            misses = [i for i, r in enumerate(ratios) if not goal(kind)(r)]
            if not misses:
                met += 1
                continue
            verdicts = noise_verdicts(kind, rounds)
            if any(verdicts[i] is None for i in misses):
                unsure += 1
            elif all(verdicts[i] == "holds the goal" for i in misses):
                noisy += 1
            else:
                beyond += 1
    missed = noisy + beyond + unsure
    return (
        f"{met} of the {met + missed} cells with a figure met every goal; of the {missed} missed, {noisy} "
        f"only within their rounds' noise, {beyond} beyond it, {unsure} with too few rounds for an interval "
        f"({DAGGER}: the goal lies inside the ratio's 95 % interval of the median over the cell's rounds, "
        f"six or more; bench/lib/ratios.py)."
    )


def main():
    if sys.argv[1:2] == ["--recheck"]:
        if len(sys.argv) != 3:
            sys.exit("usage: table.py --recheck TABLE.tsv")
        recheck(sys.argv[2])
        return
    rows = read(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    used = sizes_used(rows)
    print("\n".join(table(rows, used, same=False, rounds=rounds)))
    print()
    print(tally(rows))
    odd = {COLUMNS[c][1]: sorted(s) for c, s in used.items() if s != {COLUMNS[c][0]}}
    if odd:
        print()
        print("Sizes in a column: " + "; ".join(f"{name}: {', '.join(f'{s} B' for s in sizes)}" for name, sizes in odd.items()) + ".")
    same = table(rows, used, same=True, rounds=rounds)
    if len(same) > 2:
        print()
        print("Over the rounds in which both tools ran on the same link between the two cores:")
        print()
        print("\n".join(same))


if __name__ == "__main__":
    main()
