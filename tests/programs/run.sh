#!/bin/sh
# Runs one runtime-API program under cucpu and checks its verdict.
#   usage: run.sh CUCPU BIN_DIR NAME [ARGS...]
# Passes when the program exits 0 and prints "NAME: PASS"; the printf program
# must also print the lines its kernel formats.
cucpu=$1 dir=$2 name=$3
shift 3
prog=$name
[ "$name" = kernels_basic_shared ] && name=kernels_basic
out=$("$cucpu" run -- "$dir/$prog" "$@" 2>&1)
rc=$?
printf '%s\n' "$out"
[ $rc -eq 0 ] || { echo "exit status $rc"; exit 1; }
printf '%s\n' "$out" | grep -qx "$name: PASS" || exit 1
if [ "$name" = printf ]; then
  for line in "thread 0 says 100 0.00 hi" "thread 1 says 101 1.50 hi" "thread 2 says 102 3.00 hi"; do
    printf '%s\n' "$out" | grep -qxF "$line" || { echo "missing output: $line"; exit 1; }
  done
fi
exit 0
