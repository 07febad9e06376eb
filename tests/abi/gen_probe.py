#!/usr/bin/env python3
"""Writes a C probe that prints every enum value, struct size, alignment and
field offset declared by a cuda.h.  Compiling the probe against our header and
against the toolkit's, then diffing the outputs, proves the two ABIs agree.

usage: gen_probe.py CUDA_H OUT.c   (needs clang for its JSON AST dump)
"""
import json
import subprocess
import sys


def ast_of(header):
    out = subprocess.run(
        ["clang", "-x", "c", "-fsyntax-only", "-Xclang", "-ast-dump=json",
         "-D__CUDA_API_VERSION_INTERNAL", header],
        capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def field_paths(record, prefix):
    """Yields member access paths ("a", "u.b") for every named field, going
    into anonymous members and into records defined inline for a field."""
    last_record = None
    for node in record.get("inner", []):
        kind = node.get("kind")
        if kind == "RecordDecl":
            last_record = node if node.get("completeDefinition") else None
            continue
        if kind != "FieldDecl":
            continue
        name = node.get("name")
        qual = node.get("type", {}).get("qualType", "")
        inline = last_record is not None and (
            "unnamed" in qual or (last_record.get("name") and last_record["name"] in qual))
        if not name:
            if inline:
                yield from field_paths(last_record, prefix)
        else:
            yield prefix + name
            if inline and "[" not in qual:
                yield from field_paths(last_record, prefix + name + ".")
        last_record = None


def main():
    header, out = sys.argv[1], sys.argv[2]
    ast = ast_of(header)
    enums, records = [], []
    for node in ast.get("inner", []):
        kind = node.get("kind")
        if kind == "EnumDecl":
            for c in node.get("inner", []):
                if c.get("kind") == "EnumConstantDecl":
                    enums.append(c["name"])
        elif kind == "TypedefDecl":
            qual = node["type"]["qualType"]
            inner = node.get("inner", [{}])[0]
            decl = inner.get("ownedTagDecl") or inner.get("decl")
            if (qual.startswith(("struct ", "union ")) and "*" not in qual
                    and node["name"].startswith(("CU", "cu"))):
                records.append((node["name"], node.get("_rec")))
    by_id = {n.get("id"): n for n in ast.get("inner", []) if n.get("kind") == "RecordDecl"}
    lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "cuda.h"', "int main(void) {"]
    for e in sorted(set(enums)):
        lines.append(f'  printf("enum {e} %lld\\n", (long long){e});')
    for tname, _ in records:
        node = next(n for n in ast["inner"] if n.get("kind") == "TypedefDecl" and n["name"] == tname)
        inner = node["inner"][0]
        ref = (inner.get("ownedTagDecl") or inner.get("inner", [{}])[0].get("ownedTagDecl")
               or inner.get("inner", [{}])[0].get("decl") or {})
        rec = by_id.get(ref.get("id"))
        if rec is None:
            name = inner.get("inner", [{}])[0].get("decl", {}).get("name")
            rec = next((n for n in ast["inner"] if n.get("kind") == "RecordDecl"
                        and n.get("name") == name and n.get("completeDefinition")), None)
        if rec is None or not rec.get("completeDefinition"):
            continue
        lines.append(f'  printf("size {tname} %zu %zu\\n", sizeof({tname}), _Alignof({tname}));')
        for path in field_paths(rec, ""):
            lines.append(f'  printf("offset {tname}.{path} %zu\\n", offsetof({tname}, {path}));')
    lines += ["  return 0;", "}"]
    open(out, "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
