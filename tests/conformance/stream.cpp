// Streams, events, host functions and the default streams.
#include <atomic>
#include <thread>
#include <vector>

#include "harness.h"

namespace {
struct Log {
  std::atomic<int> n{0};
  int order[64];
  void add(int v) { order[n++] = v; }
};
struct Tagged {
  Log* log;
  int tag;
  static void CUDA_CB run(void* p) { auto* t = static_cast<Tagged*>(p); t->log->add(t->tag); }
};
}  // namespace

CONF_TEST(StreamKeepsItsNonBlockingFlagAndRefusesUnknownFlags) {
  CUstream s;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamCreate(&s, 2));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamCreate(nullptr, 0));
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  unsigned f = 9;
  ASSERT_CU(cuStreamGetFlags(s, &f));
  EXPECT_TRUE(f == CU_STREAM_NON_BLOCKING);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamGetFlags(s, nullptr));
  ASSERT_CU(cuStreamDestroy(s));
}

CONF_TEST(StreamGettersRefuseANullOutput) {
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamGetPriority(s, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamGetId(s, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamGetDevice(s, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamGetCtx(s, nullptr));
  int p = 7;
  unsigned long long id = 0;
  CUdevice d = -1;
  CUcontext c = nullptr;
  ASSERT_CU(cuStreamGetPriority(s, &p));
  ASSERT_CU(cuStreamGetId(s, &id));
  ASSERT_CU(cuStreamGetDevice(s, &d));
  ASSERT_CU(cuStreamGetCtx(s, &c));
  EXPECT_TRUE(p == 0 && id != 0 && d == 0 && c == conf::primary());
  ASSERT_CU(cuStreamDestroy(s));
}

CONF_TEST(StreamPriorityClamped) {
  CUstream hi, lo;
  ASSERT_CU(cuStreamCreateWithPriority(&hi, 0, -100));
  ASSERT_CU(cuStreamCreateWithPriority(&lo, 0, 100));
  int p = 7;
  ASSERT_CU(cuStreamGetPriority(hi, &p));
  EXPECT_TRUE(p == -5);
  ASSERT_CU(cuStreamGetPriority(lo, &p));
  EXPECT_TRUE(p == 0);
  ASSERT_CU(cuStreamDestroy(hi));
  ASSERT_CU(cuStreamDestroy(lo));
}

CONF_TEST(StreamIdsUnique) {
  CUstream a, b;
  ASSERT_CU(cuStreamCreate(&a, 0));
  ASSERT_CU(cuStreamCreate(&b, 0));
  unsigned long long ia = 0, ib = 0, il = 0, ip = 0;
  ASSERT_CU(cuStreamGetId(a, &ia));
  ASSERT_CU(cuStreamGetId(b, &ib));
  ASSERT_CU(cuStreamGetId(CU_STREAM_LEGACY, &il));
  ASSERT_CU(cuStreamGetId(CU_STREAM_PER_THREAD, &ip));
  EXPECT_TRUE(ia != ib && ia != il && il != ip);
  unsigned long long in = 0;
  ASSERT_CU(cuStreamGetId(nullptr, &in));
  EXPECT_TRUE(in == il);
  ASSERT_CU(cuStreamDestroy(a));
  ASSERT_CU(cuStreamDestroy(b));
}

CONF_TEST(SpecialStreamHandlesAnswerForThePrimaryContext) {
  for (CUstream h : {static_cast<CUstream>(nullptr), CU_STREAM_LEGACY, CU_STREAM_PER_THREAD}) {
    CUcontext c = nullptr;
    ASSERT_CU(cuStreamGetCtx(h, &c));
    EXPECT_TRUE(c == conf::primary());
    CUgreenCtx g = reinterpret_cast<CUgreenCtx>(1);
    ASSERT_CU(cuStreamGetCtx_v2(h, &c, &g));
    EXPECT_TRUE(g == nullptr);
    CUdevice d = -1;
    ASSERT_CU(cuStreamGetDevice(h, &d));
    EXPECT_TRUE(d == 0);
    int p = 9;
    ASSERT_CU(cuStreamGetPriority(h, &p));
    EXPECT_TRUE(p == 0);
    unsigned f = 9;
    ASSERT_CU(cuStreamGetFlags(h, &f));
    conf::info(h == nullptr ? "flags_null" : h == CU_STREAM_LEGACY ? "flags_legacy" : "flags_per_thread",
         f == 0 ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN);
    ASSERT_CU(cuStreamQuery(h));
    ASSERT_CU(cuStreamSynchronize(h));
  }
}

CONF_TEST(StreamQuerySaysNotReadyWhileWorkIsHeld) {
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, 0));
  conf::Gate gate;
  ASSERT_CU(cuLaunchHostFunc(s, conf::Gate::hold, &gate));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cuStreamQuery(s));
  gate.release();
  ASSERT_CU(cuStreamSynchronize(s));
  ASSERT_CU(cuStreamQuery(s));
  ASSERT_CU(cuStreamDestroy(s));
}

