#!/usr/bin/env python3
"""Generates the C boundary from the one table, src/api/entry_points.inc.

Each row is CU_ENTRY(symbol, base, default_since, legacy_since, ptds_since)
for an entry point cucpu leaves unimplemented (its weak stub answers
CUDA_ERROR_NOT_SUPPORTED, stubs.cpp), or, for an implemented one,
  CU_ENTRY(symbol, base, d, l, p, family, gate, impl, stream, (params)[, trace(args)])
  family  the file src/api/FAMILY.cpp that holds impl; its entries are
          generated into src/api/entries/FAMILY.inc, which it includes last
  gate    api::call's gate (src/api/entry.h Gate), bits joined by |:
          kDefault, kNoInit, kInHostFn (host-function permission), and the
          capture rule: kUnsafeInCapture (call() applies the capture mode
          before the body), kCaptured (the body routes its stream work into
          a capture), kRefusedInCapture (refused on a capturing stream); a
          debug build aborts when a body routes capture against its row.
          Or untraced: the entry calls impl directly (cuGetErrorName/String,
          which the tracer itself uses)
  impl    the implementing function, called with the entry's arguments
  stream  legacy or per_thread: impl takes an api::NullStream first, saying
          what a NULL stream handle means; - otherwise
  params  the C parameter list
  trace   what the trace prints, when not every parameter (a struct passed
          by value)
Writes src/api/entries/*.inc and docs/entry-points.md.
usage: gen.py [--check]   (--check: fail when the files are not up to date)
"""
import collections
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
TABLE = os.path.join(ROOT, "src", "api", "entry_points.inc")


def split_args(text):
    """Splits a macro argument list at top-level commas."""
    out, depth, cur = [], 0, ""
    for c in text:
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        out.append(cur.strip())
    return out


def param_names(params):
    names = []
    for p in split_args(params):
        if not p or p == "void":
            continue
        m = re.search(r"(\w+)\s*(\[[^\]]*\])?$", p)
        names.append(m.group(1))
    return names


BUILTIN_SCALARS = {"int", "unsigned", "unsigned int", "signed int", "long", "unsigned long", "long long",
                   "unsigned long long", "short", "unsigned short", "char", "unsigned char", "signed char",
                   "size_t", "float", "double", "cuuint32_t", "cuuint64_t"}


def scalar_types():
    """Types from include/cuda.h that a lambda may copy: integers, handles
    (pointers to opaque structs) and function pointers. Enums are left
    out: a caller may pass any bit pattern, and copying one as its enum
    type is undefined (UBSan's enum check); structs and unions too."""
    text = open(os.path.join(ROOT, "include", "cuda.h")).read()
    out = set(BUILTIN_SCALARS)
    out.update(re.findall(r"typedef\s+struct\s+\w+\s*\*\s*(\w+)\s*;", text))
    out.update(re.findall(r"typedef\s+[^;{}]*?\(\s*(?:CUDA_CB\s+)?\*\s*(\w+)\s*\)\s*\(", text))
    aliases = re.findall(r"typedef\s+((?:unsigned\s+|signed\s+)?(?:long\s+long|\w+))\s+(\w+)\s*;", text)
    changed = True
    while changed:
        changed = False
        for base, name in aliases:
            if " ".join(base.split()) in out and name not in out:
                out.add(name)
                changed = True
    return out


def captures(params, scalars):
    """The generated body's capture list: scalars, handles and pointers by
    value (they stay in registers), anything else by reference."""
    out = []
    for p in split_args(params):
        if not p or p == "void":
            continue
        name = re.search(r"(\w+)\s*(\[[^\]]*\])?$", p).group(1)
        ty = " ".join(p[: p.rindex(name)].replace("const", " ").split())
        by_value = "*" in p or "[" in p or ty in scalars
        out.append(name if by_value else "&" + name)
    return ", ".join(out)


SCALARS = scalar_types()


def read_table():
    rows = []
    for line in open(TABLE):
        line = line.strip()
        if not line.startswith("CU_ENTRY("):
            continue
        args = split_args(line[len("CU_ENTRY("):-1])
        row = {"symbol": args[0], "base": args[1], "since": args[2:5]}
        if len(args) > 5:
            row.update(family=args[5], gate=args[6], impl=args[7], stream=args[8], params=args[9][1:-1])
            row["trace"] = args[10][len("trace("):-1] if len(args) > 10 else None
        rows.append(row)
    return rows


def gate_expr(gate):
    return " | ".join("::cucpu::api::" + g.strip() for g in gate.split("|"))


