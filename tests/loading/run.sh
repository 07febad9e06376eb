#!/bin/sh
# libcuda.so.1 must load with dlopen() into a process that already holds
# other libraries' thread-local storage, as cudart and cuda-python load it:
# glibc gives such a library only a small surplus of static TLS. Checks the
# library's TLS block is small (base/thread_heap.h keeps per-thread state on
# the heap) and that Python's ctypes (which has loaded its own modules
# first) can dlopen it and call cuInit.
#   usage: run.sh LIBCUDA
set -u
lib="$1"
tls=$(readelf -lW "$lib" | awk '$1 == "TLS" { print $6 }')
tls=$(printf "%d" "${tls:-0}")

echo "TLS block: $tls bytes"
if [ "$tls" -gt 512 ]; then
  echo "FAIL: the TLS block is over 512 bytes; move per-thread state behind a ThreadHeap"
  readelf -sW "$lib" | awk '$4 == "TLS"' | sort -k3 -n -r | head -10
  exit 1
fi
# A sanitizer's runtime must come first in a process: a sanitized build
# cannot be loaded into a Python that was started without it.
if readelf -dW "$lib" | grep -Eq 'NEEDED.*lib(a|t|ub)san'; then
  echo "skipped the dlopen from Python: a sanitized build"
  exit 77
fi
python3 -c "
import ctypes, sys
l = ctypes.CDLL(sys.argv[1])
r = l.cuInit(0)
print('dlopen from python: cuInit =', r)
sys.exit(0 if r == 0 else 1)
" "$lib"
