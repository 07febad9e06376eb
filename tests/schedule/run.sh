#!/bin/sh
# The schedule-fuzzing test: a program with a missing cuStreamWaitEvent
# passes on its own, fails under `cucpu fuzz` within 20 seeds, and a
# failing seed fails again when run alone.
#   usage: run.sh CUCPU_LAUNCHER PROGRAM
set -u
# Holds of 30, 60 or 90 ms against the program's 15 ms of host work.
CUCPU_SCHEDULE_HOLD_MS=30
export CUCPU_SCHEDULE_HOLD_MS
cucpu="$1"
prog="$2"
"$prog" > /dev/null || { echo "the program fails without fuzzing"; exit 1; }
out="$("$cucpu" fuzz -n 20 -- "$prog" 2>&1)"
echo "$out"
seeds="$(echo "$out" | sed -n 's/^seed \([0-9]*\): .*/\1/p')"
[ -n "$seeds" ] || { echo "no seed out of 20 showed the bug"; exit 1; }
# A seed repeats its decisions; the host's timing between them may still
# vary, so at least one of the seeds found must fail in each of 3 runs.
for seed in $seeds; do
  fails=0
  for run in 1 2 3; do
    CUCPU_SCHEDULE="random:$seed" "$prog" > /dev/null || fails=$((fails + 1))
  done
  if [ "$fails" -eq 3 ]; then
    echo "seed $seed fails again, 3 times in 3"
    exit 0
  fi
done
echo "no seed among $seeds failed again in each of 3 runs"
exit 1
