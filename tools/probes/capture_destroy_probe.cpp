// A probe for docs/conformance.md: destroying a capture's participants
// (forked streams, the events that fork and join, the origin stream) while
// the capture is open, then ending it, instantiating and launching. Each
// case runs in a child process; every call's result is printed.
//   g++ -std=c++17 -I$CUDA/include tools/probes/capture_destroy_probe.cpp -lcuda -o /tmp/capd && /tmp/capd
#include <cuda.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace {

const char* name(CUresult r) {
  const char* n = nullptr;
  cuGetErrorName(r, &n);
  return n ? n : "?";
}
#define SAY(call) std::printf("  %-60s %s\n", #call, name(call))

CUdeviceptr g_buf;

void status(CUstream s, const char* label) {
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult r = cuStreamIsCapturing(s, &st);
  std::printf("  cuStreamIsCapturing(%s) -> %s, status %d\n", label, name(r), (int)st);
}

// Ends the capture on `origin` and, when a graph comes back, runs it.
void finish(CUstream origin) {
  CUgraph g = nullptr;
  CUresult r = cuStreamEndCapture(origin, &g);
  std::printf("  cuStreamEndCapture -> %s, graph %s\n", name(r), g ? "yes" : "no");
  if (!g) return;
  size_t n = 0;
  cuGraphGetNodes(g, nullptr, &n);
  std::printf("  nodes: %zu\n", n);
  CUgraphExec e;
  r = cuGraphInstantiate(&e, g, 0);
  std::printf("  cuGraphInstantiate -> %s\n", name(r));
  if (r) return;
  SAY(cuGraphLaunch(e, origin));
  SAY(cuStreamSynchronize(origin));
  unsigned char v[4] = {};
  cuMemcpyDtoH(v, g_buf, 4);
  std::printf("  bytes: %u %u %u %u\n", v[0], v[1], v[2], v[3]);
}

struct Fork {
  CUstream origin, side;
  CUevent fork, join;
};

Fork begin_fork() {
  Fork f;
  cuStreamCreate(&f.origin, CU_STREAM_NON_BLOCKING);
  cuStreamCreate(&f.side, CU_STREAM_NON_BLOCKING);
  cuEventCreate(&f.fork, CU_EVENT_DISABLE_TIMING);
  cuEventCreate(&f.join, CU_EVENT_DISABLE_TIMING);
  cuMemsetD8(g_buf, 0, 4);
  SAY(cuStreamBeginCapture(f.origin, CU_STREAM_CAPTURE_MODE_GLOBAL));
  SAY(cuMemsetD8Async(g_buf, 1, 1, f.origin));
  SAY(cuEventRecord(f.fork, f.origin));
  SAY(cuStreamWaitEvent(f.side, f.fork, 0));
  SAY(cuMemsetD8Async(g_buf + 1, 2, 1, f.side));
  return f;
}

void join(Fork& f) {
  SAY(cuEventRecord(f.join, f.side));
  SAY(cuStreamWaitEvent(f.origin, f.join, 0));
}

void case_destroy_joined_side_and_events() {
  Fork f = begin_fork();
  join(f);
  SAY(cuStreamDestroy(f.side));
  SAY(cuEventDestroy(f.fork));
  SAY(cuEventDestroy(f.join));
  status(f.origin, "origin");
  SAY(cuMemsetD8Async(g_buf + 2, 3, 1, f.origin));
  finish(f.origin);
}

void case_destroy_unjoined_side() {
  Fork f = begin_fork();
  SAY(cuStreamDestroy(f.side));
  status(f.origin, "origin");
  finish(f.origin);
}

void case_destroy_events_only() {
  Fork f = begin_fork();
  SAY(cuEventDestroy(f.fork));
  join(f);
  SAY(cuEventDestroy(f.join));
  finish(f.origin);
}

void case_destroy_side_then_record_its_event() {
  Fork f = begin_fork();
  join(f);
  SAY(cuStreamDestroy(f.side));
  SAY(cuEventRecord(f.join, f.origin));
  finish(f.origin);
}

void case_destroy_origin() {
  Fork f = begin_fork();
  join(f);
  SAY(cuStreamDestroy(f.origin));
  status(f.side, "side");
  CUgraph g = nullptr;
  std::printf("  cuStreamEndCapture(side) -> %s\n", name(cuStreamEndCapture(f.side, &g)));
  SAY(cuMemsetD8Async(g_buf + 3, 4, 1, f.side));
  SAY(cuStreamSynchronize(f.side));
}

void case_side_keeps_capturing_after_join() {
  Fork f = begin_fork();
  join(f);
  status(f.side, "side");
  SAY(cuMemsetD8Async(g_buf + 3, 5, 1, f.side));  // unjoined work after the join
  SAY(cuStreamDestroy(f.side));
  finish(f.origin);
}

void case_destroy_side_with_a_graph_only_node() {
  Fork f = begin_fork();
  join(f);
  SAY(cuStreamSynchronize(f.side));
  SAY(cuStreamQuery(f.side));
  SAY(cuStreamDestroy(f.side));
  finish(f.origin);
}

void run(const char* label, void (*fn)()) {
  std::printf("== %s\n", label);
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    cuInit(0);
    CUdevice d;
    cuDeviceGet(&d, 0);
    CUcontext c;
    cuDevicePrimaryCtxRetain(&c, d);
    cuCtxSetCurrent(c);
    cuMemAlloc(&g_buf, 4);
    fn();
    std::fflush(stdout);
    _exit(0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st)) std::printf("  (child ended with status %d)\n", st);
}

}  // namespace

int main() {
  run("destroy the joined side stream and both events, then end", case_destroy_joined_side_and_events);
  run("destroy the side stream before it joins", case_destroy_unjoined_side);
  run("destroy the fork event after the fork, the join event after the join", case_destroy_events_only);
  run("destroy the joined side, then record its join event in origin", case_destroy_side_then_record_its_event);
  run("destroy the origin stream while the side is forked and joined", case_destroy_origin);
  run("work on the side after the join, then destroy it", case_side_keeps_capturing_after_join);
  run("synchronize and query a capturing side, then destroy it", case_destroy_side_with_a_graph_only_node);
  return 0;
}
