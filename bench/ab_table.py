#!/usr/bin/env python3
"""Prints medians from bench/ab-on-gpu.sh's JSON files, one column per build and round
(ns, per-item ns, or GB/s where the name says so; names as in ratio_table.py)."""
import sys

from ratio_table import medians


def main():
    folder, rounds, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    cols = [(f"{n} r{r}", medians(f"{folder}/{n}-{r}.json")) for r in range(1, rounds + 1) for n in names]
    print("| benchmark | " + " | ".join(c for c, _ in cols) + " |")
    print("|---|" + "---|" * len(cols))
    rows = list(dict.fromkeys(b for _, m in cols for b in m))  # every column's rows (held rows: cucpu's alone)
    for bench in rows:
        print(f"| {bench} | " + " | ".join(f"{m.get(bench, float('nan')):,.1f}" for _, m in cols) + " |")


if __name__ == "__main__":
    main()