def entry(row):
    sym, params = row["symbol"], row["params"]
    names = param_names(params)
    args = ", ".join(names)
    call_args = args
    if row["stream"] != "-":
        ns = "::cucpu::api::NullStream::" + ("kLegacy" if row["stream"] == "legacy" else "kPerThread")
        call_args = ns + (", " + args if args else "")
    call = f"{row['impl']}({call_args})"
    decl = f"CUresult {sym}({params if params else 'void'})"
    if row["gate"] == "untraced":
        return f"{decl} {{ return {call}; }}\n"
    trace = row["trace"] if row["trace"] is not None else args
    tail = f", {trace}" if trace else ""
    cap = captures(params, SCALARS)
    return (f"{decl} {{\n  return ::cucpu::api::call(\"{sym}\", {gate_expr(row['gate'])}, [{cap}] {{ return {call}; }}{tail});\n}}\n")


def outputs(rows):
    files = {}
    by_family = collections.defaultdict(list)
    for r in rows:
        if "family" in r:
            by_family[r["family"]].append(r)
    for fam, rs in sorted(by_family.items()):
        text = (f"// Generated by tools/boundary/gen.py from src/api/entry_points.inc: the\n"
                f"// extern \"C\" entries of src/api/{fam}.cpp, which includes this last.\n"
                f"// Edit the table, not this file.\n"
                f"extern \"C\" {{\n\n" + "\n".join(entry(r) for r in rs) + "\n}  // extern \"C\"\n")
        files[os.path.join(ROOT, "src", "api", "entries", fam + ".inc")] = text
    impl = [r for r in rows if "family" in r]
    stub = [r for r in rows if "family" not in r]
    doc = ["# Entry points", "",
           "Generated by `tools/boundary/gen.py` from `src/api/entry_points.inc`, the",
           "one table of the driver's entry points (CUDA 13.0's exports). An",
           "unimplemented entry point answers `CUDA_ERROR_NOT_SUPPORTED` and names",
           "itself once in the log.", "",
           f"{len(impl)} of {len(rows)} implemented.", "",
           "## Implemented, by family", ""]
    for fam, rs in sorted(by_family.items()):
        doc.append(f"- **{fam}** (`src/api/{fam}.cpp`, {len(rs)}): " + ", ".join(f"`{r['symbol']}`" for r in rs))
    rules = [("kUnsafeInCapture", "Potentially unsafe during a capture: the calling thread's capture mode is applied before any argument is checked (it may invalidate captures and answer `CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`)"),
             ("kCaptured", "On a capturing stream, the work becomes a node of the capture's graph"),
             ("kRefusedInCapture", "Refused on a capturing stream")]
    doc += ["", "## Capture rules", "",
            "What an implemented entry does while a stream capture runs; entries not listed ignore captures.",
            "An entry under both stream rules is captured or refused by its arguments (a stream-ordered",
            "free of memory that no graph owns is refused).", ""]
    for bit, text in rules:
        rs = [r for r in impl if bit in r["gate"]]
        doc.append(f"- **{bit}** ({len(rs)}). {text}: " + ", ".join(f"`{r['symbol']}`" for r in rs))
    doc += ["", "## Not implemented", ""]
    groups = collections.defaultdict(list)
    for r in stub:
        m = re.match(r"cu([A-Z][a-z]+)", r["symbol"])
        groups[m.group(1) if m else "other"].append(r["symbol"])
    for g, syms in sorted(groups.items()):
        doc.append(f"- **{g}** ({len(syms)}): " + ", ".join(f"`{s}`" for s in syms))
    files[os.path.join(ROOT, "docs", "entry-points.md")] = "\n".join(doc) + "\n"
    return files


def main():
    check = "--check" in sys.argv
    files = outputs(read_table())
    stale = []
    for path, text in files.items():
        old = open(path).read() if os.path.exists(path) else None
        if old == text:
            continue
        if check:
            stale.append(os.path.relpath(path, ROOT))
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
    gen_dir = os.path.join(ROOT, "src", "api", "entries")
    if os.path.isdir(gen_dir):
        for name in os.listdir(gen_dir):
            path = os.path.join(gen_dir, name)
            if path not in files:
                if check:
                    stale.append(os.path.relpath(path, ROOT) + " (no family in the table)")
                else:
                    os.remove(path)
    if stale:
        print("out of date; run tools/boundary/gen.py:", ", ".join(stale))
        return 1
    print(f"{len(files)} files {'up to date' if check else 'written'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
