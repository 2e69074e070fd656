#!/usr/bin/env python3
"""The verdict of scripts/perf-ab.sh: per workload, the ratio of B's median
time to A's with a 95% bootstrap confidence interval (rounds resampled
together, since A and B of one round ran side by side), and whether B is
slower, faster, or no different beyond the noise. Exit status 1 when any
workload is significantly slower.

Input: lines "workload<TAB>side<TAB>round<TAB>microseconds", side A or B.
"""
import argparse
import random
import statistics
import sys
from collections import defaultdict

RESAMPLES = 4000


def ratio(pairs):
    return statistics.median(b for _, b in pairs) / statistics.median(a for a, _ in pairs)


def verdict(pairs, noise, rng):
    """(ratio, low, high, word) for one workload's (a, b) pairs by round."""
    r = ratio(pairs)
    boots = sorted(ratio([rng.choice(pairs) for _ in pairs]) for _ in range(RESAMPLES))
    lo, hi = boots[int(0.025 * RESAMPLES)], boots[int(0.975 * RESAMPLES) - 1]
    if lo > 1 + noise:
        word = "slower"
    elif hi < 1 - noise:
        word = "faster"
    else:
        word = "no change"
    return r, lo, hi, word


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("samples")
    ap.add_argument("--noise", type=float, default=0.05)
    ap.add_argument("--a", default="A")
    ap.add_argument("--b", default="B")
    args = ap.parse_args()
    runs = defaultdict(dict)  # (workload, round) -> side -> us
    order = []
    with open(args.samples) as f:
        for line in f:
            w, side, rnd, us = line.rstrip("\n").split("\t")
            if w not in order:
                order.append(w)
            runs[(w, rnd)][side] = int(us)
    rng = random.Random(1)  # the same samples give the same verdict
    print(f"A = {args.a}\nB = {args.b}")
    print(f"{'workload':<10} {'A median':>10} {'B median':>10} {'B/A':>6}  {'95% interval':<15} verdict")
    slower = False
    for w in order:
        pairs = [(v["A"], v["B"]) for (wl, _), v in sorted(runs.items()) if wl == w and "A" in v and "B" in v]
        if len(pairs) < 3:
            print(f"{w:<10} too few rounds ({len(pairs)}) for a verdict")
            continue
        r, lo, hi, word = verdict(pairs, args.noise, rng)
        slower |= word == "slower"
        ma = statistics.median(a for a, _ in pairs) / 1e6
        mb = statistics.median(b for _, b in pairs) / 1e6
        print(f"{w:<10} {ma:>9.3f}s {mb:>9.3f}s {r:>6.3f}  [{lo:.3f}, {hi:.3f}]  {word}")
    return 1 if slower else 0


if __name__ == "__main__":
    sys.exit(main())