CONF_TEST(HostFunctionsRunInEnqueueOrder) {
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, 0));
  Log log;
  std::vector<Tagged> tags(32);
  for (int i = 0; i < 32; ++i) {
    tags[i] = {&log, i};
    ASSERT_CU(cuLaunchHostFunc(s, Tagged::run, &tags[i]));
  }
  ASSERT_CU(cuStreamSynchronize(s));
  EXPECT_TRUE(log.n == 32);
  for (int i = 0; i < 32; ++i) EXPECT_TRUE(log.order[i] == i);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLaunchHostFunc(s, nullptr, nullptr));
  ASSERT_CU(cuStreamDestroy(s));
}

CONF_TEST(StreamCallbackRunsOnceWithItsStreamAndSuccess) {
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, 0));
  struct Seen {
    CUstream stream;
    CUresult status;
    std::atomic<int> calls{0};
  } seen{nullptr, CUDA_ERROR_UNKNOWN};
  auto cb = [](CUstream hs, CUresult st, void* p) {
    auto* x = static_cast<Seen*>(p);
    x->stream = hs;
    x->status = st;
    x->calls++;
  };
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamAddCallback(s, cb, &seen, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamAddCallback(s, nullptr, &seen, 0));
  ASSERT_CU(cuStreamAddCallback(s, cb, &seen, 0));
  ASSERT_CU(cuStreamSynchronize(s));
  EXPECT_TRUE(seen.calls == 1 && seen.stream == s && seen.status == CUDA_SUCCESS);
  ASSERT_CU(cuStreamDestroy(s));
}

CONF_TEST(StreamDestroyReturnsAtOnceAndPendingWorkStillRuns) {
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, 0));
  conf::Gate gate;
  Log log;
  Tagged t{&log, 5};
  ASSERT_CU(cuLaunchHostFunc(s, conf::Gate::hold, &gate));
  ASSERT_CU(cuLaunchHostFunc(s, Tagged::run, &t));
  ASSERT_CU(cuStreamDestroy(s));  // returns at once
  EXPECT_TRUE(log.n == 0);
  gate.release();
  ASSERT_CU(cuCtxSynchronize());
  EXPECT_TRUE(log.n == 1 && log.order[0] == 5);
}

CONF_TEST(DestroyedStreamHandleIsInvalidHandle) {
  SKIP_ON_NVIDIA("a destroyed stream handle is undefined behaviour on the driver");
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, 0));
  ASSERT_CU(cuStreamDestroy(s));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuStreamQuery(s));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuStreamDestroy(s));
  int p = 7;
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuStreamGetPriority(s, &p));
  EXPECT_TRUE(p == 7);
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuStreamQuery(reinterpret_cast<CUstream>(0x1234)));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuStreamGetPriority(reinterpret_cast<CUstream>(0x1234), &p));
}

CONF_TEST(EventQueryAndSyncSeeRecordedWork) {
  CUevent e;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuEventCreate(&e, 0x40));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuEventCreate(&e, CU_EVENT_INTERPROCESS));
  ASSERT_CU(cuEventCreate(&e, 0));
  ASSERT_CU(cuEventQuery(e));  // never recorded: complete
  ASSERT_CU(cuEventSynchronize(e));
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, 0));
  conf::Gate gate;
  ASSERT_CU(cuLaunchHostFunc(s, conf::Gate::hold, &gate));
  ASSERT_CU(cuEventRecord(e, s));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cuEventQuery(e));
  gate.release();
  ASSERT_CU(cuEventSynchronize(e));
  ASSERT_CU(cuEventQuery(e));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuEventRecordWithFlags(e, s, 4));
  ASSERT_CU(cuEventDestroy(e));
  ASSERT_CU(cuStreamDestroy(s));
}

