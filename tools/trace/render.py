#!/usr/bin/env python3
"""Draws a cucpu trace (Chrome trace JSON, `cucpu trace`) as a page of its
own: one row per track (streams, then workers, then host threads), a box
per slice (graph nodes inside their segments), and an arrow per flow
(enqueue: from the API call to the op; dependency: between ops). For the
picture in docs/trace.md; tools/trace/screenshot.sh renders the page to a
PNG with a headless chromium.
usage: render.py TRACE.json OUT.html [--from US] [--to US]"""
import colorsys
import hashlib
import html
import json
import sys


def color(name, cat):
    if cat == "api":
        return "#9fb4cc"
    h = int(hashlib.md5(name.split(" ")[0].encode()).hexdigest()[:4], 16) / 65535.0
    r, g, b = colorsys.hls_to_rgb(h, 0.62 if cat == "op" else 0.45, 0.55)
    return "#%02x%02x%02x" % (int(r * 255), int(g * 255), int(b * 255))


def main():
    args = sys.argv[1:]
    lo = float(args[args.index("--from") + 1]) if "--from" in args else None
    hi = float(args[args.index("--to") + 1]) if "--to" in args else None
    events = json.load(open(args[0]))["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    slices = [e for e in events if e.get("ph") == "X"]
    if lo is not None:
        slices = [s for s in slices if s["ts"] + s["dur"] >= lo]
    if hi is not None:
        slices = [s for s in slices if s["ts"] <= hi]
    used = {s["tid"] for s in slices}

    def rank(tid):
        n = names.get(tid, "")
        return (0 if n.startswith("stream") else 1 if n.startswith("worker") else 2, n)
    tracks = sorted((t for t in names if t in used), key=rank)
    row = {t: i for i, t in enumerate(tracks)}
    t0 = min(s["ts"] for s in slices) if lo is None else lo
    t1 = max(s["ts"] + s["dur"] for s in slices) if hi is None else hi
    label_w, width, row_h, top = 430, 1600, 34, 40
    scale = (width - label_w - 20) / max(t1 - t0, 1e-3)
    x = lambda t: label_w + (t - t0) * scale
    height = top + row_h * len(tracks) + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="DejaVu Sans, sans-serif" font-size="11">',
           '<defs><marker id="a" markerWidth="8" markerHeight="8" refX="7" refY="4" orient="auto">'
           '<path d="M0,0 L8,4 L0,8 z" fill="#333"/></marker></defs>',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    for i, t in enumerate(tracks):
        y = top + i * row_h
        out.append(f'<rect x="0" y="{y}" width="{width}" height="{row_h}" fill="{"#f4f6f8" if i % 2 else "white"}"/>')
        out.append(f'<text x="8" y="{y + row_h / 2 + 4}" fill="#222">{html.escape(names[t][:72])}</text>')
    # Time axis.
    span = t1 - t0
    step = 10 ** max(0, len(str(int(span / 8))) - 1) if span >= 8 else 1
    tick = t0 - t0 % step
    while tick <= t1:
        if tick >= t0:
            out.append(f'<line x1="{x(tick):.1f}" y1="{top - 6}" x2="{x(tick):.1f}" y2="{height - 30}" stroke="#ddd"/>')
            out.append(f'<text x="{x(tick):.1f}" y="{top - 10}" fill="#555" text-anchor="middle">{tick - t0:.0f} µs</text>')
        tick += step
    # Ops and calls, then graph nodes on top of their segments.
    for s in sorted(slices, key=lambda s: s.get("cat") == "node"):
        if s["tid"] not in row:
            continue
        node = s.get("cat") == "node"
        y = top + row[s["tid"]] * row_h + (12 if node else 4)
        h = row_h - (16 if node else 8)
        left, right = max(x(s["ts"]), label_w), min(x(s["ts"] + s["dur"]), width)
        if right < label_w:
            continue
        w = max(right - left, 1.5)
        out.append(f'<rect x="{left:.1f}" y="{y}" width="{w:.1f}" height="{h}" rx="2" fill="{color(s["name"], s.get("cat"))}" '
                   f'stroke="#444" stroke-width="0.4"><title>{html.escape(s["name"])}</title></rect>')
        if w > 7 * min(len(s["name"]), 40):
            out.append(f'<text x="{left + 3:.1f}" y="{y + h / 2 + 4}" fill="#111">{html.escape(s["name"][:40])}</text>')
    starts = {e["id"]: e for e in events if e.get("ph") == "s"}
    for e in events:
        if e.get("ph") != "f" or e["id"] not in starts:
            continue
        s = starts[e["id"]]
        if s["tid"] not in row or e["tid"] not in row:
            continue
        if (lo is not None and s["ts"] < lo) or (hi is not None and e["ts"] > hi):
            continue
        if x(s["ts"]) < label_w:
            continue
        y0 = top + row[s["tid"]] * row_h + row_h / 2
        y1 = top + row[e["tid"]] * row_h + row_h / 2
        dash = ' stroke-dasharray="4,3"' if e.get("cat") == "enqueue" else ""
        out.append(f'<line x1="{x(s["ts"]):.1f}" y1="{y0}" x2="{x(e["ts"]):.1f}" y2="{y1}" stroke="#333" stroke-width="1"{dash} marker-end="url(#a)"/>')
    out.append(f'<text x="8" y="{height - 10}" fill="#555">cucpu trace: {len(slices)} slices on {len(tracks)} tracks; '
               'dashed arrows: API call to the op it enqueued; solid: dependencies between ops</text>')
    out.append("</svg>")
    with open(args[1], "w") as f:
        f.write("<!doctype html><html><body style=\"margin:0\">" + "\n".join(out) + "</body></html>\n")


if __name__ == "__main__":
    main()
