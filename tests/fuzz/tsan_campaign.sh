#!/bin/sh
# The ThreadSanitizer campaign: replays a corpus with two threads driving one
# pool (CUCPU_FUZZ_THREADS=2), round after round (each round interleaves the
# threads anew), until CALLS API calls have run or a report stops it.
# The TSan build has no coverage counters (they would race with the
# library's workers), so it replays rather than mutates.
#
#   tests/fuzz/tsan_campaign.sh [CORPUS_DIR] [CALLS]
#   (build first: CUCPU_FUZZ_SANITIZERS=thread tests/fuzz/run.sh 0, or
#    cmake -S tests/fuzz -B build/fuzz-tsan -DCMAKE_CXX_COMPILER=clang++ -DCUCPU_FUZZ_SANITIZERS=thread)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
corpus=${1:-$root/tests/fuzz/corpus}
want=${2:-10000000}
bin=${CUCPU_FUZZ_BUILD:-$root/build/fuzz-tsan}/cucpu_fuzz_api
total=0
round=0
while [ "$total" -lt "$want" ]; do
  round=$((round + 1))
  out=$(CUCPU_FUZZ_THREADS=2 TSAN_OPTIONS=halt_on_error=1:report_signal_unsafe=0:suppressions=$root/tests/fuzz/tsan.supp timeout 600 "$bin" -runs=0 -timeout=10 "$corpus" 2>&1)
  rc=$?
  n=$(echo "$out" | sed -n 's/^cucpu-fuzz: \([0-9]*\) API calls.*/\1/p')
  if [ $rc -ne 0 ] || echo "$out" | grep -q "ThreadSanitizer\|INVARIANT\|ERROR:"; then
    echo "round $round: exit $rc (the whole output: tsan_round_$round.log)"
    echo "$out" > "tsan_round_$round.log"
    echo "$out" | grep -A40 "ThreadSanitizer\|INVARIANT\|ERROR:" | head -80
    echo "$out" | tail -20
    exit 1
  fi
  total=$((total + ${n:-0}))
  echo "round $round: ${n:-0} calls, $total in all"
done
echo "tsan campaign: $total API calls in $round rounds, no report"
