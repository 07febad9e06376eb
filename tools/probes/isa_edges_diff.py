#!/usr/bin/env python3
"""Compares two result files of isa_edges_probe: per op, how many results
differ and the first few inputs with both results.
usage: isa_edges_diff.py REFERENCE.bin OTHER.bin"""
import struct
import sys

N = 1 << 16
NAMES = None


def load(path):
    data = open(path, "rb").read()
    words = struct.unpack("<%dQ" % (len(data) // 8), data)
    a, b, c = words[:N], words[N:2 * N], words[2 * N:3 * N]
    return a, b, c, words[3 * N:]


def main():
    a, b, c, ref = load(sys.argv[1])
    _, _, _, got = load(sys.argv[2])
    ops = len(ref) // N
    bad_ops = 0
    for k in range(ops):
        bad = [i for i in range(N) if ref[k * N + i] != got[k * N + i]]
        if not bad:
            continue
        bad_ops += 1
        print("op %d: %d/%d differ" % (k, len(bad), N))
        for i in bad[:4]:
            print("   a=%016x b=%016x c=%016x  ref=%016x got=%016x" % (a[i], b[i], c[i], ref[k * N + i], got[k * N + i]))
    print("%d of %d ops differ" % (bad_ops, ops))


if __name__ == "__main__":
    main()
