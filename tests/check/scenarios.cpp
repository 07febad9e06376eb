// Programs for the race checker (core/check.h, `cucpu check`): each
// scenario, named by the first argument, either has a stream-ordering bug
// (two operations on one buffer, one writing, that nothing orders) or
// orders its operations in one of the ways CUDA provides. run.sh runs each
// under CUCPU_CHECK=1 and compares the number of races reported with the
// number the table there expects. Every scenario also runs correctly
// without the checker: the bugs pass by luck, as they do on a GPU.
#include <cuda.h>

#include "../common/check_cu.h"

#include <atomic>
#include <thread>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using test_support::check;
constexpr size_t kBytes = 4096;

struct Env {
  CUstream a, b, blocking_a, blocking_b;
  CUdeviceptr buf, other;
  std::vector<unsigned char> host = std::vector<unsigned char>(kBytes, 7);
  CUmodule module = nullptr;  // tests/kernels/checked.cu
};

#ifndef CHECK_KERNELS_PTX
#define CHECK_KERNELS_PTX "tests/kernels/ptx/checked.sm90.ptx"
#endif

CUfunction kernel(Env& e, const char* name) {
  if (!e.module) {
    FILE* f = std::fopen(CHECK_KERNELS_PTX, "rb");
    if (!f) {
      std::fprintf(stderr, "cannot read %s\n", CHECK_KERNELS_PTX);
      std::exit(2);
    }
    std::string text;
    char chunk[4096];
    for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;) text.append(chunk, n);
    std::fclose(f);
    check(cuModuleLoadData(&e.module, text.c_str()), "cuModuleLoadData");
  }
  CUfunction fn;
  check(cuModuleGetFunction(&fn, e.module, name), "cuModuleGetFunction");
  return fn;
}

// Launches `name` over n threads (blocks of 128) with the given arguments.
template <class... A>
void launch(Env& e, const char* name, CUstream s, unsigned n, A... args) {
  void* params[] = {&args...};
  check(cuLaunchKernel(kernel(e, name), (n + 127) / 128, 1, 1, 128, 1, 1, 0, s, params, nullptr), name);
}

// A memset node's parameters: `bytes` bytes of `value` at dst.
CUDA_MEMSET_NODE_PARAMS set_bytes(CUdeviceptr dst, size_t bytes, unsigned value) {
  CUDA_MEMSET_NODE_PARAMS m{};
  m.dst = dst;
  m.elementSize = 1;
  m.width = bytes;
  m.height = 1;
  m.value = value;
  return m;
}

// Adds a node to `graph` launching `name` over n threads (blocks of 128)
// after `deps` (`ndeps` of them).
CUgraphNode add_kernel_node(Env& e, CUgraph graph, const char* name, int n, void** params, const CUgraphNode* deps,
                            size_t ndeps) {
  CUDA_KERNEL_NODE_PARAMS k{};
  k.func = kernel(e, name);
  k.gridDimX = (n + 127) / 128;
  k.gridDimY = k.gridDimZ = 1;
  k.blockDimX = 128;
  k.blockDimY = k.blockDimZ = 1;
  k.kernelParams = params;
  CUgraphNode node;
  check(cuGraphAddKernelNode(&node, graph, deps, ndeps, &k), "cuGraphAddKernelNode");
  return node;
}