// An event without timing recorded where nothing is left to run is
// complete at once; recorded again behind held work it is pending, and a
// stream that waits on it waits; recorded on the idle stream once more, the
// next wait waits for nothing, while the wait enqueued before still does.
CONF_TEST(EventWithoutTimingRecordedOnAnIdleStreamIsCompleteAtOnce) {
  CUevent e;
  ASSERT_CU(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  CUstream held, idle, waiter;
  ASSERT_CU(cuStreamCreate(&held, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuStreamCreate(&idle, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuStreamCreate(&waiter, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuEventRecord(e, idle));
  EXPECT_CU(CUDA_SUCCESS, cuEventQuery(e));
  conf::Gate gate;
  ASSERT_CU(cuLaunchHostFunc(held, conf::Gate::hold, &gate));
  ASSERT_CU(cuEventRecord(e, held));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cuEventQuery(e));
  ASSERT_CU(cuStreamWaitEvent(waiter, e, 0));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cuStreamQuery(waiter));
  ASSERT_CU(cuEventRecord(e, idle));
  EXPECT_CU(CUDA_SUCCESS, cuEventQuery(e));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cuStreamQuery(waiter));  // its wait holds the earlier record
  CUstream free_waiter;
  ASSERT_CU(cuStreamCreate(&free_waiter, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuStreamWaitEvent(free_waiter, e, 0));
  // Done while the held stream still holds (bounded: a wrong edge fails, never hangs).
  CUresult q = CUDA_ERROR_NOT_READY;
  for (int i = 0; i < 1000000 && q == CUDA_ERROR_NOT_READY; ++i) {
    q = cuStreamQuery(free_waiter);
    if (q == CUDA_ERROR_NOT_READY) std::this_thread::yield();
  }
  EXPECT_CU(CUDA_SUCCESS, q);
  float ms = -1;
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, e, e));
  gate.release();
  ASSERT_CU(cuStreamSynchronize(waiter));
  for (CUstream s : {held, idle, waiter, free_waiter}) ASSERT_CU(cuStreamDestroy(s));
  ASSERT_CU(cuEventDestroy(e));
}

CONF_TEST(ElapsedTimeNeedsTwoCompletedTimingEvents) {
  CUevent a, b, nt;
  ASSERT_CU(cuEventCreate(&a, 0));
  ASSERT_CU(cuEventCreate(&b, 0));
  ASSERT_CU(cuEventCreate(&nt, CU_EVENT_DISABLE_TIMING));
  float ms = -1;
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, a, b));
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, 0));
  ASSERT_CU(cuEventRecord(a, s));
  ASSERT_CU(cuEventRecord(b, s));
  ASSERT_CU(cuEventRecord(nt, s));
  ASSERT_CU(cuStreamSynchronize(s));
  ASSERT_CU(cuEventElapsedTime(&ms, a, b));
  EXPECT_TRUE(ms >= 0.0f);
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, a, nt));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(nullptr, a, b));  // not INVALID_VALUE: observed
  conf::Gate gate;
  ASSERT_CU(cuLaunchHostFunc(s, conf::Gate::hold, &gate));
  ASSERT_CU(cuEventRecord(b, s));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cuEventElapsedTime(&ms, a, b));
  gate.release();
  ASSERT_CU(cuStreamSynchronize(s));
  for (CUevent e : {a, b, nt}) ASSERT_CU(cuEventDestroy(e));
  ASSERT_CU(cuStreamDestroy(s));
}

