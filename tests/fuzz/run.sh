#!/bin/sh
# Builds the API fuzzer (clang + libFuzzer) and runs it over the checked-in
# corpus (copied, so the run does not modify it).
#
#   tests/fuzz/run.sh [SECONDS] [libFuzzer options...]
#
# Environment: CUCPU_FUZZ_BUILD (build dir, default build/fuzz),
# CUCPU_FUZZ_JOBS (build parallelism, default nproc), CUCPU_FUZZ_SANITIZERS
# ("address,undefined", or "thread" for build/fuzz-tsan), and the harness's
# own variables (tests/fuzz/README.md). Crash artifacts go to BUILD/artifacts/.
# Exits 77 (ctest: skipped) when clang or its libFuzzer runtime is missing.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
[ $# -gt 0 ] && shift
cxx=${CUCPU_FUZZ_CXX:-clang++}
san=${CUCPU_FUZZ_SANITIZERS:-address,undefined}
case $san in
  *thread*) build=${CUCPU_FUZZ_BUILD:-$root/build/fuzz-tsan} ;;
  *) build=${CUCPU_FUZZ_BUILD:-$root/build/fuzz} ;;
esac

if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "fuzz_api skipped: $cxx not found (the fuzzer needs clang's libFuzzer)"
  exit 77
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' > "$probe/p.cpp"
if ! "$cxx" -fsanitize=fuzzer "$probe/p.cpp" -o "$probe/p" >/dev/null 2>&1; then
  echo "fuzz_api skipped: $cxx cannot link -fsanitize=fuzzer (no libFuzzer runtime)"
  exit 77
fi

cmake -S "$root/tests/fuzz" -B "$build" -DCMAKE_CXX_COMPILER="$cxx" -DCUCPU_FUZZ_SANITIZERS="$san" >/dev/null
cmake --build "$build" -j "${CUCPU_FUZZ_JOBS:-$(nproc)}"

mkdir -p "$probe/corpus" "$build/artifacts"
cp "$root"/tests/fuzz/corpus/* "$probe/corpus/" 2>/dev/null || true
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:report_signal_unsafe=0}
case $san in *thread*) export CUCPU_FUZZ_THREADS=${CUCPU_FUZZ_THREADS:-2} ;; esac
# libFuzzer's own failure code is 77, which ctest would read as "skipped".
# The RSS limit: the instrumented library with LLVM starts at about 3.1 GB
# and the checked-in corpus takes it to about 3.8 GB with no green context
# made; each green context's partition adds workers of its own (their
# sanitizer caches and kernel scratch): 6 GB leaves room on a 24 GB machine.
"$build/cucpu_fuzz_api" -max_total_time="$secs" -timeout=10 -rss_limit_mb=6144 -print_final_stats=1 -error_exitcode=1 \
  -artifact_prefix="$build/artifacts/" "$@" "$probe/corpus"
