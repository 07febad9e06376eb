#!/usr/bin/env python3
"""The table of docs/performance.md: one row per measured figure, each with
its peer and target, from the JSON files bench/reference-on-gpu.sh writes.

usage: reference_table.py NVIDIA.json[,MORE.json...] CUCPU.json[,MORE.json...]
Engine rows compare cucpu with NVIDIA's driver (the ratio is NVIDIA's time
over cucpu's); kernel rows compare cucpu with the same algorithm written by
hand in C++ in the same process (the hand-written time over cucpu's).
"""
import json
import statistics
import sys

# (label, benchmark, peer: "nvidia" or a benchmark of the cucpu run, target)
# A target is ("ratio", x): the peer's time over cucpu's at least x;
# ("ns", x): cucpu's time at most x ns; or both joined in a tuple; None: none.
ROWS = [
    ("Engine: enqueue and completion", None, None, None),
    ("empty kernel launch, enqueue", "BM_EmptyKernelLaunchEnqueue", "nvidia", (("ns", 300),)),
    ("empty kernel launch to completion", "BM_EmptyKernelLaunchToCompletion", "nvidia", (("ns", 3000),)),
    ("`cuMemcpyDtoDAsync` 256 B, enqueue", "BM_MemcpyDtoDAsync256Enqueue", "nvidia", (("ns", 200),)),
    ("`cuMemcpy3DBatchAsync_v2`, 256 copies of 1 KiB, per copy", "BM_Batch3D_256x1KiB", "nvidia", (("ns", 150),)),
    ("`cuLaunchHostFunc`, enqueue", "BM_LaunchHostFuncEnqueue", "nvidia", (("ns", 150),)),
    ("host function, enqueue to running", "BM_HostFuncLatency", "nvidia", (("ns", 700),)),
    ("`cuStreamQuery`, idle stream", "BM_StreamQueryIdle", "nvidia", (("ratio", 10),)),
    ("`cuStreamSynchronize`, idle stream", "BM_StreamSynchronizeIdle", "nvidia", (("ratio", 10),)),
    ("`cuStreamGetPriority`", "BM_StreamGetPriority", "nvidia", (("ratio", 10),)),
    ("`cuDriverGetVersion` (an entry's floor: a pointer check and a store)", "BM_DriverGetVersion", "nvidia", None),
    ("`cuEventRecord` + `cuStreamWaitEvent`", "BM_EventRecordStreamWait", "nvidia", (("ratio", 10),)),
    ("Engine: graphs", None, None, None),
    ("stream capture, warm, per node", "BM_CaptureHostNodes", "nvidia", (("ratio", 10),)),
    ("graph instantiate, warm, per node", "BM_GraphInstantiate", "nvidia", (("ratio", 10),)),
    ("graph of 100 kernel nodes, run, per node", "BM_GraphRunKernelNodes", "nvidia", (("ratio", 10), ("ns", 100))),
    ("graph run, per host node", "BM_GraphRunHostNodes", "nvidia", (("ratio", 10),)),
    ("first capture of 100 nodes in a process, per node", "BM_ColdCapture100HostNodes", "nvidia", (("ratio", 10),)),
    ("first instantiate in a process, 100 nodes, per node", "BM_ColdInstantiate100HostNodes", "nvidia", (("ratio", 10),)),
    ("Kernels (16 cores; the peer is the same algorithm in C++, one thread a core)", None, None, None),
    ("saxpy, 64 Mi floats", "BM_KernelSaxpy64Mi", "BM_HandSaxpy64Mi", (("ratio", 0.8),)),
    ("block reduction, 64 Mi floats", "BM_KernelBlockReduce64Mi", "BM_HandBlockReduce64Mi", (("ratio", 0.8),)),
    ("SGEMM 1024², 16×16 shared tiles", "BM_KernelSgemm1024", "BM_HandSgemm1024", (("ratio", 0.8),)),
    ("5-point stencil, 4096²", "BM_KernelStencil4096", "BM_HandStencil4096", (("ratio", 0.8),)),
    ("256-bin histogram, 64 Mi bytes", "BM_KernelHistogram64Mi", "BM_HandHistogram64Mi", (("ratio", 0.8),)),
    ("first launch of a 200-line kernel (peer: NVIDIA's JIT)", "BM_Compile200LineKernelFirstLaunch", "nvidia", (("ratio", 1),)),
]


def medians(paths):
    """Median ns per unit of each benchmark (per node or per op where it
    counts them) over the JSON files in `paths` (comma-separated): a run's
    own median where it reports aggregates, else the median of its runs
    (the cold rows: one run a process)."""
    runs, reported = {}, {}
    for path in paths.split(","):
        for b in json.load(open(path))["benchmarks"]:
            name = b["run_name"].split("/")[0]
            ns = b["real_time"] * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b["time_unit"]]
            for per in ("ns_per_node", "ns_per_op"):
                if per in b:
                    ns = b[per] * 1e9
            if b.get("aggregate_name") == "median":
                reported[name] = ns
            elif b.get("run_type", "iteration") == "iteration":
                runs.setdefault(name, []).append(ns)
    out = {name: statistics.median(v) for name, v in runs.items()}
    out.update(reported)
    return out


def text(ns):
    if ns >= 1e6:
        return f"{ns / 1e6:,.2f} ms"
    if ns >= 1e4:
        return f"{ns / 1e3:,.1f} µs"
    return f"{ns:,.1f} ns"


def main():
    nv, ours = medians(sys.argv[1]), medians(sys.argv[2])
    print("| row | peer | cucpu | peer ÷ cucpu | target | met |")
    print("|---|---|---|---|---|---|")
    for label, bench, peer, target in ROWS:
        if bench is None:
            print(f"| **{label}** | | | | | |")
            continue
        mine = ours.get(bench)
        other = nv.get(bench) if peer == "nvidia" else ours.get(peer)
        if mine is None or other is None:
            print(f"| {label} | {text(other) if other else '—'} | {text(mine) if mine else '—'} | — | — | not measured |")
            continue
        ratio = other / mine
        wants, met = [], True
        for kind, x in target or ():
            if kind == "ratio":
                wants.append(f"≥ {x:g}×")
                met &= ratio >= x
            else:
                wants.append(f"≤ {x:g} ns")
                met &= mine <= x
        print(f"| {label} | {text(other)} | {text(mine)} | {ratio:,.2f}× | {', '.join(wants) or '—'} | "
              f"{('yes' if met else '**no**') if wants else '—'} |")


if __name__ == "__main__":
    main()
