// Partitions of the engine: what a green context's share of the device's
// multiprocessors is in cucpu.
//
// The virtual device has one multiprocessor (SM) per worker of the shared
// pool (cuDeviceGetAttribute's MULTIPROCESSOR_COUNT is worker_count()). The
// mapping below is written for any SM count all the same: SM i of S falls to
// worker i * W / S of W, so a run of S / W SMs shares a worker when there
// are more SMs than workers, and no two SMs do when there are not.
//
// A set of SMs (a green context's) maps to the set of workers its SMs fall
// to, and each distinct worker set runs on a pool of its own
// (partition_pool): as many workers as the set has, made the first time the
// set is asked for and kept for the life of the process. Two green contexts
// with disjoint SM sets therefore run on disjoint threads and never wait
// for each other's work; two of one set share a pool. The shared pool (all
// workers) runs every other context's work, as a GPU's ordinary contexts use
// every SM, green contexts' included.
#pragma once

#include <bitset>
#include <cstddef>

namespace cucpu {

class Scheduler;

// The most workers a pool has (CUCPU_WORKERS is clamped to it), and so the
// most SMs a virtual device has.
constexpr size_t kMaxWorkers = 256;
// The shared pool's size: CUCPU_WORKERS, or one per core (at least 2).
size_t configured_workers();

using WorkerSet = std::bitset<kMaxWorkers>;
using SmSet = std::bitset<kMaxWorkers>;

// The worker that SM `sm` of `sm_count` runs on, of `workers`.
inline size_t worker_of_sm(size_t sm, size_t sm_count, size_t workers) { return sm * workers / sm_count; }
// The workers that the SMs of `sms` (of `sm_count`) run on, of the shared pool's.
WorkerSet workers_of(const SmSet& sms, size_t sm_count);
// The pool of the workers in `set` (not empty): made on first use, never
// destroyed. At most kMaxPartitions distinct sets get pools of their own;
// beyond that a set shares the shared pool (and says so once on stderr).
constexpr size_t kMaxPartitions = 64;
Scheduler& partition_pool(const WorkerSet& set);

}  // namespace cucpu
