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

A row may end with "| OURS_BEFORE OURS_AFTER REF_BEFORE REF_AFTER": the cache
line round trip between the two cores (ns) read before and after each tool's
run (bench/lib/common.sh's `linked` and `row`). The host of a shared VM moves
its vCPUs between sibling hyperthreads (about 60 ns) and separate cores (about
300 ns), and shared-memory and loopback figures move with it in both tools;
each round then shows its links, and a second median is taken over the rounds
in which all four readings agree within LINK_SPREAD: the tools compared on the
same link.

A row that starts with "set-aside " is a round whose links changed and that
the script ran again (common.sh's `alternate`): it is printed, marked, and
left out of every median and count.

  python3 bench/lib/ratios.py --changed ROWS
      exit 0 when the last row's four link readings are there and disagree
      (the round is to be run again), 1 otherwise

Under the median line, the rounds' 95 % interval of each median
(`median_interval`): the ratios' order statistics that hold the median of
the rounds' distribution with at least 95 % confidence whatever that
distribution is (the sign test's interval; six rounds or more), and whether
the goal lies outside it ("met" or "NOT met" beyond the rounds' noise) or
inside it ("holds the goal": these rounds cannot tell the cell from its goal).

With BENCH_TABLE set to a file, each call also appends one tab-separated line
to it for bench/lib/table.py: BENCH_SUBJECT (what the script measures, e.g.
"udp"; the script sets it), kind, LABEL, REFNAME, SIZE, the rounds counted,
the median ratios (lat: p50 and p99; tp: one) and the same-link ones with
their count ("nan" where there were none), then "rounds:" and each counted
round's ratios and whether it ran on the same link (lat "p50,p99,S", tp
"r,S", S 1 or 0; rounds separated by ";"), so that table.py can pool the
rounds of several reports of one cell (bench/table.sh's recheck).
"""
import math
import os
import statistics
import sys

LAT_GOAL, TP_GOAL = 1.05, 0.95
LINK_SPREAD = 1.5
LEVEL = 0.95


def ratio(o, r):
    """o / r, or nan when either is no figure (nan, or 0 from a run that measured nothing)."""
    return o / r if o > 0 and r > 0 else float("nan")


def median_ratio(pairs):
    ratios = [x for x in (ratio(o, r) for o, r in pairs) if not math.isnan(x)]
    return statistics.median(ratios) if ratios else float("nan")


def rate(x):
    """A rate for a round's line: whole samples/s, with two decimals below 100/s (large samples)."""
    return f"{x:11.0f}" if x >= 100 else f"{x:11.2f}"


def median_interval(xs, level=LEVEL):
    """(low, high, coverage) of the distribution-free interval of a median, or None
    when the rounds are too few for it (fewer than six at 95 %).

    Of n rounds sorted, the k-th smallest and the k-th largest hold the median of
    the distribution the rounds come from unless only k - 1 rounds or fewer fall
    on one side of it, which happens with probability 2 P(B <= k - 1), B ~
    Binomial(n, 1/2), whatever that distribution is (rounds independent; the sign
    test's interval).
    k is the largest whose coverage 1 - 2 P(B <= k - 1) is at least level."""
    xs = sorted(x for x in xs if not math.isnan(x))
    n, best = len(xs), None
    for k in range(1, (n + 1) // 2 + 1):
        coverage = 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2**n
        if coverage < level:
            break
        best = (xs[k - 1], xs[n - k], coverage)
    return best


def beyond_noise(interval, ok):
    """What the interval says of the goal: "met" or "NOT met" when the goal lies
    outside it, "holds the goal" when inside; None without an interval."""
    if interval is None:
        return None
    low_ok, high_ok = ok(interval[0]), ok(interval[1])
    return "met" if low_ok and high_ok else "NOT met" if not (low_ok or high_ok) else "holds the goal"


def series(rounds, i):
    """The i-th ratio of every round of round_ratios (or of a table's rounds)."""
    return [rs[i] for rs, _ in rounds]


def print_intervals(head, named, ok):
    """The interval line under a median line: named is [(name, ratios)], each
    series with its own interval (a round may give one series and not the other)."""
    counts = [len([x for x in xs if not math.isnan(x)]) for _, xs in named]
    intervals = [median_interval(xs) for _, xs in named]
    if all(iv is None for iv in intervals):
        print(f"{head}  {max(counts)} rounds: too few for a {LEVEL * 100:.0f} % interval of the median (6 or more)")
        return
    texts = ", ".join(
        f"{name}none ({n} rounds; 6 or more make one)" if iv is None else f"{name}{iv[0]:.3f}-{iv[1]:.3f} ({beyond_noise(iv, ok)})"
        for (name, _), n, iv in zip(named, counts, intervals)
    )
    rounds = f"{counts[0]} rounds" if len(set(counts)) == 1 else "their rounds"
    print(f"{head}  {LEVEL * 100:.0f} % intervals of the medians over {rounds}: {texts}")


def verdict(r, ok):
    return "no figure" if math.isnan(r) else ("met" if ok(r) else "NOT met")


SET_ASIDE = "set-aside "


def parse(line):
    """(figures, links or None) of one row (without its set-aside mark)."""
    figures = line.removeprefix(SET_ASIDE).partition("|")[0]
    return list(map(float, figures.split())), parse_links(line)


def readable(links):
    """True when all four link readings are there."""
    return bool(links) and len(links) == 4 and all(x > 0 for x in links)  # nan > 0 is False


def same_link(links):
    """True when the four link readings agree within LINK_SPREAD."""
    return readable(links) and max(links) / min(links) <= LINK_SPREAD


def link_note(links):
    if not links:
        return ""
    if len(links) != 4:
        return f"   link ns: {len(links)} readings instead of 4"
    o1, o2, d1, d2 = (f"{x:.0f}" for x in links)
    tag = "no reading" if not readable(links) else "same" if same_link(links) else "CHANGED"
    return f"   link ns: ours {o1}/{o2}, ref {d1}/{d2} ({tag})"


def round_ratios(rows):
    """[(ratios, same_link)] of the rounds that gave a figure: a row's figures are ours
    then the reference's (lat: p50 p99 p50 p99; tp: one each)."""
    out = []
    for f, links in rows:
        k = len(f) // 2
        rs = tuple(ratio(f[i], f[i + k]) for i in range(k))
        if not math.isnan(rs[0]):
            out.append((rs, same_link(links)))
    return out


def table_line(kind, label, ref, size, rows, medians, same_medians):
    """Appends this report's medians to $BENCH_TABLE (when set) for bench/lib/table.py,
    with how many rounds (of all; on the same link) gave a figure and each such
    round's ratios and same-link flag."""
    path = os.environ.get("BENCH_TABLE")
    if not path:
        return
    rounds = round_ratios(rows)
    subject = os.environ.get("BENCH_SUBJECT", "?")
    fields = [subject, kind, label, ref, size, str(len(rounds))]
    fields += [f"{m:.3f}" for m in medians]
    fields += [str(sum(s for _, s in rounds))] + [f"{m:.3f}" for m in same_medians]
    fields.append("rounds:" + ";".join(",".join([*(f"{x:.4f}" for x in rs), str(int(s))]) for rs, s in rounds))
    with open(path, "a") as f:
        f.write("\t".join(fields) + "\n")


def parse_links(line):
    """The link readings of a row, None when they are not numbers."""
    try:
        return list(map(float, line.partition("|")[2].split())) or None
    except ValueError:
        return None


def changed(path):
    """Exit status of --changed: 0 when the last row's links were read and disagree
    (its figures are not read: whatever a failed run printed keeps the round)."""
    lines = [l for l in open(path) if l.strip()]
    links = parse_links(lines[-1]) if lines else None
    return 0 if readable(links) and not same_link(links) else 1


def figures_text(kind, ref, figures):
    """A round's figures as its line shows them."""
    if kind == "lat" and len(figures) == 4:
        o50, o99, d50, d99 = figures
        return f"{ref} p50 {d50:9.2f} p99 {d99:9.2f} us   pubsubperf p50 {o50:9.2f} p99 {o99:9.2f} us"
    if kind == "tp" and len(figures) == 2:
        o, d = figures
        return f"{ref} {rate(d)}/s   pubsubperf {rate(o)}/s"
    return " ".join(f"{x:g}" for x in figures)


def print_set_aside(head, kind, ref, aside):
    """Attempts of a round set aside because their links changed (the round was run again)."""
    for r, (figures, links) in aside:
        print(f"{head}  round {r} set aside: {figures_text(kind, ref, figures)}{link_note(links)}; run again")


def main():
    if sys.argv[1:2] == ["--changed"]:
        if len(sys.argv) != 3:
            sys.exit("usage: ratios.py --changed ROWS")
        sys.exit(changed(sys.argv[2]))
    path, kind, label, size, ref = sys.argv[1:6]
    lines = [l for l in open(path) if l.strip()]
    rows, aside = [], []
    for l in lines:
        if l.startswith(SET_ASIDE):
            # Set aside for its links alone: its figures may be anything a
            # failed run printed.
            try:
                aside.append((len(rows) + 1, parse(l)))
            except ValueError:
                aside.append((len(rows) + 1, ([], parse_links(l))))
        else:
            rows.append(parse(l))
    head = f"  {label:<10} {int(size):>9} B"
    aside_of = lambda i: [a for a in aside if a[0] == i]
    # A row without all its figures (a side printed nothing) is a round
    # without a figure: which side is missing cannot be told.
    want = 4 if kind == "lat" else 2
    for i, (figures, links) in enumerate(rows):
        if len(figures) != want:
            print(f"{head}  round {i + 1}: {len(figures)} figures instead of {want}, counted as none", file=sys.stderr)
            rows[i] = ([math.nan] * want, links)
    linked = [r for r in rows if r[1]]
    same = [r for r in rows if same_link(r[1])]
    if kind == "lat":
        ok = lambda r: r <= LAT_GOAL
        for i, ((o50, o99, d50, d99), links) in enumerate(rows, 1):
            print_set_aside(head, kind, ref, aside_of(i))
            print(f"{head}  round {i}: {figures_text(kind, ref, (o50, o99, d50, d99))}   ratios {ratio(o50, d50):.3f} {ratio(o99, d99):.3f}{link_note(links)}")

        def medians(rs):
            return median_ratio((f[0], f[2]) for f, _ in rs), median_ratio((f[1], f[3]) for f, _ in rs)

        print_set_aside(head, kind, ref, aside_of(len(rows) + 1))
        r50, r99 = medians(rows)
        print(f"{head}  median ratios p50 {r50:.3f} ({verdict(r50, ok)}), p99 {r99:.3f} ({verdict(r99, ok)}); goal <= {LAT_GOAL}")
        rounds = round_ratios(rows)
        print_intervals(head, [("p50 ", series(rounds, 0)), ("p99 ", series(rounds, 1))], ok)
        s50, s99 = medians(same)
        if linked:
            print(f"{head}  same-link rounds {len(same)} of {len(rows)}: median ratios p50 {s50:.3f} ({verdict(s50, ok)}), p99 {s99:.3f} ({verdict(s99, ok)})")
        table_line(kind, label, ref, size, rows, (r50, r99), (s50, s99))
    elif kind == "tp":
        ok = lambda r: r >= TP_GOAL
        for i, ((o, d), links) in enumerate(rows, 1):
            print_set_aside(head, kind, ref, aside_of(i))
            print(f"{head}  round {i}: {figures_text(kind, ref, (o, d))}   ratio {ratio(o, d):.3f}{link_note(links)}")
        print_set_aside(head, kind, ref, aside_of(len(rows) + 1))
        r = median_ratio((f[0], f[1]) for f, _ in rows)
        print(f"{head}  median ratio {r:.3f} ({verdict(r, ok)}; goal >= {TP_GOAL})")
        print_intervals(head, [("", series(round_ratios(rows), 0))], ok)
        s = median_ratio((f[0], f[1]) for f, _ in same)
        if linked:
            print(f"{head}  same-link rounds {len(same)} of {len(rows)}: median ratio {s:.3f} ({verdict(s, ok)})")
        table_line(kind, label, ref, size, rows, (r,), (s,))
    else:
        sys.exit(f"ratios.py: kind must be lat or tp, not {kind!r}")


if __name__ == "__main__":
    main()
