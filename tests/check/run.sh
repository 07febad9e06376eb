#!/bin/sh
# The race checker's test: each scenario of the scenarios program runs under
# `cucpu check` and must report the number of races this table gives (and
# exit with the checker's status when it reports any); each also runs
# cleanly without the checker.
#   usage: run.sh CUCPU_LAUNCHER SCENARIOS_PROGRAM
set -u
cucpu="$1"
prog="$2"
failed=0
# Each run says which checks it wants (a suite run under CUCPU_CHECK must not leak in).
unset CUCPU_CHECK CUCPU_CHECK_INIT CUCPU_CHECK_ERROR_EXITCODE
# Under ThreadSanitizer (the tsan preset): the data the racy scenarios move.
TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS }suppressions=$(dirname "$0")/tsan.supp"
export TSAN_OPTIONS
while read -r name want; do
  [ -n "$name" ] || continue
  "$prog" "$name" > /dev/null 2>&1 || { echo "FAIL $name: fails without the checker"; failed=1; continue; }
  out="$("$cucpu" check --error-exitcode 3 -- "$prog" "$name" 2>&1)"
  rc=$?
  got="$(echo "$out" | sed -n 's/^cucpu check: \([0-9]*\) races\{0,1\} found$/\1/p')"
  want_rc=0
  [ "$want" -gt 0 ] && want_rc=3
  if [ "$got" = "$want" ] && [ "$rc" -eq "$want_rc" ]; then
    echo "ok   $name: $got race(s)"
  else
    echo "FAIL $name: ${got:-no count} race(s) reported, $want expected (exit status $rc, $want_rc expected)"
    echo "$out" | sed 's/^/    /'
    failed=1
  fi
done <<TABLE
missing_wait 1
two_writers 1
sync_read_during_async_write 1
free_async_while_read 1
graph_and_stream 1
non_blocking_and_legacy 1
event_wait 0
stream_synchronize 0
event_synchronize 0
context_synchronize 0
legacy_stream_rules 0
disjoint_halves 0
both_read 0
host_function_orders 0
memory_operations_order 0
graph_launches_in_order 0
reallocated_memory 0
kernels_missing_wait 1
batch_with_dependent_copies 1
attached_memory_on_another_stream 1
batch_of_independent_copies 0
attached_memory_on_its_stream 0
kernel_and_copy_with_event 0
kernels_disjoint_halves 0
kernel_atomics_on_two_streams 0
batch_source_read_during_call_while_written 1
batch_source_read_any_while_written 1
batch_source_read_during_call_after_sync 0
batch_source_in_stream_order 0
graph_nodes_unordered 1
graph_kernel_node_unordered 1
graph_nodes_with_edge 0
graph_nodes_through_a_node 0
graph_kernel_node_with_edge 0
graph_parallel_kernel_node_unordered 1
graph_parallel_kernel_node_with_edge 0
TABLE
# Racecheck: a block's threads reading what another warp wrote with no
# barrier between is reported, naming the kernel, the two PTX lines and the
# threads; with the barrier, or in a tree reduction, nothing is.
for name in shared_memory_race shared_memory_synced shared_tree_reduction; do
  out="$("$cucpu" check --error-exitcode 3 -- "$prog" "$name" 2>&1)"
  rc=$?
  got="$(echo "$out" | grep -c "^cucpu check: shared-memory race in kernel")"
  want=0
  [ "$name" = shared_memory_race ] && want=1
  if [ "$got" -eq "$want" ] && { [ "$want" -eq 0 ] || echo "$out" | grep -q "kernel shared_race, block (0,0,0), .* thread (.*) of another warp [a-z]* it at PTX line [0-9]*, with no barrier between"; }; then
    echo "ok   $name: $got shared-memory race(s)"
  else
    echo "FAIL $name: $got shared-memory race(s) reported, $want expected (exit status $rc)"
    echo "$out" | sed 's/^/    /'
    failed=1
  fi
