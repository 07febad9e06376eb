#!/usr/bin/env python3
"""Prints a Markdown table of median times from two Google Benchmark JSON files."""
import json
import sys


def medians(path):
    out = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name") == "median":
            name = b["run_name"]
            ns = b["real_time"] * {"ns": 1, "us": 1e3, "ms": 1e6}[b["time_unit"]]
            if "seconds_per_stream" in b:  # a rate counter, inverted: seconds per stream
                ns = b["seconds_per_stream"] * 1e9
                name += " (per stream)"
            if "ns_per_op" in b:  # likewise: seconds per op
                ns = b["ns_per_op"] * 1e9
                name += " (per op)"
            if "ns_per_node" in b:  # likewise: seconds per graph node
                ns = b["ns_per_node"] * 1e9
                name += " (per node)"
            if "bytes_per_second" in b:
                out[name + " (GB/s)"] = b["bytes_per_second"] / 1e9
                continue
            out[name] = ns
    return out


def main():
    nv, ours = medians(sys.argv[1]), medians(sys.argv[2])
    print("| benchmark (median) | NVIDIA driver | cucpu | speed-up |")
    print("|---|---|---|---|")
    for name in nv:
        a, b = nv[name], ours.get(name)
        if b is None:
            continue
        if name.endswith("(GB/s)"):
            print(f"| {name} | {a:,.1f} GB/s | {b:,.1f} GB/s | {b / a:,.2f}x |")
        else:
            print(f"| {name} | {a:,.0f} ns | {b:,.1f} ns | {a / b:,.1f}x |")


if __name__ == "__main__":
    main()
