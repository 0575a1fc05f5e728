"""The count-weighted median the bench scripts take over per-second points
(ddsperf prints each second's percentiles; ours are the run's intervals)."""


def wmedian(pairs):
    """The value at half the total count of (value, count) pairs, values of
    None left out; nan with none."""
    pairs = sorted(p for p in pairs if p[0] is not None)
    half, acc = sum(c for _, c in pairs) / 2, 0
    for v, c in pairs:
        acc += c
        if acc >= half:
            return v
    return float("nan")