CONF_TEST(StreamWaitEventHoldsWorkUntilTheEventCompletes) {
  CUstream s1, s2;
  ASSERT_CU(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
  CUevent e, never;
  ASSERT_CU(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  ASSERT_CU(cuEventCreate(&never, 0));
  ASSERT_CU(cuStreamWaitEvent(s2, never, 0));  // never recorded: no-op
  ASSERT_CU(cuStreamQuery(s2));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamWaitEvent(s2, e, 2));
  conf::Gate gate;
  Log log;
  Tagged t{&log, 1};
  ASSERT_CU(cuLaunchHostFunc(s1, conf::Gate::hold, &gate));
  ASSERT_CU(cuEventRecord(e, s1));
  ASSERT_CU(cuStreamWaitEvent(s2, e, 0));
  ASSERT_CU(cuLaunchHostFunc(s2, Tagged::run, &t));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cuStreamQuery(s2));
  EXPECT_TRUE(log.n == 0);
  gate.release();
  ASSERT_CU(cuStreamSynchronize(s2));
  EXPECT_TRUE(log.n == 1);
  ASSERT_CU(cuEventDestroy(e));
  ASSERT_CU(cuEventDestroy(never));
  ASSERT_CU(cuStreamDestroy(s1));
  ASSERT_CU(cuStreamDestroy(s2));
}

// Holds `held` with a gate; work on `waiter` must wait for it.
static void expect_waits_for(CUstream held, CUstream waiter) {
  conf::Gate gate;
  ASSERT_CU(cuLaunchHostFunc(held, conf::Gate::hold, &gate));
  Log log;
  Tagged t{&log, 1};
  ASSERT_CU(cuLaunchHostFunc(waiter, Tagged::run, &t));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cuStreamQuery(waiter));
  gate.release();
  ASSERT_CU(cuStreamSynchronize(waiter));
  EXPECT_TRUE(log.n == 1);
}

CONF_TEST(LegacyWaitsForBlockingStream) {
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, 0));
  expect_waits_for(s, CU_STREAM_LEGACY);
  ASSERT_CU(cuStreamDestroy(s));
}

CONF_TEST(BlockingStreamWaitsForLegacy) {
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, 0));
  expect_waits_for(nullptr, s);
  ASSERT_CU(cuStreamDestroy(s));
}

CONF_TEST(NonBlockingStreamExempt) {
  // The real driver runs host functions on one thread, so the work on the
  // non-blocking stream is a memset, not a host function.
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUdeviceptr d;
  ASSERT_CU(cuMemAlloc(&d, 256));
  conf::Gate gate;
  ASSERT_CU(cuLaunchHostFunc(nullptr, conf::Gate::hold, &gate));
  ASSERT_CU(cuMemsetD8Async(d, 1, 256, s));
  ASSERT_CU(cuStreamSynchronize(s));  // does not wait for the held legacy stream
  EXPECT_CU(CUDA_ERROR_NOT_READY, cuStreamQuery(CU_STREAM_LEGACY));
  gate.release();
  ASSERT_CU(cuCtxSynchronize());
  ASSERT_CU(cuMemFree(d));
  ASSERT_CU(cuStreamDestroy(s));
}

CONF_TEST(PerThreadStreamIsBlocking) {
  conf::Gate gate;
  ASSERT_CU(cuLaunchHostFunc(CU_STREAM_PER_THREAD, conf::Gate::hold, &gate));
  Log log;
  Tagged t{&log, 1};
  ASSERT_CU(cuLaunchHostFunc(CU_STREAM_LEGACY, Tagged::run, &t));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cuStreamQuery(CU_STREAM_LEGACY));
  gate.release();
  ASSERT_CU(cuStreamSynchronize(CU_STREAM_LEGACY));
  EXPECT_TRUE(log.n == 1);
}

