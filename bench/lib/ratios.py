"""Rounds of ours-vs-reference figures -> one line per round and the median ratio.

Every bench/ script that compares a binding with its vendor's tool writes one
line per round into a rows file and calls this (through bench/lib/common.sh's
`report`). The median of the rounds' ratios is the figure, because single runs
on a shared VM swing by 5-30 %; each round is printed so the spread is visible.

  python3 bench/lib/ratios.py ROWS lat LABEL SIZE REFNAME
      rows: "ours_p50 ours_p99 ref_p50 ref_p99" in us; goal ratio <= 1.05
  python3 bench/lib/ratios.py ROWS tp LABEL SIZE REFNAME
      rows: "ours_per_s ref_per_s" in samples/s; goal ratio >= 0.95
A row holding "nan" or 0 (a run that failed, or measured nothing) is printed
and left out of the median.
"""
import math
import statistics
import sys

LAT_GOAL, TP_GOAL = 1.05, 0.95


def ratio(o, r):
    """o / r, or nan when either is no figure (nan, or 0 from a run that measured nothing)."""
    return o / r if o > 0 and r > 0 else float("nan")


def median_ratio(pairs):
    ratios = [x for x in (ratio(o, r) for o, r in pairs) if not math.isnan(x)]
    return statistics.median(ratios) if ratios else float("nan")


def verdict(r, ok):
    return "no figure" if math.isnan(r) else ("met" if ok(r) else "NOT met")


def main():
    path, kind, label, size, ref = sys.argv[1:6]
    rows = [list(map(float, l.split())) for l in open(path) if l.strip()]
    head = f"  {label:<10} {int(size):>9} B"
    if kind == "lat":
        for i, (o50, o99, d50, d99) in enumerate(rows, 1):
            print(f"{head}  round {i}: {ref} p50 {d50:9.2f} p99 {d99:9.2f} us   pubsubperf p50 {o50:9.2f} p99 {o99:9.2f} us   ratios {ratio(o50, d50):.3f} {ratio(o99, d99):.3f}")
        r50 = median_ratio((r[0], r[2]) for r in rows)
        r99 = median_ratio((r[1], r[3]) for r in rows)
        ok = lambda r: r <= LAT_GOAL
        print(f"{head}  median ratios p50 {r50:.3f} ({verdict(r50, ok)}), p99 {r99:.3f} ({verdict(r99, ok)}); goal <= {LAT_GOAL}")
    elif kind == "tp":
        for i, (o, d) in enumerate(rows, 1):
            print(f"{head}  round {i}: {ref} {d:11.0f}/s   pubsubperf {o:11.0f}/s   ratio {ratio(o, d):.3f}")
        r = median_ratio((r[0], r[1]) for r in rows)
        print(f"{head}  median ratio {r:.3f} ({verdict(r, lambda r: r >= TP_GOAL)}; goal >= {TP_GOAL})")
    else:
        sys.exit(f"ratios.py: kind must be lat or tp, not {kind!r}")


if __name__ == "__main__":
    main()
