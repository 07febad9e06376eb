#!/usr/bin/env python3
"""Builds src/api/entry_points.inc, the one table of driver entry points.

Inputs (facts, not code):
  exports-13.0.txt     every symbol NVIDIA's CUDA 13.0 libcuda exports (from
                       the toolkit's stub library: nm -D --defined-only).
  data/proc_table.tsv  what NVIDIA's driver 580 answered to
                       cuGetProcAddress_v2(name, version, flags) for every
                       name, version and flag (probe.cpp, run on an H200).

Each output row is  CU_ENTRY(symbol, base, default_since, legacy_since, ptds_since):
the exported symbol, the base name cuGetProcAddress knows it by, and for each
flag the CUDA version from which the driver returns this symbol for the base
name (0: never).
"""
import collections
import re

exports = [l.strip() for l in open("exports-13.0.txt") if l.strip()]
since = collections.defaultdict(lambda: [0, 0, 0])
base_of = {}
for line in open("data/proc_table.tsv"):
    if line.startswith("#"):
        continue
    parts = line.rstrip("\n").split("\t")
    if len(parts) != 6:
        continue
    name, flags, version, result, status, sym = parts
    if sym == "-" or result != "0" or status != "0":
        continue
    flag_index = {"0": 0, "1": 1, "2": 2}[flags]
    since[sym][flag_index] = int(version) if since[sym][flag_index] == 0 else since[sym][flag_index]
    base_of[sym] = name

# The boundary columns of implemented rows (tools/boundary/gen.py) are the
# project's own: kept from the current table.
boundary = {}
for line in open("../../src/api/entry_points.inc"):
    m = re.match(r"CU_ENTRY\((\w+), [^,]+, \d+, \d+, \d+(, .*)\)$", line.strip())
    if m:
        boundary[m.group(1)] = m.group(2)

HEADER = open("../../src/api/entry_points.inc").read().split("\nCU_ENTRY(", 1)[0] + "\n"

rows = []
for sym in exports:
    base = base_of.get(sym)
    if base is None:  # never returned by cuGetProcAddress: strip the suffixes
        base = re.sub(r"(_v\d+)?(_ptsz|_ptds)?$", "", sym)
    d, l, p = since.get(sym, [0, 0, 0])
    rows.append(f"CU_ENTRY({sym}, {base}, {d}, {l}, {p}{boundary.get(sym, '')})")
missing = set(base_of) - set(exports)
assert not missing, missing

with open("../../src/api/entry_points.inc", "w") as out:
    out.write(HEADER)
    out.write("\n".join(rows) + "\n")
print(len(rows), "entries")