CONF_TEST(StreamAttributesCanBeSetAndCopiedToAnotherStream) {
  CUstream s, d;
  ASSERT_CU(cuStreamCreate(&s, 0));
  ASSERT_CU(cuStreamCreate(&d, 0));
  CUstreamAttrValue v{};
  ASSERT_CU(cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));
  int raw_policy;  // the driver's default is not a CUsynchronizationPolicy value
  std::memcpy(&raw_policy, &v.syncPolicy, sizeof raw_policy);
  conf::info_value("attr_sync_policy_default", static_cast<unsigned>(raw_policy));
  ASSERT_CU(cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN, &v));
  conf::info_value("attr_mem_sync_domain_default", v.memSyncDomain);
  ASSERT_CU(cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP, &v));
  conf::info_value("attr_domain_map_default", v.memSyncDomainMap.default_ * 16 + v.memSyncDomainMap.remote);
  ASSERT_CU(cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
  conf::info_value("attr_access_window_default_bytes", static_cast<long long>(v.accessPolicyWindow.num_bytes));
  conf::info_value("attr_access_window_default_hitprop", v.accessPolicyWindow.hitProp);
  conf::info_value("attr_access_window_default_missprop", v.accessPolicyWindow.missProp);
  ASSERT_CU(cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_PRIORITY, &v));
  EXPECT_TRUE(v.priority == 0);
  v.priority = -3;
  ASSERT_CU(cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_PRIORITY, &v));
  int p = 0;
  ASSERT_CU(cuStreamGetPriority(s, &p));
  conf::info("attr_priority_shows_in_getpriority", p == -3 ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN);
  v = {};
  v.syncPolicy = CU_SYNC_POLICY_YIELD;
  ASSERT_CU(cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));
  v.syncPolicy = static_cast<CUsynchronizationPolicy>(99);
  conf::info("attr_bad_sync_policy", cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));
  v = {};
  v.memSyncDomain = static_cast<CUlaunchMemSyncDomain>(7);
  conf::info("attr_bad_domain", cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN, &v));
  v = {};
  v.accessPolicyWindow.hitRatio = 2.0f;
  conf::info("attr_bad_hit_ratio", cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
  ASSERT_CU(cuStreamCopyAttributes(d, s));
  ASSERT_CU(cuStreamGetAttribute(d, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));
  EXPECT_TRUE(v.syncPolicy == CU_SYNC_POLICY_YIELD);
  if (conf::on_cucpu()) {  // NVIDIA's driver stops the run on these (see docs/conformance.md)
    EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_PRIORITY, nullptr));
    conf::info("attr_unknown_id", cuStreamGetAttribute(s, static_cast<CUstreamAttrID>(2), &v));
  }
  ASSERT_CU(cuStreamDestroy(s));
  ASSERT_CU(cuStreamDestroy(d));
}

CONF_TEST(AttachMemAcceptsWholeManagedAllocations) {
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, 0));
  CUdeviceptr m, dev;
  ASSERT_CU(cuMemAllocManaged(&m, 4096, CU_MEM_ATTACH_GLOBAL));
  ASSERT_CU(cuMemAlloc(&dev, 4096));
  ASSERT_CU(cuStreamAttachMemAsync(s, m, 0, CU_MEM_ATTACH_SINGLE));
  ASSERT_CU(cuStreamAttachMemAsync(s, m, 4096, CU_MEM_ATTACH_HOST));
  ASSERT_CU(cuStreamAttachMemAsync(s, m, 0, CU_MEM_ATTACH_GLOBAL));
  conf::info("attach_partial_length", cuStreamAttachMemAsync(s, m, 100, CU_MEM_ATTACH_GLOBAL));
  conf::info("attach_interior", cuStreamAttachMemAsync(s, m + 64, 0, CU_MEM_ATTACH_GLOBAL));
  conf::info("attach_single_null_stream", cuStreamAttachMemAsync(nullptr, m, 0, CU_MEM_ATTACH_SINGLE));
  conf::info("attach_device_memory", cuStreamAttachMemAsync(s, dev, 0, CU_MEM_ATTACH_GLOBAL));
  if (conf::on_cucpu()) conf::info("attach_bad_flags_8", cuStreamAttachMemAsync(s, m, 0, 8));
  std::vector<char> pageable(4096);
  conf::info("attach_pageable", cuStreamAttachMemAsync(s, reinterpret_cast<CUdeviceptr>(pageable.data()), 0,
                                                 CU_MEM_ATTACH_GLOBAL));
  ASSERT_CU(cuStreamSynchronize(s));
  ASSERT_CU(cuMemFree(m));
  ASSERT_CU(cuMemFree(dev));
  ASSERT_CU(cuStreamDestroy(s));
}

