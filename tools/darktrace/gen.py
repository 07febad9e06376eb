#!/usr/bin/env python3
"""Writes the generated half of the darktrace shim: one forwarding stub per
driver export (stubs.S) and the name/trampoline tables (tables.inc).

usage: gen.py EXPORTS_LIST OUT_DIR"""
import sys

exports = [l.strip() for l in open(sys.argv[1]) if l.strip()]
# Written in C by darktrace.c: they rewrite what they return.
own = {"cuGetProcAddress", "cuGetProcAddress_v2", "cuGetExportTable"}
names = [n for n in exports if n not in own]
out = sys.argv[2]

with open(f"{out}/stubs.S", "w") as s:
    s.write(".text\n")
    for i, n in enumerate(names):
        # Entry: rsp = 8 mod 16. Seven pushes make it 0 mod 16 for the call.
        s.write(f""".globl {n}
.type {n},@function
{n}:
  pushq %rdi; pushq %rsi; pushq %rdx; pushq %rcx; pushq %r8; pushq %r9; pushq %rax
  subq $128, %rsp
""")
        for x in range(8):
            s.write(f"  movdqu %xmm{x}, {16*x}(%rsp)\n")
        s.write(f"  movl ${i}, %edi\n  leaq 128(%rsp), %rsi\n  call dt_on_call@PLT\n")
        for x in range(8):
            s.write(f"  movdqu {16*x}(%rsp), %xmm{x}\n")
        s.write(f"""  addq $128, %rsp
  popq %rax; popq %r9; popq %r8; popq %rcx; popq %rdx; popq %rsi; popq %rdi
  jmpq *dt_real+{8*i}(%rip)
.size {n}, .-{n}
""")
    s.write(f".bss\n.globl dt_real\n.hidden dt_real\n.align 8\ndt_real: .zero {8*len(names)}\n")
    s.write(".section .data.rel.ro\n.globl dt_stubs\n.hidden dt_stubs\n.align 8\ndt_stubs:\n")
    for n in names:
        s.write(f"  .quad {n}\n")
    s.write('.section .note.GNU-stack,"",@progbits\n')

with open(f"{out}/tables.inc", "w") as t:
    t.write(f"enum {{ kExports = {len(names)} }};\n")
    t.write("static const char* const dt_names[] = {\n")
    for n in names:
        t.write(f'  "{n}",\n')
    t.write("};\n")
    T, S = 16, 64
    t.write(f"enum {{ kTables = {T}, kSlots = {S} }};\n")
    for ti in range(T):
        for si in range(S):
            t.write(f"static u64 tr_{ti}_{si}(u64 a, u64 b, u64 c, u64 d, u64 e, u64 f) "
                    f"{{ return dt_slot({ti}, {si}, a, b, c, d, e, f); }}\n")
    t.write("static void* const dt_tramps[kTables][kSlots] = {\n")
    for ti in range(T):
        t.write("  {" + ", ".join(f"(void*)tr_{ti}_{si}" for si in range(S)) + "},\n")
    t.write("};\n")
