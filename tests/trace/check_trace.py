#!/usr/bin/env python3
"""Checks the trace of tests/trace/trace_program.cpp: a Chrome trace JSON,
or a Perfetto protobuf trace (*.pftrace, read by read_perfetto.py).
usage: check_trace.py TRACE.json|TRACE.pftrace"""
import collections
import json
import os
import sys

problems = []
if sys.argv[1].endswith(".pftrace"):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import read_perfetto
    events, problems = read_perfetto.read(sys.argv[1])
else:
    events = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
streams = {tid: n for tid, n in names.items() if n.startswith("stream 0x") and n.endswith(", non-blocking)")}
workers = {tid for tid, n in names.items() if n.startswith("worker ")}
hosts = {tid for tid, n in names.items() if n.startswith("host thread ")}
slices = [e for e in events if e.get("ph") == "X"]
if len(streams) != 2:
    problems.append(f"want 2 non-blocking stream tracks, got {sorted(names.values())}")
by_track = collections.defaultdict(list)
for s in slices:
    by_track[s["tid"]].append(s)
ops = sorted((s["ts"], s["name"], s["tid"]) for s in slices if s.get("cat") == "op" and s["tid"] in streams)
op_names = [n for _, n, _ in ops]
for want in ["memset", "host function", "event record", "copy 65536 B"]:
    if want not in op_names:
        problems.append(f"no '{want}' slice on a stream track (have {op_names})")
if op_names.count("host function") != 3:
    problems.append(f"want 3 host-function slices on stream tracks, got {op_names.count('host function')}")
# Each op appears on its stream's track and on a worker's (or, for inline
# bookkeeping ops, the enqueuing thread's) track.
for s in slices:
    if s.get("cat") == "op" and s["tid"] in streams:
        twins = [t for t in slices if t is not s and t.get("cat") == "op" and t["ts"] == s["ts"] and t["name"] == s["name"]]
        if not twins or not all(t["tid"] in workers or t["tid"] in hosts for t in twins):
            problems.append(f"'{s['name']}' at {s['ts']} has no worker or thread slice")
api = [s for s in slices if s.get("cat") == "api"]
api_names = [s["name"] for s in api]
for want in ["cuMemsetD8Async", "cuLaunchHostFunc", "cuEventRecord", "cuStreamWaitEvent", "cuMemcpyDtoDAsync"]:
    if not any(n == want or n.startswith(want + "_v") for n in api_names):  # cuda.h maps some to _v2
        problems.append(f"no API slice {want}")
if not all(s["tid"] in hosts for s in api if s["name"] == "cuMemsetD8Async"):
    problems.append("cuMemsetD8Async is not on a host thread's track")
# Flows: from each enqueuing call to its op, ids paired.
starts = {e["id"]: e for e in events if e.get("ph") == "s"}
ends = {e["id"]: e for e in events if e.get("ph") == "f"}
if set(starts) != set(ends):
    problems.append(f"flows unpaired: {len(starts)} starts, {len(ends)} ends")
enqueue_flows = [i for i, e in ends.items() if e.get("cat") == "enqueue"]
if len(enqueue_flows) < 5:
    problems.append(f"too few enqueue flows: {len(enqueue_flows)}")
for i in enqueue_flows:
    s, f = starts.get(i), ends[i]
    if s and (s["tid"] not in hosts or f["tid"] not in streams or f["ts"] < s["ts"]):
        problems.append(f"flow {i} does not go from a call to a later op on a stream")
# The event wait: a dependency flow from the first stream's track (the
# event record) to the second's, forward in time.
deps = [(starts[i], ends[i]) for i, e in ends.items() if e.get("cat") == "dependency" and i in starts]
if not any(s["tid"] in streams and f["tid"] in streams and s["tid"] != f["tid"] and f["ts"] >= s["ts"] for s, f in deps):
    problems.append(f"no dependency flow between the two streams (have {len(deps)})")
# Order on the first stream: the holding host function, memset, host function, event record.
first = [n for _, n, tid in ops if tid == ops[0][2]] if ops else []
if first[:4] != ["host function", "memset", "host function", "event record"]:
    problems.append(f"first stream's ops out of order: {first}")
# The graph launch: its nodes are slices inside a segment's slice, on the stream's track.
nodes = [s for s in slices if s.get("cat") == "node" and s["tid"] in streams]
node_names = sorted(s["name"] for s in nodes)
if node_names != ["host node", "memset node"]:
    problems.append(f"want a memset node and a host node on a stream track, got {node_names}")
for n in nodes:
    outer = [s for s in slices if s.get("cat") == "op" and s["tid"] == n["tid"] and s["name"].startswith("graph segment")
             and s["ts"] <= n["ts"] and n["ts"] + n["dur"] <= s["ts"] + s["dur"] + 0.002]
    if not outer:
        problems.append(f"'{n['name']}' is not inside a graph segment's slice")
for p in problems:
    print(p)
print("trace ok" if not problems else f"{len(problems)} problem(s)")
sys.exit(1 if problems else 0)
