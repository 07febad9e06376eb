#!/usr/bin/env python3
"""Fails when an #include in src/ points up the layer stack.

The stack (docs/architecture.md), each layer importing only itself and the
layers below it:
    api    the C boundary: thin extern "C" entries
    core   objects and their rules, and the ops that act on them
    exec   the engine: ops, timelines, workers
    copy   copy walks and planning      ptx   the kernel compiler
                                        devrt the device runtime compiled kernels run on
                                        symbols code addresses to source lines (reports)
    base   helpers that depend on nothing
    blas   a library of its own (cuBLAS GEMMs on the host's BLAS): it reaches
           the driver through its exported C API only, and imports only
           base's header-only helpers
copy, ptx and symbols are leaves: none imports another, nor exec or core;
ptx imports devrt, which imports base alone, as symbols does.
"cuda.h" (the public ABI header) may be included anywhere.
usage: check_layers.py [SRC_DIR]
"""
import os
import re
import sys

ALLOWED = {
    "api": {"api", "core", "exec", "copy", "ptx", "devrt", "symbols", "base"},
    "core": {"core", "exec", "copy", "ptx", "devrt", "symbols", "base"},
    "exec": {"exec", "base"},
    "copy": {"copy", "base"},
    "ptx": {"ptx", "devrt", "base"},
    "devrt": {"devrt", "base"},
    "symbols": {"symbols", "base"},
    "base": {"base"},
    "blas": {"blas", "base"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "src")
    bad = []
    seen_layers = set()
    for layer in sorted(os.listdir(src)):
        path = os.path.join(src, layer)
        if not os.path.isdir(path):
            continue
        if layer not in ALLOWED:
            bad.append(f"{layer}/: a folder of src/ that is not a layer of the stack (add it to ALLOWED)")
            continue
        seen_layers.add(layer)
        for root, _, files in os.walk(path):
            for name in sorted(files):
                if not name.endswith((".h", ".cpp", ".inc")):
                    continue
                file = os.path.join(root, name)
                rel = os.path.relpath(file, src)
                with open(file, encoding="utf-8") as f:
                    for n, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m or m.group(1) == "cuda.h":
                            continue
                        target = m.group(1).split("/")[0] if "/" in m.group(1) else layer
                        if target not in ALLOWED[layer]:
                            bad.append(f"{rel}:{n}: {layer} includes {m.group(1)} ({target} is not below {layer})")
    missing = set(ALLOWED) - seen_layers
    if missing:
        bad.append("layers without a folder: " + ", ".join(sorted(missing)))
    for b in bad:
        print(b)
    if bad:
        print(f"{len(bad)} include(s) point up the stack")
        return 1
    print(f"includes point down: {', '.join(sorted(seen_layers))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
