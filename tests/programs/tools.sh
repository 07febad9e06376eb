#!/bin/sh
# Runs one runtime-API program under each of cucpu's tools and checks what
# a user would read: `cucpu check` finds no race (and the program passes),
# `cucpu trace` writes a Perfetto trace that read_perfetto.py reads, with a
# slice for a kernel whose name holds KERNEL and no mangled C++ name, and
# `cucpu fuzz` finds every schedule giving the first run's output. No run prints the compiler's
# LLVM remarks.
#   usage: tools.sh CUCPU BIN_DIR NAME KERNEL
cucpu=$1 dir=$2 name=$3 kernel=$4
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL $name: $*"; exit 1; }

out=$("$cucpu" check -- "$dir/$name" 2>&1) || { printf '%s\n' "$out"; fail "cucpu check exited $?"; }
printf '%s\n' "$out" | grep -qx "$name: PASS" || { printf '%s\n' "$out"; fail "no PASS under cucpu check"; }
printf '%s\n' "$out" | grep -qx "cucpu check: 0 races found" || { printf '%s\n' "$out"; fail "cucpu check reported"; }
printf '%s\n' "$out" | grep -q "^remark:" && fail "LLVM remarks on stderr"
echo "ok   $name under cucpu check"

out=$("$cucpu" trace -o "$tmp/trace.pftrace" -- "$dir/$name" 2>&1) || { printf '%s\n' "$out"; fail "cucpu trace exited $?"; }
python3 - "$here/../trace" "$tmp/trace.pftrace" "$kernel" <<'PY' || fail "the trace"
import sys
sys.path.insert(0, sys.argv[1])
import read_perfetto
events, problems = read_perfetto.read(sys.argv[2])
slices = [e for e in events if e.get("ph") == "X"]
kernels = [e["name"] for e in slices if sys.argv[3] in e["name"]]
# Kernels read as their source spells them: no slice keeps a mangled name.
mangled = sorted({e["name"] for e in slices if "_Z" in e["name"]})
if problems or not kernels or mangled:
    print("problems:", problems, "mangled:", mangled[:5], "slices:", sorted({e["name"] for e in slices})[:20])
    sys.exit(1)
print(f"ok   trace: {len(slices)} slices, {len(kernels)} of a kernel named *{sys.argv[3]}*")
PY

out=$("$cucpu" fuzz -n 2 -- "$dir/$name" 2>&1) || { printf '%s\n' "$out"; fail "cucpu fuzz found a schedule that differs"; }
echo "ok   $name under cucpu fuzz (2 schedules)"