CONF_TEST(AsyncCopiesInOrder) {
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, 0));
  CUdeviceptr d;
  ASSERT_CU(cuMemAlloc(&d, 1024));
  // Pinned buffers: NVIDIA's driver stages pageable copies synchronously,
  // which would wait for the gate below.
  unsigned char* src = nullptr;
  unsigned char* out = nullptr;
  ASSERT_CU(cuMemAllocHost(reinterpret_cast<void**>(&src), 1024));
  ASSERT_CU(cuMemAllocHost(reinterpret_cast<void**>(&out), 1024));
  for (int i = 0; i < 1024; ++i) { src[i] = 3; out[i] = 0; }
  conf::Gate gate;
  ASSERT_CU(cuLaunchHostFunc(s, conf::Gate::hold, &gate));
  ASSERT_CU(cuMemcpyHtoDAsync(d, src, 1024, s));
  ASSERT_CU(cuMemsetD8Async(d + 512, 9, 512, s));
  ASSERT_CU(cuMemcpyDtoHAsync(out, d, 1024, s));
  EXPECT_TRUE(out[0] == 0);
  gate.release();
  ASSERT_CU(cuStreamSynchronize(s));
  EXPECT_TRUE(out[0] == 3 && out[511] == 3 && out[512] == 9 && out[1023] == 9);
  ASSERT_CU(cuMemFreeHost(src));
  ASSERT_CU(cuMemFreeHost(out));
  ASSERT_CU(cuMemFree(d));
  ASSERT_CU(cuStreamDestroy(s));
}

// Streams and events of two contexts mixed: observed on each driver.
CONF_TEST(StreamKeepsItsContextAndAttributesDoNotCopyAcrossContexts) {
  CUdevice dev;
  ASSERT_CU(cuDeviceGet(&dev, 0));
  CUcontext other;
  ASSERT_CU(cuCtxCreate(&other, nullptr, 0, dev));  // becomes current
  CUstream theirs;
  CUevent their_event;
  ASSERT_CU(cuStreamCreate(&theirs, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuEventCreate(&their_event, CU_EVENT_DISABLE_TIMING));
  ASSERT_CU(cuEventRecord(their_event, theirs));
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  CUstream ours;
  CUevent our_event;
  ASSERT_CU(cuStreamCreate(&ours, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuEventCreate(&our_event, CU_EVENT_DISABLE_TIMING));
  CUcontext got = nullptr;
  ASSERT_CU(cuStreamGetCtx(theirs, &got));
  EXPECT_TRUE(got == other);  // a stream's own context, whatever is current
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamCopyAttributes(ours, theirs));  // across contexts
  conf::info("xctx_wait_event", cuStreamWaitEvent(ours, their_event, 0));
  conf::info("xctx_record_event", cuEventRecord(our_event, theirs));
  conf::info("xctx_query_stream", cuStreamQuery(theirs));
  conf::info("xctx_sync_stream", cuStreamSynchronize(theirs));
  ASSERT_CU(cuStreamSynchronize(ours));
  ASSERT_CU(cuStreamDestroy(theirs));
  ASSERT_CU(cuEventDestroy(their_event));
  ASSERT_CU(cuStreamDestroy(ours));
  ASSERT_CU(cuEventDestroy(our_event));
  ASSERT_CU(cuCtxDestroy(other));
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
}

CONF_TEST(EventRecordedLastIsCompleteOnceItsStreamIsSynchronized) {
  // A synchronize that returned has seen the stream's last op finish: an
  // event recorded there answers SUCCESS at once, every time.
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUdeviceptr p = 0;
  ASSERT_CU(cuMemAlloc(&p, 4096));
  CUevent e;
  ASSERT_CU(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  for (int i = 0; i < 2000; ++i) {
    ASSERT_CU(cuMemsetD8Async(p, static_cast<unsigned char>(i), 4096, s));
    ASSERT_CU(cuEventRecord(e, s));
    ASSERT_CU(i % 2 ? cuStreamSynchronize(s) : cuCtxSynchronize());
    EXPECT_CU(CUDA_SUCCESS, cuEventQuery(e));
  }
  ASSERT_CU(cuEventDestroy(e));
  ASSERT_CU(cuMemFree(p));
  ASSERT_CU(cuStreamDestroy(s));
}
