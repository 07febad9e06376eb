#!/usr/bin/env python3
"""Reads a Perfetto protobuf trace as cucpu writes it (exec/trace_perfetto.cpp)
with a decoder of the protobuf wire format of our own, checks its structure
(every slice ends on the track it began on, slices nest on each track, a
graph node's slice lies inside an op's on its own track, every flow has both
ends, every track is described) and returns it as the events
of a Chrome trace JSON, so the checks of check_trace.py apply to both formats.
Child tracks ("NAME (k)": overlapping slices), described right after
their parent, count as the parent's."""
import struct


def fields(buf):
    """(field, wire type, value) of one message; value: int or bytes."""
    i, out = 0, []
    while i < len(buf):
        key, i = varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(buf, i)
        elif wire == 1:
            v = struct.unpack_from("<Q", buf, i)[0]
            i += 8
        elif wire == 2:
            n, i = varint(buf, i)
            v = buf[i:i + n]
            i += n
        elif wire == 5:
            v = struct.unpack_from("<I", buf, i)[0]
            i += 4
        else:
            raise ValueError(f"wire type {wire} at byte {i}")
        out.append((field, wire, v))
    return out


def varint(buf, i):
    shift = v = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, i


def read(path):
    """(events, problems)."""
    data = open(path, "rb").read()
    problems = []
    tracks, parent, process, process_uuid = {}, {}, None, None
    root, last_by_name = {}, {}
    marks = []  # (ts, track, begin, name, category, args, flows out, flows in)
    for field, wire, packet in fields(data):
        if field != 1 or wire != 2:
            problems.append(f"a top-level field {field} that is not a packet")
            continue
        p = {}
        for f, _, v in fields(packet):
            p.setdefault(f, []).append(v)
        if 10 not in p:
            problems.append("a packet without trusted_packet_sequence_id")
        if 60 in p:
            d = {f: v for f, _, v in fields(p[60][0])}
            if 3 in d:
                process = {f: v for f, _, v in fields(d[3])}.get(6, b"").decode()
                process_uuid = d[1]
            else:
                name = d.get(2, b"").decode()
                tracks[d[1]] = name
                parent[d[1]] = d.get(5)
                base, _, lane = name.rpartition(" (")
                if base and lane[:-1].isdigit() and lane.endswith(")") and base in last_by_name:
                    root[d[1]] = last_by_name[base]
                else:
                    root[d[1]] = d[1]
                    last_by_name[name] = d[1]
        if 11 in p:
            ev = {}
            for f, _, v in fields(p[11][0]):
                ev.setdefault(f, []).append(v)
            args = {}
            for a in ev.get(4, []):
                ad = {f: v for f, _, v in fields(a)}
                args[ad[10].decode()] = ad[4] - (1 << 64) if ad[4] >= 1 << 63 else ad[4]
            marks.append((p[8][0], ev[11][0], ev[9][0] == 1, ev.get(23, [b""])[0].decode(),
                          ev.get(22, [b""])[0].decode(), args, ev.get(47, []), ev.get(48, [])))
    if process != "cucpu":
        problems.append(f"process named {process!r}, not cucpu")
    for t, up in parent.items():
        if up != process_uuid and up not in tracks:
            problems.append(f"track {t} has an undescribed parent {up}")
    events = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": process}}]
    events += [{"ph": "M", "pid": 1, "tid": t, "name": "thread_name", "args": {"name": n}}
               for t, n in tracks.items() if root[t] == t]
    open_slices, last_ts, flow_from, flow_to = {}, -1, {}, {}
    for ts, track, begin, name, cat, args, out, into in marks:
        if ts < last_ts:
            problems.append("events out of time order")
        last_ts = ts
        if track not in tracks:
            problems.append(f"an event on undescribed track {track}")
            continue
        stack = open_slices.setdefault(track, [])
        if begin and cat == "node" and (not stack or stack[-1]["cat"] != "op"):
            problems.append(f"node slice {name!r} is not inside an op's slice on its own track")
        if begin:
            stack.append({"ph": "X", "pid": 1, "tid": root[track], "ts": ts / 1000.0, "name": name, "cat": cat,
                          "args": args, "out": out, "in": into})
            continue
        if not stack:
            problems.append(f"an end without a begin on track {tracks[track]}")
            continue
        s = stack.pop()
        s["dur"] = ts / 1000.0 - s["ts"]
        for i in s.pop("out"):
            flow_from[i] = s
        for i in s.pop("in"):
            flow_to[i] = s
        events.append(s)
    for t, stack in open_slices.items():
        if stack:
            problems.append(f"{len(stack)} slices never end on track {tracks[t]}")
    if set(flow_from) != set(flow_to):
        problems.append(f"flows unpaired: {len(flow_from)} leave, {len(flow_to)} arrive")
    for i in sorted(set(flow_from) & set(flow_to)):
        src, dst = flow_from[i], flow_to[i]
        cat = "enqueue" if src["cat"] == "api" else "dependency"
        events.append({"ph": "s", "pid": 1, "tid": src["tid"], "ts": src["ts"], "id": i, "cat": cat})
        events.append({"ph": "f", "pid": 1, "tid": dst["tid"], "ts": dst["ts"], "id": i, "cat": cat})
    return events, problems