done
# expect_report SCENARIO PATTERN...: under the checker, the scenario's
# output holds every PATTERN (grep regexes) and the checker's exit status.
# has_all PATTERN...: the last run's output ($out) holds every PATTERN.
has_all() {
  for pattern in "$@"; do
    echo "$out" | grep -q "$pattern" || return 1
  done
}
# verdict NAME OK SUMMARY: the result line; on failure, the run's output too.
verdict() {
  if [ "$2" -eq 1 ]; then
    echo "ok   $1: $3"
  else
    echo "FAIL $1: $3 (exit status $rc)"
    echo "$out" | sed 's/^/    /'
    failed=1
  fi
}
expect_report() {
  name="$1"
  shift
  out="$("$cucpu" check --error-exitcode 3 -- "$prog" "$name" 2>&1)"
  rc=$?
  ok=1
  [ "$rc" -eq 3 ] || ok=0
  has_all "$@" || ok=0
  verdict "$name" "$ok" "$([ "$ok" -eq 1 ] && echo reported || echo 'not reported as expected')"
}
# Synccheck: two warps waiting at different __syncthreads() are reported.
expect_report divergent_barrier \
  "divergent barrier in kernel divergent_barrier, block (0,0,0): thread (0,0,0) waits at the barrier of PTX line [0-9]*, thread (32,0,0) at PTX line [0-9]*"
# Memcheck: a misaligned load is reported with its thread and line.
expect_report kernel_misaligned_load \
  "misaligned global read of 4 bytes at 0x[0-9a-f]* in kernel load_misaligned, block (0,0,0), thread (0,0,0), PTX line [0-9]"
# Memcheck: a kernel's store past its allocation is reported, with the
# kernel, block, thread and PTX line, and the checker's exit status.
expect_report kernel_writes_past_the_end \
  "invalid global write of 4 bytes at 0x[0-9a-f]* in kernel write_past_end, block (7,0,0), thread (104,0,0), PTX line [0-9]" \
  "runs 4 bytes past the end of device memory"
# Races between the nodes of one graph launch name both nodes.
expect_report graph_nodes_unordered \
  "race on .* (4096 bytes) between two nodes of one graph launch" \
  "written by memset node (node 0)" "read by memcpy node 4096 B (node 1)" "no path of graph edges"
# Initcheck (--initcheck): a kernel reading device memory that nothing
# wrote is reported with the first unwritten byte; memory written by a
# memset, a kernel or a copy first is not.
expect_initcheck() {
  name="$1"
  want="$2"
  shift 2
  out="$("$cucpu" check --initcheck --error-exitcode 3 -- "$prog" "$name" 2>&1)"
  rc=$?
  got="$(echo "$out" | sed -n 's/^cucpu check: \([0-9]*\) uninitialized reads\{0,1\} found$/\1/p')"
  ok=1
  [ "${got:-0}" = "$want" ] || ok=0
  [ "$want" -eq 0 ] && [ "$rc" -ne 0 ] && ok=0
  [ "$want" -gt 0 ] && [ "$rc" -ne 3 ] && ok=0
  has_all "$@" || ok=0
  verdict "$name" "$ok" "${got:-0} uninitialized read(s) reported, $want expected"
}
expect_initcheck kernel_reads_unwritten 1 \
  "uninitialized global read of 4 bytes at 0x[0-9a-f]* in kernel copy_ints, block ([0-7],0,0), thread ([0-9]*,0,0), PTX line [0-9]" \
  "device memory at 0x[0-9a-f]* + [0-9]*, 4096 bytes) was never written"
expect_initcheck kernel_reads_half_written 1 "in kernel copy_ints, block (0,0,0), thread (0,0,0)" "+ 2048, 4096 bytes"
expect_initcheck kernel_reads_written 0
expect_initcheck kernel_reads_before_the_memset 1 "uninitialized global read of 4 bytes at 0x[0-9a-f]* in kernel copy_ints"
expect_initcheck graph_kernel_reads_what_a_node_set 0
# Without --initcheck, the unwritten read is not reported.
out="$("$cucpu" check -- "$prog" kernel_reads_unwritten 2>&1)" || { echo "FAIL kernel_reads_unwritten: reported without --initcheck"; echo "$out"; failed=1; }
# One report in full, as a user sees it.
"$cucpu" check -- "$prog" missing_wait 2>&1 | sed 's/^/    /'
exit $failed
