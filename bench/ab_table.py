#!/usr/bin/env python3
"""Prints medians from bench/ab-on-gpu.sh's JSON files, one column per build and round."""
import json
import sys


def medians(path):
    out = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        value = b["real_time"] * {"ns": 1, "us": 1e3, "ms": 1e6}[b["time_unit"]]
        for per_item in ("ns_per_op", "seconds_per_stream", "ns_per_node"):
            if per_item in b:  # rate counters, inverted: seconds per item
                value = b[per_item] * 1e9
        if "bytes_per_second" in b:
            value = b["bytes_per_second"] / 1e9  # GB/s
        out[b["run_name"]] = value
    return out


folder, rounds, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
cols = [(f"{n} r{r}", medians(f"{folder}/{n}-{r}.json")) for r in range(1, rounds + 1) for n in names]
print("| benchmark (ns, or GB/s) | " + " | ".join(c for c, _ in cols) + " |")
print("|---|" + "---|" * len(cols))
for bench in cols[0][1]:
    print(f"| {bench} | " + " | ".join(f"{m.get(bench, float('nan')):,.1f}" for _, m in cols) + " |")
