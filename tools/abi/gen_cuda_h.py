#!/usr/bin/env python3
"""Derives include/cuda.h from a CUDA toolkit's cuda.h.

Only the ABI facts survive: declarations, enum values, struct layouts, the
version macros. Every comment and all documentation text are dropped; the
result is re-formatted and gets a short header of our own. Run it when the
ABI we target changes:  tools/abi/gen_cuda_h.py /usr/local/cuda/include/cuda.h
"""
import re
import subprocess
import sys

BANNER = """/*
 * cucpu: the CUDA 13.0 driver API, declared for programs built on machines
 * without the CUDA toolkit.  Sizes, offsets, enum values and symbol
 * versioning match NVIDIA's CUDA 13.0 cuda.h (tests/abi checks this).
 *
 * Macros a program may set before including this header:
 *   CUDA_API_PER_THREAD_DEFAULT_STREAM  stream functions bind to their
 *                                       _ptds/_ptsz (per-thread) variants.
 *   CUDA_ENABLE_DEPRECATED              silence deprecation attributes.
 * The library itself builds with __CUDA_API_VERSION_INTERNAL, which
 * exposes every versioned symbol under its own name.
 */
"""


def strip_comments(text: str) -> str:
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            out.append(" " if "\n" not in text[i:j] else "\n")
            i = j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text[i] == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def main() -> None:
    src = open(sys.argv[1], encoding="utf-8").read()
    body = strip_comments(src)
    body = "\n".join(line.rstrip() for line in body.splitlines())
    body = re.sub(r"\n{3,}", "\n\n", body).strip() + "\n"
    formatted = subprocess.run(
        ["clang-format", "--style={BasedOnStyle: LLVM, ColumnLimit: 100, "
         "SortIncludes: false, AlignConsecutiveMacros: true}",
         "--assume-filename=cuda.h"],
        input=body, capture_output=True, text=True, check=True).stdout
    sys.stdout.write(BANNER + formatted)


if __name__ == "__main__":
    main()