// An instantiated graph of one memset node that sets kBytes at dst.
struct MemsetGraph {
  CUgraph graph;
  CUgraphExec exec;
  MemsetGraph(CUdeviceptr dst, unsigned value) {
    check(cuGraphCreate(&graph, 0), "cuGraphCreate");
    const CUDA_MEMSET_NODE_PARAMS m = set_bytes(dst, kBytes, value);
    CUcontext ctx;
    check(cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
    CUgraphNode n;
    check(cuGraphAddMemsetNode(&n, graph, nullptr, 0, &m, ctx), "cuGraphAddMemsetNode");
    check(cuGraphInstantiate(&exec, graph, 0), "cuGraphInstantiate");
  }
  ~MemsetGraph() {
    check(cuGraphExecDestroy(exec), "cuGraphExecDestroy");
    check(cuGraphDestroy(graph), "cuGraphDestroy");
  }
};

// A graph of two nodes touching `buf` (n ints): `first` writes it (a
// memset node, or a kernel node filling it), then a memcpy node reads it
// into `out`; the read depends on the write through `edges` edges (0: not
// at all; 2: through an empty node between them). A kernel node of many
// blocks runs in parallel, as an op of its own.
struct TwoNodeGraph {
  CUgraph graph;
  CUgraphExec exec;
  TwoNodeGraph(Env& e, bool kernel_first, int edges, CUdeviceptr buf, CUdeviceptr out, int n) {
    check(cuGraphCreate(&graph, 0), "cuGraphCreate");
    CUcontext ctx;
    check(cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
    CUgraphNode first, between, read;
    CUdeviceptr p = buf;
    int value = 9;
    void* params[] = {&p, &value, &n};
    if (kernel_first) {
      first = add_kernel_node(e, graph, "fill", n, params, nullptr, 0);
    } else {
      const CUDA_MEMSET_NODE_PARAMS m = set_bytes(buf, n * sizeof(int), 1);
      check(cuGraphAddMemsetNode(&first, graph, nullptr, 0, &m, ctx), "cuGraphAddMemsetNode");
    }
    CUgraphNode dep = first;
    if (edges == 2) {
      check(cuGraphAddEmptyNode(&between, graph, &first, 1), "cuGraphAddEmptyNode");
      dep = between;
    }
    CUDA_MEMCPY3D c{};
    c.srcMemoryType = c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = buf;
    c.dstDevice = out;
    c.WidthInBytes = n * sizeof(int);
    c.Height = c.Depth = 1;
    check(cuGraphAddMemcpyNode(&read, graph, edges ? &dep : nullptr, edges ? 1 : 0, &c, ctx), "cuGraphAddMemcpyNode");
    check(cuGraphInstantiate(&exec, graph, 0), "cuGraphInstantiate");
  }
  ~TwoNodeGraph() {
    check(cuGraphExecDestroy(exec), "cuGraphExecDestroy");
    check(cuGraphDestroy(graph), "cuGraphDestroy");
  }
};

// The program's own ordering, which the checker cannot see: a host
// function sets a flag that the program's thread waits for.
std::atomic<bool> g_read_done{false};
void CUDA_CB set_read_done(void*) { g_read_done.store(true); }

void CUDA_CB set_from_host_function(void* p) {
  auto* e = static_cast<Env*>(p);
  // Inside a host function: a memset on another stream is accepted.
  check(cuMemsetD8Async(e->buf, 3, kBytes, e->b), "cuMemsetD8Async in a host function");
}

int run(const std::string& name, Env& e) {
  unsigned char* h = e.host.data();
  CUevent ev;
  check(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  if (name == "missing_wait") {
    check(cuMemcpyHtoDAsync(e.buf, h, kBytes, e.a), "HtoD");
    check(cuMemcpyDtoHAsync(h, e.buf, kBytes, e.b), "DtoH");
  } else if (name == "two_writers") {
    check(cuMemsetD8Async(e.buf, 1, kBytes, e.a), "memset a");
    check(cuMemsetD8Async(e.buf + 100, 2, 100, e.b), "memset b");
  } else if (name == "sync_read_during_async_write") {
    check(cuMemsetD8Async(e.buf, 1, kBytes, e.a), "memset a");
    check(cuMemcpyDtoH(h, e.buf, kBytes), "cuMemcpyDtoH");
  } else if (name == "free_async_while_read") {
    CUdeviceptr p;
    check(cuMemAllocAsync(&p, kBytes, e.a), "cuMemAllocAsync");
    check(cuMemsetD8Async(p, 0, kBytes, e.a), "memset a");
    check(cuEventRecord(ev, e.a), "record");
    check(cuStreamWaitEvent(e.b, ev, 0), "wait");
    check(cuMemcpyDtoDAsync(e.other, p, kBytes, e.b), "DtoD b");
    // The free is enqueued once the read has run (a flag a host function
    // sets), so the run is safe; but no CUDA ordering says so.
    check(cuLaunchHostFunc(e.b, set_read_done, nullptr), "cuLaunchHostFunc");
    while (!g_read_done.load()) std::this_thread::yield();
    check(cuMemFreeAsync(p, e.a), "cuMemFreeAsync");  // missing: a waits for b first
    const CUresult r = cuCtxSynchronize();
    std::exit(r == CUDA_SUCCESS || r == CUDA_ERROR_ILLEGAL_ADDRESS ? 0 : 2);
  } else if (name == "graph_and_stream") {
    MemsetGraph g(e.buf, 5);
    check(cuGraphLaunch(g.exec, e.a), "cuGraphLaunch");
    check(cuMemcpyDtoHAsync(h, e.buf, kBytes, e.b), "DtoH");
    check(cuStreamSynchronize(e.a), "sync");
    check(cuStreamSynchronize(e.b), "sync");
  } else if (name == "event_wait") {
    check(cuMemcpyHtoDAsync(e.buf, h, kBytes, e.a), "HtoD");
    check(cuEventRecord(ev, e.a), "record");
    check(cuStreamWaitEvent(e.b, ev, 0), "wait");
    check(cuMemcpyDtoHAsync(h, e.buf, kBytes, e.b), "DtoH");
  } else if (name == "stream_synchronize") {
    check(cuMemsetD8Async(e.buf, 1, kBytes, e.a), "memset a");
    check(cuStreamSynchronize(e.a), "sync");
    check(cuMemsetD8Async(e.buf, 2, kBytes, e.b), "memset b");
  } else if (name == "event_synchronize") {
    check(cuMemsetD8Async(e.buf, 1, kBytes, e.a), "memset a");
    check(cuEventRecord(ev, e.a), "record");
    check(cuEventSynchronize(ev), "cuEventSynchronize");
    check(cuMemcpyDtoH(h, e.buf, kBytes), "cuMemcpyDtoH");
  } else if (name == "context_synchronize") {
    check(cuMemsetD8Async(e.buf, 1, kBytes, e.a), "memset a");
    check(cuCtxSynchronize(), "cuCtxSynchronize");
    check(cuMemsetD8Async(e.buf, 2, kBytes, e.b), "memset b");
  } else if (name == "legacy_stream_rules") {
    // Blocking streams and the legacy stream order each other.
    check(cuMemsetD8Async(e.buf, 1, kBytes, e.blocking_a), "memset blocking a");
    check(cuMemsetD8Async(e.buf, 2, kBytes, nullptr), "memset legacy");
    check(cuMemsetD8Async(e.buf, 3, kBytes, e.blocking_b), "memset blocking b");
    check(cuMemcpyDtoH(h, e.buf, kBytes), "cuMemcpyDtoH");
  } else if (name == "non_blocking_and_legacy") {
    // A non-blocking stream is not ordered with the legacy stream.
    check(cuMemsetD8Async(e.buf, 1, kBytes, e.a), "memset a");
    check(cuMemsetD8Async(e.buf, 2, kBytes, nullptr), "memset legacy");
  } else if (name == "disjoint_halves") {
    check(cuMemsetD8Async(e.buf, 1, kBytes / 2, e.a), "memset a");
    check(cuMemsetD8Async(e.buf + kBytes / 2, 2, kBytes / 2, e.b), "memset b");
  } else if (name == "both_read") {
    check(cuMemcpyDtoHAsync(h, e.buf, kBytes / 2, e.a), "DtoH a");
    check(cuMemcpyDtoDAsync(e.other, e.buf, kBytes, e.b), "DtoD b");
  } else if (name == "host_function_orders") {
    // The host function runs after a's memset; what it enqueues on b is
    // ordered after it.
    check(cuMemsetD8Async(e.buf, 1, kBytes, e.a), "memset a");
    check(cuLaunchHostFunc(e.a, set_from_host_function, &e), "cuLaunchHostFunc");
    check(cuStreamSynchronize(e.a), "sync");
    check(cuStreamSynchronize(e.b), "sync");
  } else if (name == "memory_operations_order") {
    CUdeviceptr flag = e.other;
    check(cuMemsetD32(flag, 0, 1), "cuMemsetD32");
    check(cuMemsetD8Async(e.buf, 1, kBytes, e.a), "memset a");
    check(cuStreamWriteValue32(e.a, flag, 1, 0), "cuStreamWriteValue32");
    check(cuStreamWaitValue32(e.b, flag, 1, CU_STREAM_WAIT_VALUE_EQ), "cuStreamWaitValue32");
    check(cuMemcpyDtoHAsync(h, e.buf, kBytes, e.b), "DtoH b");
  } else if (name == "graph_launches_in_order") {
    MemsetGraph g(e.buf, 0);
    check(cuGraphLaunch(g.exec, e.a), "cuGraphLaunch a");
    check(cuGraphLaunch(g.exec, e.b), "cuGraphLaunch b");  // launches of one exec never overlap
    check(cuStreamSynchronize(e.a), "sync");
    check(cuStreamSynchronize(e.b), "sync");
  } else if (name == "reallocated_memory") {
    CUdeviceptr p;
    check(cuMemAlloc(&p, kBytes), "cuMemAlloc");
    check(cuMemsetD8Async(p, 1, kBytes, e.a), "memset a");
    check(cuMemFree(p), "cuMemFree");  // synchronizes
    check(cuMemAlloc(&p, kBytes), "cuMemAlloc");
    check(cuMemsetD8Async(p, 2, kBytes, e.b), "memset b");
    check(cuStreamSynchronize(e.b), "sync");
    check(cuMemFree(p), "cuMemFree");
  } else if (name == "batch_with_dependent_copies" || name == "batch_of_independent_copies") {
    // buf -> other, then (dependent) other -> buf + 2048, or an unrelated
    // second copy. The copies of one batch run in no set order.
    const bool dependent = name == "batch_with_dependent_copies";
    CUdeviceptr dsts[2] = {e.other, dependent ? e.buf + 2048 : e.other + 2048};
    CUdeviceptr srcs[2] = {e.buf, dependent ? e.other : e.buf + 1024};
    size_t sizes[2] = {1024, 1024};
    CUmemcpyAttributes attr{};
    attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    attr.srcLocHint.type = attr.dstLocHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
    size_t attr_index = 0;
    check(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, &attr, &attr_index, 1, e.a), "cuMemcpyBatchAsync");
  } else if (name == "batch_source_read_during_call_while_written" || name == "batch_source_read_during_call_after_sync" ||
             name == "batch_source_read_any_while_written" || name == "batch_source_in_stream_order") {
    // A batch copy from buf while a memset of buf on the same stream may
    // still run. Stream order covers it, unless the source is read out of
    // stream order (DURING_API_CALL, ANY): then only a synchronize does.
    check(cuMemsetD8Async(e.buf, 1, kBytes, e.a), "memset a");
    if (name == "batch_source_read_during_call_after_sync") check(cuStreamSynchronize(e.a), "sync");
    CUdeviceptr dst = e.other, src = e.buf;
    size_t size = kBytes;
    CUmemcpyAttributes attr{};
    attr.srcAccessOrder = name == "batch_source_in_stream_order" ? CU_MEMCPY_SRC_ACCESS_ORDER_STREAM
                          : name == "batch_source_read_any_while_written" ? CU_MEMCPY_SRC_ACCESS_ORDER_ANY
                                                                           : CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    attr.srcLocHint.type = attr.dstLocHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
    size_t attr_index = 0;
    check(cuMemcpyBatchAsync(&dst, &src, &size, 1, &attr, &attr_index, 1, e.a), "cuMemcpyBatchAsync");
  } else if (name == "attached_memory_on_another_stream" || name == "attached_memory_on_its_stream") {
    CUdeviceptr m;
    check(cuMemAllocManaged(&m, kBytes, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged");
    check(cuStreamAttachMemAsync(e.a, m, 0, CU_MEM_ATTACH_SINGLE), "cuStreamAttachMemAsync");
    CUstream user = name == "attached_memory_on_another_stream" ? e.b : e.a;
    check(cuMemsetD8Async(m, 1, kBytes, user), "memset");
    check(cuCtxSynchronize(), "cuCtxSynchronize");
    check(cuMemFree(m), "cuMemFree");
  } else if (name == "kernels_missing_wait") {
    const int n = kBytes / 4;
    launch(e, "fill", e.a, n, e.buf, 1, n);
    launch(e, "copy_ints", e.b, n, e.other, e.buf, n);
  } else if (name == "kernel_and_copy_with_event") {
    const int n = kBytes / 4;
    launch(e, "fill", e.a, n, e.buf, 1, n);
    check(cuEventRecord(ev, e.a), "record");
    check(cuStreamWaitEvent(e.b, ev, 0), "wait");
    check(cuMemcpyDtoHAsync(h, e.buf, kBytes, e.b), "DtoH");
  } else if (name == "kernels_disjoint_halves") {
    const int half = kBytes / 8;
    launch(e, "fill", e.a, half, e.buf, 1, half);
    launch(e, "fill", e.b, half, e.buf + kBytes / 2, 2, half);
  } else if (name == "kernel_atomics_on_two_streams") {
    launch(e, "count", e.a, 256, e.other);
    launch(e, "count", e.b, 256, e.other);
  } else if (name == "shared_memory_race" || name == "shared_memory_synced" || name == "shared_tree_reduction" ||
             name == "divergent_barrier") {
    // One block of 64 (or 128 for the reduction) threads.
    const char* fn = name == "shared_memory_race"     ? "shared_race"
                     : name == "shared_memory_synced" ? "shared_synced"
                     : name == "divergent_barrier"    ? "divergent_barrier"
                                                      : "block_sum";
    const unsigned threads = name == "shared_tree_reduction" ? 128 : 64;
    CUdeviceptr in = e.buf, out = e.other;
    void* params[] = {&in, &out};
    check(cuLaunchKernel(kernel(e, fn), 1, 1, 1, threads, 1, 1, 0, e.a, params, nullptr), fn);
  } else if (name == "graph_nodes_unordered" || name == "graph_nodes_with_edge" || name == "graph_nodes_through_a_node" ||
             name == "graph_kernel_node_unordered" || name == "graph_kernel_node_with_edge" ||
             name == "graph_parallel_kernel_node_unordered" || name == "graph_parallel_kernel_node_with_edge") {
    const bool kernel_first = name.find("kernel") != std::string::npos;
    const int edges = name.find("unordered") != std::string::npos ? 0 : name.find("through") != std::string::npos ? 2 : 1;
    // The parallel kind: 128 blocks of 128 threads, over a buffer of its own.
    const bool parallel = name.find("parallel") != std::string::npos;
    const int n = parallel ? 128 * 128 : kBytes / sizeof(int);
    CUdeviceptr buf = e.buf, out = e.other;
    if (parallel) {
      check(cuMemAlloc(&buf, n * sizeof(int)), "cuMemAlloc");
      check(cuMemAlloc(&out, n * sizeof(int)), "cuMemAlloc");
    }
    {
      TwoNodeGraph g(e, kernel_first, edges, buf, out, n);
      for (int i = 0; i < 2; ++i) check(cuGraphLaunch(g.exec, e.a), "cuGraphLaunch");  // one report per exec and pair
      check(cuStreamSynchronize(e.a), "sync");
    }
    if (parallel) {
      check(cuMemFree(buf), "cuMemFree");
      check(cuMemFree(out), "cuMemFree");
    }
  } else if (name == "kernel_reads_before_the_memset") {
    // Initcheck: the kernel runs before the memset enqueued after it.
    CUdeviceptr fresh;
    const int n = kBytes / sizeof(int);
    check(cuMemAlloc(&fresh, kBytes), "cuMemAlloc");
    launch(e, "copy_ints", e.a, n, e.other, fresh, n);
    check(cuMemsetD8Async(fresh, 0, kBytes, e.a), "memset");
    check(cuStreamSynchronize(e.a), "sync");
    check(cuMemFree(fresh), "cuMemFree");
  } else if (name == "graph_kernel_reads_what_a_node_set") {
    // Initcheck: a memset node, then (an edge) a kernel node reading what it set.
    CUdeviceptr fresh;
    int n = kBytes / sizeof(int);
    check(cuMemAlloc(&fresh, kBytes), "cuMemAlloc");
    CUgraph g;
    check(cuGraphCreate(&g, 0), "cuGraphCreate");
    CUcontext ctx;
    check(cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
    const CUDA_MEMSET_NODE_PARAMS m = set_bytes(fresh, kBytes, 0);
    CUgraphNode set;
    check(cuGraphAddMemsetNode(&set, g, nullptr, 0, &m, ctx), "cuGraphAddMemsetNode");
    CUdeviceptr dst = e.other;
    void* params[] = {&dst, &fresh, &n};
    add_kernel_node(e, g, "copy_ints", n, params, &set, 1);
    CUgraphExec x;
    check(cuGraphInstantiate(&x, g, 0), "cuGraphInstantiate");
    check(cuGraphLaunch(x, e.a), "cuGraphLaunch");
    check(cuStreamSynchronize(e.a), "sync");
    check(cuGraphExecDestroy(x), "cuGraphExecDestroy");
    check(cuGraphDestroy(g), "cuGraphDestroy");
    check(cuMemFree(fresh), "cuMemFree");
  } else if (name == "kernel_reads_unwritten" || name == "kernel_reads_half_written" || name == "kernel_reads_written") {
    // Initcheck: copy_ints reads all of a fresh allocation; nothing, half
    // of it, or all of it (a memset, a kernel, a copy) was written first.
    CUdeviceptr fresh[3];
    const int n = kBytes / sizeof(int);
    for (CUdeviceptr& p : fresh) check(cuMemAlloc(&p, kBytes), "cuMemAlloc");
    if (name == "kernel_reads_half_written") check(cuMemsetD8Async(fresh[0], 0, kBytes / 2, e.a), "memset half");
    if (name == "kernel_reads_written") {
      check(cuMemsetD8Async(fresh[0], 0, kBytes, e.a), "memset");
      launch(e, "fill", e.a, n, fresh[1], 4, n);
      check(cuMemcpyHtoDAsync(fresh[2], h, kBytes, e.a), "HtoD");
    }
    if (name == "kernel_reads_half_written") {  // the written half, then one int of the other
      launch(e, "copy_ints", e.a, n / 2, e.other, fresh[0], n / 2);
      launch(e, "copy_ints", e.a, 1, e.other, fresh[0] + kBytes / 2, 1);
    }
    const int readers = name == "kernel_reads_written" ? 3 : name == "kernel_reads_unwritten" ? 1 : 0;
    for (int i = 0; i < readers; ++i) launch(e, "copy_ints", e.a, n, e.other, fresh[i], n);
    check(cuStreamSynchronize(e.a), "sync");
    for (CUdeviceptr p : fresh) check(cuMemFree(p), "cuMemFree");
  } else if (name == "kernel_misaligned_load") {
    CUdeviceptr p = e.buf, out = e.other;
    int off = 1;
    void* params[] = {&p, &off, &out};
    check(cuLaunchKernel(kernel(e, "load_misaligned"), 1, 1, 1, 1, 1, 1, 0, e.a, params, nullptr), "load_misaligned");
    const CUresult r = cuCtxSynchronize();  // the misaligned load faults the kernel, with or without the checker
    std::exit(r == CUDA_ERROR_MISALIGNED_ADDRESS ? 0 : 2);
  } else if (name == "kernel_writes_past_the_end") {
    // 1000 ints: the 1001st store is past the allocation (within the
    // memory behind it, so it does not fault without the checker).
    CUdeviceptr p;
    check(cuMemAlloc(&p, 1000 * sizeof(int)), "cuMemAlloc");
    launch(e, "write_past_end", e.a, 1001, p, 1000);
    const CUresult r = cuCtxSynchronize();
    // Under the checker the store is refused: the kernel faults.
    std::exit(r == CUDA_SUCCESS || r == CUDA_ERROR_ILLEGAL_ADDRESS ? 0 : 2);
  } else {
    std::fprintf(stderr, "unknown scenario %s\n", name.c_str());
    return 2;
  }
  check(cuCtxSynchronize(), "cuCtxSynchronize");
  check(cuEventDestroy(ev), "cuEventDestroy");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SCENARIO\n", argv[0]);
    return 2;
  }
  test_support::use_primary_context();
  Env e;
  check(cuStreamCreate(&e.a, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  check(cuStreamCreate(&e.b, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  check(cuStreamCreate(&e.blocking_a, CU_STREAM_DEFAULT), "cuStreamCreate");
  check(cuStreamCreate(&e.blocking_b, CU_STREAM_DEFAULT), "cuStreamCreate");
  check(cuMemAlloc(&e.buf, kBytes), "cuMemAlloc");
  check(cuMemAlloc(&e.other, kBytes), "cuMemAlloc");
  const int rc = run(argv[1], e);
  check(cuMemFree(e.buf), "cuMemFree");
  check(cuMemFree(e.other), "cuMemFree");
  return rc;
}
