#!/usr/bin/env python3
"""Prints a Markdown table comparing two conformance runs line by line."""
import sys


def parse(path):
    res = {}
    for line in open(path, errors="replace"):
        parts = line.rstrip("\n").split(" ", 2)
        if parts[0] in ("PASS", "FAIL", "SKIP") and len(parts) >= 2:
            res[parts[1].rstrip(":")] = (parts[0], parts[2] if len(parts) > 2 else "")
        elif parts[0] == "INFO" and len(parts) == 3:
            res["info:" + parts[1]] = (parts[2], "")
    return res


nv, ours = parse(sys.argv[1]), parse(sys.argv[2])
agree = disagree = 0
print("| test | NVIDIA driver | cucpu | agree |")
print("|---|---|---|---|")
for name in sorted(set(nv) | set(ours)):
    a, b = nv.get(name, ("-", "")), ours.get(name, ("-", ""))
    same = a[0] == b[0] or "SKIP" in (a[0], b[0])
    agree += same
    disagree += not same
    detail = lambda r: r[0] + (f" ({r[1][:90]})" if r[1] and r[0] == "FAIL" else "")
    print(f"| {name} | {detail(a)} | {detail(b)} | {'yes' if same else '**no**'} |")
print(f"\n{agree} agree, {disagree} disagree")
