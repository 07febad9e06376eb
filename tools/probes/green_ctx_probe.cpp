// A probe for docs/conformance.md (build against any libcuda.so.1 and run;
// each case runs in a child process of its own): what a driver answers for
// green contexts (resources, splits, descriptors, green contexts, their
// streams and events) and for the stream getters while one is current,
// good input and bad.
//   g++ -std=c++17 -I$CUDA/include tools/probes/green_ctx_probe.cpp -lcuda -lpthread -o /tmp/green_probe && /tmp/green_probe
#include <cuda.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace {

const char* name_of(CUresult r) {
  const char* n = nullptr;
  cuGetErrorName(r, &n);
  return n ? n : "?";
}
#define SAY(expr) std::printf("  %-72s %s\n", #expr, name_of(expr))
#define VAL(label, v) std::printf("  %-72s %lld\n", label, static_cast<long long>(v))

CUcontext primary = nullptr;
CUdevResource dev_sm{};

void show(const char* label, const CUdevResource& r) {
  std::printf("  %-40s type %d smCount %u minSmPartitionSize %u smCoscheduledAlignment %u\n", label,
              static_cast<int>(r.type), r.sm.smCount, r.sm.minSmPartitionSize, r.sm.smCoscheduledAlignment);
}

// Splits the device's SMs into groups of `min` and builds a green context of
// the first group.
CUgreenCtx make_green(unsigned min, CUdevResource* group_out = nullptr) {
  CUdevResource groups[64];
  unsigned n = 64;
  CUdevResource rest{};
  if (cuDevSmResourceSplitByCount(groups, &n, &dev_sm, &rest, 0, min) || n == 0) {
    std::printf("  split failed\n");
    return nullptr;
  }
  CUdevResourceDesc desc = nullptr;
  if (cuDevResourceGenerateDesc(&desc, &groups[0], 1)) std::printf("  desc failed\n");
  CUgreenCtx g = nullptr;
  if (cuGreenCtxCreate(&g, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM)) std::printf("  create failed\n");
  if (group_out) *group_out = groups[0];
  return g;
}

void case_resources() {
  CUdevResource r{};
  SAY(cuDeviceGetDevResource(0, &r, CU_DEV_RESOURCE_TYPE_SM));
  show("device", r);
  int sms = 0;
  cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0);
  VAL("MULTIPROCESSOR_COUNT == smCount", sms == static_cast<int>(r.sm.smCount));
  int nz = 0;
  for (unsigned char b : r._internal_padding) nz += b != 0;
  VAL("device resource: nonzero padding bytes (any)", nz > 0);
  CUdevResource again{};
  cuDeviceGetDevResource(0, &again, CU_DEV_RESOURCE_TYPE_SM);
  VAL("two reads identical", std::memcmp(&r, &again, sizeof r) == 0);
  SAY(cuDeviceGetDevResource(0, &r, CU_DEV_RESOURCE_TYPE_INVALID));
  SAY(cuDeviceGetDevResource(0, &r, static_cast<CUdevResourceType>(2)));
  SAY(cuDeviceGetDevResource(0, &r, static_cast<CUdevResourceType>(1000)));
  SAY(cuDeviceGetDevResource(0, nullptr, CU_DEV_RESOURCE_TYPE_SM));
  SAY(cuDeviceGetDevResource(-1, &r, CU_DEV_RESOURCE_TYPE_SM));
  SAY(cuDeviceGetDevResource(99, &r, CU_DEV_RESOURCE_TYPE_SM));
  CUdevResource c{};
  SAY(cuCtxGetDevResource(primary, &c, CU_DEV_RESOURCE_TYPE_SM));
  VAL("ctx resource == device resource", std::memcmp(&c, &r, sizeof r) == 0);
  show("primary ctx", c);
  SAY(cuCtxGetDevResource(nullptr, &c, CU_DEV_RESOURCE_TYPE_SM));
  SAY(cuCtxGetDevResource(primary, nullptr, CU_DEV_RESOURCE_TYPE_SM));
  SAY(cuCtxGetDevResource(primary, &c, CU_DEV_RESOURCE_TYPE_INVALID));
  SAY(cuCtxGetDevResource(primary, &c, static_cast<CUdevResourceType>(2)));
  CUcontext made = nullptr;
  CUctxCreateParams params{};
  SAY(cuCtxCreate(&made, &params, 0, 0));
  SAY(cuCtxGetDevResource(made, &c, CU_DEV_RESOURCE_TYPE_SM));
  show("created ctx", c);
  SAY(cuCtxDestroy(made));
  SAY(cuCtxGetDevResource(made, &c, CU_DEV_RESOURCE_TYPE_SM));
  SAY(cuCtxGetDevResource(reinterpret_cast<CUcontext>(0x1234), &c, CU_DEV_RESOURCE_TYPE_SM));
}

void case_split_counts() {
  const unsigned sms = dev_sm.sm.smCount;
  const unsigned mins[] = {0, 1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 63, 64, 65, 66, 67, 100, 128, 131, 132, 133, 200, 1000};
  for (unsigned flags : {0u, 1u, 2u, 3u}) {
    for (unsigned m : mins) {
      unsigned n = 0;
      CUresult q = cuDevSmResourceSplitByCount(nullptr, &n, &dev_sm, nullptr, flags, m);
      CUdevResource groups[200];
      unsigned k = 200;
      CUdevResource rest{};
      std::memset(groups, 0xab, sizeof groups);
      CUresult s = cuDevSmResourceSplitByCount(groups, &k, &dev_sm, &rest, flags, m);
      std::printf("  flags %u min %4u (of %u): count %s n=%u; split %s k=%u", flags, m, sms, name_of(q), n, name_of(s), k);
      if (s == CUDA_SUCCESS) {
        std::printf(" groups");
        unsigned last = ~0u;
        for (unsigned i = 0; i < k && i < 200; ++i)
          if (groups[i].sm.smCount != last) std::printf(" [%u]=%u", i, last = groups[i].sm.smCount);
        std::printf(" min %u align %u; rest type %d sm %u min %u align %u", groups[0].sm.minSmPartitionSize,
                    groups[0].sm.smCoscheduledAlignment, rest.type, rest.sm.smCount, rest.sm.minSmPartitionSize,
                    rest.sm.smCoscheduledAlignment);
        if (k < 200) std::printf(" after-last type %d", static_cast<int>(groups[k].type) == static_cast<int>(0xabababab) ? -1 : groups[k].type);
      }
      std::printf("\n");
    }
  }
}

void case_split_args() {
  CUdevResource groups[64];
  unsigned n = 64;
  CUdevResource rest{};
  for (unsigned want : {1u, 2u, 3u}) {
    n = want;
    CUresult r = cuDevSmResourceSplitByCount(groups, &n, &dev_sm, &rest, 0, dev_sm.sm.minSmPartitionSize);
    std::printf("  want %u groups of 16: %s n=%u group0 %u rest %u (type %d)\n", want, name_of(r), n,
                groups[0].sm.smCount, rest.sm.smCount, rest.type);
  }
  n = 0;
  SAY(cuDevSmResourceSplitByCount(groups, &n, &dev_sm, &rest, 0, 16));
  VAL("n after 0", n);
  SAY(cuDevSmResourceSplitByCount(groups, nullptr, &dev_sm, &rest, 0, 16));
  n = 4;
  SAY(cuDevSmResourceSplitByCount(groups, &n, nullptr, &rest, 0, 16));
  n = 4;
  SAY(cuDevSmResourceSplitByCount(groups, &n, &dev_sm, nullptr, 0, 16));
  VAL("n with no remainder", n);
  n = 4;
  SAY(cuDevSmResourceSplitByCount(groups, &n, &dev_sm, &rest, 4, 16));
  n = 4;
  SAY(cuDevSmResourceSplitByCount(groups, &n, &dev_sm, &rest, 0x80000000u, 16));
  CUdevResource bad = dev_sm;
  bad.type = CU_DEV_RESOURCE_TYPE_INVALID;
  n = 4;
  SAY(cuDevSmResourceSplitByCount(groups, &n, &bad, &rest, 0, 16));
  bad = dev_sm;
  bad.type = static_cast<CUdevResourceType>(2);
  n = 4;
  SAY(cuDevSmResourceSplitByCount(groups, &n, &bad, &rest, 0, 16));
  CUdevResource zero{};
  zero.type = CU_DEV_RESOURCE_TYPE_SM;
  zero.sm.smCount = 32;
  n = 4;
  SAY(cuDevSmResourceSplitByCount(groups, &n, &zero, &rest, 0, 16));
  VAL("n (forged input)", n);
  // Splitting a split's output again.
  n = 64;
  cuDevSmResourceSplitByCount(groups, &n, &dev_sm, &rest, 0, dev_sm.sm.minSmPartitionSize);
  CUdevResource sub[64];
  unsigned m = 64;
  CUdevResource subrest{};
  SAY(cuDevSmResourceSplitByCount(sub, &m, &groups[0], &subrest, 0, 8));
  VAL("groups of a group", m);
  m = 64;
  SAY(cuDevSmResourceSplitByCount(sub, &m, &rest, &subrest, 0, 8));
  VAL("groups of the remainder", m);
  // A user-modified resource (smCount edited).
  CUdevResource edited = dev_sm;
  edited.sm.smCount = 16;
  m = 64;
  SAY(cuDevSmResourceSplitByCount(sub, &m, &edited, nullptr, 0, 8));
  VAL("groups of an edited resource", m);
  // The split's output written in place of its input.
  CUdevResource in_place[4];
  in_place[0] = dev_sm;
  m = 4;
  std::printf("  (a split over its own input next)\n");
  SAY(cuDevSmResourceSplitByCount(in_place, &m, &in_place[0], nullptr, 0, 16));
  VAL("in place groups", m);
}

void case_desc() {
  CUdevResource groups[64];
  unsigned n = 64;
  CUdevResource rest{};
  cuDevSmResourceSplitByCount(groups, &n, &dev_sm, &rest, 0, dev_sm.sm.minSmPartitionSize);
  VAL("groups", n);
  CUdevResourceDesc d = nullptr, d2 = nullptr;
  SAY(cuDevResourceGenerateDesc(&d, &groups[0], 1));
  SAY(cuDevResourceGenerateDesc(&d2, &groups[0], 1));
  VAL("same resource, same desc", d == d2);
  SAY(cuDevResourceGenerateDesc(&d, groups, 2));
  SAY(cuDevResourceGenerateDesc(&d, &dev_sm, 1));
  SAY(cuDevResourceGenerateDesc(nullptr, &groups[0], 1));
  SAY(cuDevResourceGenerateDesc(&d, nullptr, 1));
  SAY(cuDevResourceGenerateDesc(&d, nullptr, 0));
  CUdevResource two[2] = {groups[0], rest};
  SAY(cuDevResourceGenerateDesc(&d, two, 2));
  CUdevResource other[64];
  unsigned k = 64;
  cuDevSmResourceSplitByCount(other, &k, &dev_sm, nullptr, 0, dev_sm.sm.minSmPartitionSize);
  CUdevResource mixed[2] = {groups[0], other[1]};
  SAY(cuDevResourceGenerateDesc(&d, mixed, 2));
  CUdevResource dev_and_group[2] = {dev_sm, groups[0]};
  SAY(cuDevResourceGenerateDesc(&d, dev_and_group, 2));
  CUdevResource dup[2] = {groups[0], groups[0]};
  SAY(cuDevResourceGenerateDesc(&d, dup, 2));
  CUdevResource inval{};
  SAY(cuDevResourceGenerateDesc(&d, &inval, 1));
  CUdevResource t2 = groups[0];
  t2.type = static_cast<CUdevResourceType>(2);
  SAY(cuDevResourceGenerateDesc(&d, &t2, 1));
  CUdevResource forged{};
  forged.type = CU_DEV_RESOURCE_TYPE_SM;
  forged.sm.smCount = 16;
  SAY(cuDevResourceGenerateDesc(&d, &forged, 1));
  CUdevResource edited = groups[0];
  edited.sm.smCount = 8;
  SAY(cuDevResourceGenerateDesc(&d, &edited, 1));
  // What the green context then holds for descriptors of several resources.
  CUdevResource three[3] = {groups[0], groups[1], groups[2]};
  if (cuDevResourceGenerateDesc(&d, three, n >= 3 ? 3 : n) == CUDA_SUCCESS) {
    CUgreenCtx g = nullptr;
    SAY(cuGreenCtxCreate(&g, d, 0, CU_GREEN_CTX_DEFAULT_STREAM));
    CUdevResource got{};
    SAY(cuGreenCtxGetDevResource(g, &got, CU_DEV_RESOURCE_TYPE_SM));
    show("green of 3 groups", got);
    cuGreenCtxDestroy(g);
  }
  if (cuDevResourceGenerateDesc(&d, two, 2) == CUDA_SUCCESS) {
    CUgreenCtx g = nullptr;
    SAY(cuGreenCtxCreate(&g, d, 0, CU_GREEN_CTX_DEFAULT_STREAM));
    CUdevResource got{};
    SAY(cuGreenCtxGetDevResource(g, &got, CU_DEV_RESOURCE_TYPE_SM));
    show("green of group+rest", got);
    cuGreenCtxDestroy(g);
  }
  if (cuDevResourceGenerateDesc(&d, &rest, 1) == CUDA_SUCCESS) {
    CUgreenCtx g = nullptr;
    SAY(cuGreenCtxCreate(&g, d, 0, CU_GREEN_CTX_DEFAULT_STREAM));
    CUdevResource got{};
    SAY(cuGreenCtxGetDevResource(g, &got, CU_DEV_RESOURCE_TYPE_SM));
    show("green of rest", got);
    cuGreenCtxDestroy(g);
  }
  std::printf("  (zero resources next)\n");
  std::fflush(stdout);
  SAY(cuDevResourceGenerateDesc(&d, groups, 0));
}

void case_create() {
  CUdevResource groups[64];
  unsigned n = 64;
  cuDevSmResourceSplitByCount(groups, &n, &dev_sm, nullptr, 0, dev_sm.sm.minSmPartitionSize);
  CUdevResourceDesc d = nullptr;
  cuDevResourceGenerateDesc(&d, &groups[0], 1);
  unsigned state_flags = 0;
  int active = -1;
  cuDevicePrimaryCtxGetState(0, &state_flags, &active);
  VAL("primary active before", active);
  CUgreenCtx g = nullptr, g2 = nullptr;
  SAY(cuGreenCtxCreate(&g, d, 0, 0));
  SAY(cuGreenCtxCreate(&g, d, 0, 2));
  SAY(cuGreenCtxCreate(&g, d, 0, 3));
  SAY(cuGreenCtxCreate(nullptr, d, 0, CU_GREEN_CTX_DEFAULT_STREAM));
  if (cuGreenCtxCreate(&g, nullptr, 0, CU_GREEN_CTX_DEFAULT_STREAM) == CUDA_SUCCESS) {
    CUdevResource all{};
    SAY(cuGreenCtxGetDevResource(g, &all, CU_DEV_RESOURCE_TYPE_SM));
    show("green of no descriptor", all);
    SAY(cuGreenCtxDestroy(g));
  }
  SAY(cuGreenCtxCreate(&g, d, 1, CU_GREEN_CTX_DEFAULT_STREAM));
  SAY(cuGreenCtxCreate(&g, d, -1, CU_GREEN_CTX_DEFAULT_STREAM));
  SAY(cuGreenCtxCreate(&g, d, 0, CU_GREEN_CTX_DEFAULT_STREAM));
  SAY(cuGreenCtxCreate(&g2, d, 0, CU_GREEN_CTX_DEFAULT_STREAM));
  VAL("two green contexts of one desc differ", g != g2);
  CUcontext cur = nullptr;
  cuCtxGetCurrent(&cur);
  VAL("current unchanged by create", cur == primary);
  CUcontext c = nullptr, c2 = nullptr, cagain = nullptr;
  SAY(cuCtxFromGreenCtx(&c, g));
  SAY(cuCtxFromGreenCtx(&cagain, g));
  SAY(cuCtxFromGreenCtx(&c2, g2));
  VAL("converted == primary", c == primary);
  VAL("converted stable", c == cagain);
  VAL("converted of two greens differ", c != c2);
  VAL("converted == green handle value", reinterpret_cast<void*>(c) == reinterpret_cast<void*>(g));
  SAY(cuCtxFromGreenCtx(nullptr, g));
  SAY(cuCtxFromGreenCtx(&c, nullptr));
  SAY(cuCtxFromGreenCtx(&c, reinterpret_cast<CUgreenCtx>(0x1234)));
  SAY(cuCtxFromGreenCtx(&c, reinterpret_cast<CUgreenCtx>(primary)));
  unsigned long long id = 0, id2 = 0, cid = 0, pid = 0;
  SAY(cuGreenCtxGetId(g, &id));
  SAY(cuGreenCtxGetId(g2, &id2));
  SAY(cuCtxGetId(c, &cid));
  SAY(cuCtxGetId(primary, &pid));
  VAL("green ids differ", id != id2);
  VAL("green id == converted ctx id", id == cid);
  VAL("converted ctx id == primary id", cid == pid);
  VAL("green id - primary id", static_cast<long long>(id - pid));
  VAL("green2 id - green id", static_cast<long long>(id2 - id));
  SAY(cuGreenCtxGetId(g, nullptr));
  SAY(cuGreenCtxGetId(nullptr, &id));
  SAY(cuGreenCtxGetId(reinterpret_cast<CUgreenCtx>(primary), &id));
  cuCtxSetCurrent(c);
  unsigned long long cur_id = 0;
  SAY(cuGreenCtxGetId(nullptr, &cur_id));
  VAL("NULL green id under converted == green id", cur_id == id);
  cuCtxSetCurrent(nullptr);
  SAY(cuGreenCtxGetId(nullptr, &cur_id));
  cuCtxSetCurrent(primary);
  cuDevicePrimaryCtxGetState(0, &state_flags, &active);
  VAL("primary active with greens", active);
  CUdevResource got{};
  SAY(cuGreenCtxGetDevResource(g, &got, CU_DEV_RESOURCE_TYPE_SM));
  show("green", got);
  VAL("green resource == its group (bytes)", std::memcmp(&got, &groups[0], sizeof got) == 0);
  SAY(cuCtxGetDevResource(c, &got, CU_DEV_RESOURCE_TYPE_SM));
  show("converted ctx", got);
  SAY(cuGreenCtxGetDevResource(g, nullptr, CU_DEV_RESOURCE_TYPE_SM));
  SAY(cuGreenCtxGetDevResource(g, &got, CU_DEV_RESOURCE_TYPE_INVALID));
  SAY(cuGreenCtxGetDevResource(g, &got, static_cast<CUdevResourceType>(2)));
  SAY(cuGreenCtxGetDevResource(nullptr, &got, CU_DEV_RESOURCE_TYPE_SM));
  // A split of a green context's resource.
  CUdevResource sub[64];
  unsigned m = 64;
  cuGreenCtxGetDevResource(g, &got, CU_DEV_RESOURCE_TYPE_SM);
  SAY(cuDevSmResourceSplitByCount(sub, &m, &got, nullptr, 0, 8));
  VAL("groups of a green context's resource", m);
  // Context queries through the converted context.
  cuCtxSetCurrent(c);
  CUdevice dev = -1;
  SAY(cuCtxGetDevice(&dev));
  VAL("device", dev);
  unsigned flags = 99;
  SAY(cuCtxGetFlags(&flags));
  VAL("ctx flags", flags);
  unsigned ver = 0;
  SAY(cuCtxGetApiVersion(c, &ver));
  VAL("api version", ver);
  int lo = 0, hi = 0;
  SAY(cuCtxGetStreamPriorityRange(&lo, &hi));
  VAL("priority least", lo);
  VAL("priority greatest", hi);
  size_t lim = 0;
  SAY(cuCtxGetLimit(&lim, CU_LIMIT_STACK_SIZE));
  SAY(cuCtxSynchronize());
  SAY(cuCtxSetFlags(CU_CTX_SCHED_SPIN));
  SAY(cuCtxGetFlags(&flags));
  VAL("ctx flags after set", flags);
  cuCtxSetCurrent(primary);
  SAY(cuCtxGetFlags(&flags));
  VAL("primary flags after converted set", flags);
  SAY(cuCtxPushCurrent(c));
  CUcontext popped = nullptr;
  SAY(cuCtxPopCurrent(&popped));
  VAL("popped == converted", popped == c);
  SAY(cuCtxDestroy(c));
  SAY(cuCtxGetApiVersion(c, &ver));
  SAY(cuGreenCtxDestroy(g2));
  SAY(cuGreenCtxDestroy(g));
  cuDevicePrimaryCtxGetState(0, &state_flags, &active);
  VAL("primary active after greens", active);
  std::printf("  (a forged descriptor next)\n");
  SAY(cuGreenCtxCreate(&g, reinterpret_cast<CUdevResourceDesc>(0x1234), 0, CU_GREEN_CTX_DEFAULT_STREAM));
}

void case_primary_retained() {
  // No primary context retained by the process: a green context retains it.
  cuCtxSetCurrent(nullptr);
  cuDevicePrimaryCtxRelease(0);
  unsigned fl = 0;
  int active = -1;
  cuDevicePrimaryCtxGetState(0, &fl, &active);
  VAL("primary active before", active);
  CUgreenCtx g = make_green(dev_sm.sm.minSmPartitionSize);
  cuDevicePrimaryCtxGetState(0, &fl, &active);
  VAL("primary active with a green", active);
  CUcontext c = nullptr;
  cuCtxFromGreenCtx(&c, g);
  CUcontext p = nullptr;
  SAY(cuDevicePrimaryCtxRetain(&p, 0));
  VAL("retained primary == converted", p == c);
  SAY(cuDevicePrimaryCtxRelease(0));
  SAY(cuGreenCtxDestroy(g));
  cuDevicePrimaryCtxGetState(0, &fl, &active);
  VAL("primary active after", active);
}

void case_streams() {
  CUgreenCtx g = make_green(dev_sm.sm.minSmPartitionSize);
  CUcontext c = nullptr;
  cuCtxFromGreenCtx(&c, g);
  CUstream s = nullptr;
  SAY(cuGreenCtxStreamCreate(&s, g, 0, 0));
  SAY(cuGreenCtxStreamCreate(&s, g, 2, 0));
  SAY(cuGreenCtxStreamCreate(&s, g, 3, 0));
  SAY(cuGreenCtxStreamCreate(nullptr, g, CU_STREAM_NON_BLOCKING, 0));
  SAY(cuGreenCtxStreamCreate(&s, nullptr, CU_STREAM_NON_BLOCKING, 0));
  SAY(cuGreenCtxStreamCreate(&s, reinterpret_cast<CUgreenCtx>(primary), CU_STREAM_NON_BLOCKING, 0));
  CUstream hi = nullptr, lo = nullptr;
  SAY(cuGreenCtxStreamCreate(&hi, g, CU_STREAM_NON_BLOCKING, -100));
  SAY(cuGreenCtxStreamCreate(&lo, g, CU_STREAM_NON_BLOCKING, 100));
  SAY(cuGreenCtxStreamCreate(&s, g, CU_STREAM_NON_BLOCKING, 0));
  int prio = 99;
  SAY(cuStreamGetPriority(hi, &prio));
  VAL("priority -100 ->", prio);
  SAY(cuStreamGetPriority(lo, &prio));
  VAL("priority 100 ->", prio);
  CUcontext sc = nullptr;
  CUgreenCtx sg = nullptr;
  // Current context: the primary one.
  SAY(cuStreamGetCtx(s, &sc));
  VAL("GetCtx(green stream) == converted", sc == c);
  VAL("GetCtx(green stream) == primary", sc == primary);
  sc = nullptr;
  SAY(cuStreamGetCtx_v2(s, &sc, &sg));
  VAL("GetCtx_v2 ctx == converted", sc == c);
  VAL("GetCtx_v2 ctx == primary", sc == primary);
  VAL("GetCtx_v2 green == g", sg == g);
  SAY(cuStreamGetCtx_v2(s, nullptr, &sg));
  SAY(cuStreamGetCtx_v2(s, &sc, nullptr));
  SAY(cuStreamGetCtx_v2(s, nullptr, nullptr));
  sg = reinterpret_cast<CUgreenCtx>(1);
  SAY(cuStreamGetGreenCtx(s, &sg));
  VAL("GetGreenCtx == g", sg == g);
  SAY(cuStreamGetGreenCtx(s, nullptr));
  unsigned flags = 99;
  SAY(cuStreamGetFlags(s, &flags));
  VAL("flags", flags);
  CUdevice dev = -1;
  SAY(cuStreamGetDevice(s, &dev));
  VAL("device", dev);
  unsigned long long id = 0, id2 = 0;
  SAY(cuStreamGetId(s, &id));
  SAY(cuStreamGetId(hi, &id2));
  VAL("ids differ", id != id2);
  // A regular stream with a regular context current.
  CUstream r = nullptr;
  cuStreamCreate(&r, CU_STREAM_NON_BLOCKING);
  sg = reinterpret_cast<CUgreenCtx>(1);
  SAY(cuStreamGetGreenCtx(r, &sg));
  VAL("GetGreenCtx(regular) == NULL", sg == nullptr);
  sg = reinterpret_cast<CUgreenCtx>(1);
  SAY(cuStreamGetCtx_v2(r, &sc, &sg));
  VAL("GetCtx_v2(regular) green NULL", sg == nullptr);
  VAL("GetCtx_v2(regular) ctx primary", sc == primary);
  for (CUstream special : {static_cast<CUstream>(nullptr), CU_STREAM_LEGACY, CU_STREAM_PER_THREAD}) {
    std::printf("  regular current, special %p:\n", static_cast<void*>(special));
    sg = reinterpret_cast<CUgreenCtx>(1);
    sc = nullptr;
    SAY(cuStreamGetCtx_v2(special, &sc, &sg));
    VAL("  ctx == primary", sc == primary);
    VAL("  green == NULL", sg == nullptr);
    sg = reinterpret_cast<CUgreenCtx>(1);
    SAY(cuStreamGetGreenCtx(special, &sg));
    VAL("  GetGreenCtx NULL", sg == nullptr);
  }
  // The converted context current.
  cuCtxSetCurrent(c);
  for (CUstream special : {static_cast<CUstream>(nullptr), CU_STREAM_LEGACY, CU_STREAM_PER_THREAD}) {
    std::printf("  converted current, special %p:\n", static_cast<void*>(special));
    sg = reinterpret_cast<CUgreenCtx>(1);
    sc = reinterpret_cast<CUcontext>(1);
    SAY(cuStreamGetCtx(special, &sc));
    VAL("  GetCtx == converted", sc == c);
    VAL("  GetCtx == primary", sc == primary);
    sc = reinterpret_cast<CUcontext>(1);
    SAY(cuStreamGetCtx_v2(special, &sc, &sg));
    VAL("  v2 ctx == converted", sc == c);
    VAL("  v2 ctx == primary", sc == primary);
    VAL("  v2 green == g", sg == g);
    VAL("  v2 ctx untouched", sc == reinterpret_cast<CUcontext>(1));
    sg = reinterpret_cast<CUgreenCtx>(1);
    SAY(cuStreamGetGreenCtx(special, &sg));
    VAL("  GetGreenCtx == g", sg == g);
    VAL("  GetGreenCtx untouched", sg == reinterpret_cast<CUgreenCtx>(1));
    flags = 99;
    SAY(cuStreamGetFlags(special, &flags));
    VAL("  flags", flags);
    prio = 99;
    SAY(cuStreamGetPriority(special, &prio));
    VAL("  priority", prio);
    dev = -1;
    SAY(cuStreamGetDevice(special, &dev));
    VAL("  device", dev);
    SAY(cuStreamGetId(special, &id));
    SAY(cuStreamQuery(special));
    SAY(cuStreamSynchronize(special));
    CUdeviceptr p = 0;
    cuMemAlloc(&p, 256);
    SAY(cuMemsetD8Async(p, 1, 256, special));
    SAY(cuStreamSynchronize(special));
    cuMemFree(p);
    CUstreamCaptureStatus st;
    SAY(cuStreamIsCapturing(special, &st));
  }
  // cuStreamCreate with the converted context current.
  CUstream made = nullptr;
  SAY(cuStreamCreate(&made, 0));
  sg = nullptr;
  SAY(cuStreamGetGreenCtx(made, &sg));
  VAL("made under converted: green == g", sg == g);
  SAY(cuStreamGetCtx(made, &sc));
  VAL("made under converted: ctx == converted", sc == c);
  SAY(cuStreamGetCtx_v2(made, &sc, &sg));
  VAL("made under converted: v2 ctx == primary", sc == primary);
  VAL("made under converted: v2 ctx == converted", sc == c);
  SAY(cuStreamGetFlags(made, &flags));
  VAL("made under converted: flags", flags);
  CUstream made_nb = nullptr;
  SAY(cuStreamCreateWithPriority(&made_nb, CU_STREAM_NON_BLOCKING, -1));
  SAY(cuStreamGetPriority(made_nb, &prio));
  VAL("made under converted: priority", prio);
  // Green stream's getters with another context current.
  CUcontext other = nullptr;
  CUctxCreateParams params{};
  cuCtxCreate(&other, &params, 0, 0);
  SAY(cuStreamGetCtx_v2(s, &sc, &sg));
  VAL("other current: v2 green == g", sg == g);
  VAL("other current: v2 ctx == primary", sc == primary);
  CUdeviceptr p = 0;
  SAY(cuMemAlloc(&p, 1024));
  SAY(cuMemsetD8Async(p, 7, 1024, s));
  SAY(cuStreamSynchronize(s));
  unsigned char host[4] = {};
  SAY(cuMemcpyDtoH(host, p, 4));
  VAL("memset through green stream from other ctx", host[0]);
  cuCtxSetCurrent(primary);
  cuCtxDestroy(other);
  SAY(cuStreamDestroy(s));
  SAY(cuStreamDestroy(hi));
  SAY(cuStreamDestroy(lo));
  SAY(cuStreamDestroy(made));
  SAY(cuStreamDestroy(made_nb));
  SAY(cuStreamDestroy(r));
  SAY(cuGreenCtxDestroy(g));
}

const char kPtx[] =
    ".version 7.0\n.target sm_52\n.address_size 64\n"
    ".visible .entry fill(.param .u64 p, .param .u32 v)\n{\n"
    "  .reg .b64 %rd<4>;\n  .reg .b32 %r<4>;\n"
    "  ld.param.u64 %rd1, [p];\n  ld.param.u32 %r1, [v];\n"
    "  mov.u32 %r2, %tid.x;\n  cvta.to.global.u64 %rd2, %rd1;\n"
    "  mul.wide.u32 %rd3, %r2, 4;\n  add.s64 %rd2, %rd2, %rd3;\n"
    "  st.global.u32 [%rd2], %r1;\n  ret;\n}\n";

std::atomic<int> gate{0};
std::atomic<int> ran{0};
void CUDA_CB wait_gate(void*) {
  while (!gate.load()) std::this_thread::yield();
}
void CUDA_CB mark_ran(void*) { ran.store(1); }

void case_work() {
  CUgreenCtx g = make_green(dev_sm.sm.minSmPartitionSize);
  CUcontext c = nullptr;
  cuCtxFromGreenCtx(&c, g);
  CUstream s = nullptr;
  cuGreenCtxStreamCreate(&s, g, CU_STREAM_NON_BLOCKING, 0);
  // A module loaded in the primary context, launched in a green stream.
  CUmodule m = nullptr;
  CUfunction f = nullptr;
  SAY(cuModuleLoadData(&m, kPtx));
  SAY(cuModuleGetFunction(&f, m, "fill"));
  CUdeviceptr p = 0;
  cuMemAlloc(&p, 128);
  unsigned v = 5;
  void* args[] = {&p, &v};
  SAY(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, args, nullptr));
  SAY(cuStreamSynchronize(s));
  unsigned host[32] = {};
  cuMemcpyDtoH(host, p, sizeof host);
  VAL("primary module in green stream: value", host[31]);
  // A module loaded under the converted context.
  cuCtxSetCurrent(c);
  CUmodule m2 = nullptr;
  CUfunction f2 = nullptr;
  SAY(cuModuleLoadData(&m2, kPtx));
  SAY(cuModuleGetFunction(&f2, m2, "fill"));
  CUdeviceptr q = 0;
  SAY(cuMemAlloc(&q, 128));
  CUcontext owner = nullptr;
  SAY(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, q));
  VAL("allocation under converted: owner == converted", owner == c);
  VAL("allocation under converted: owner == primary", owner == primary);
  SAY(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, p));
  VAL("allocation under primary: owner == primary", owner == primary);
  v = 9;
  void* args2[] = {&q, &v};
  SAY(cuLaunchKernel(f2, 1, 1, 1, 32, 1, 1, 0, nullptr, args2, nullptr));
  SAY(cuCtxSynchronize());
  cuMemcpyDtoH(host, q, sizeof host);
  VAL("converted module on NULL stream: value", host[0]);
  CUcontext fctx = nullptr;
  SAY(cuFuncGetAttribute(reinterpret_cast<int*>(&v), CU_FUNC_ATTRIBUTE_NUM_REGS, f2));
  cuCtxSetCurrent(primary);
  v = 11;
  SAY(cuLaunchKernel(f2, 1, 1, 1, 32, 1, 1, 0, nullptr, args2, nullptr));
  SAY(cuCtxSynchronize());
  cuMemcpyDtoH(host, q, sizeof host);
  VAL("converted module on primary's NULL stream: value", host[0]);
  (void)fctx;
  // Capture in a green stream, and a graph launched into it.
  CUgraph graph = nullptr;
  SAY(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  SAY(cuMemsetD32Async(p, 42, 32, s));
  CUstreamCaptureStatus st;
  cuuint64_t cid = 0;
  SAY(cuStreamGetCaptureInfo(s, &st, &cid, nullptr, nullptr, nullptr, nullptr));
  VAL("capture status", st);
  SAY(cuStreamEndCapture(s, &graph));
  CUgraphExec exec = nullptr;
  SAY(cuGraphInstantiate(&exec, graph, 0));
  SAY(cuGraphLaunch(exec, s));
  SAY(cuStreamSynchronize(s));
  cuMemcpyDtoH(host, p, sizeof host);
  VAL("graph in green stream: value", host[5]);
  // Legacy stream under the converted context orders after blocking streams?
  cuCtxSetCurrent(c);
  CUstream blocking = nullptr;
  cuStreamCreate(&blocking, 0);
  gate = 0;
  ran = 0;
  SAY(cuLaunchHostFunc(blocking, wait_gate, nullptr));
  SAY(cuLaunchHostFunc(nullptr, mark_ran, nullptr));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  VAL("legacy op under converted ran before the blocking stream's", ran.load());
  gate = 1;
  cuCtxSynchronize();
  // ... and does the primary context's legacy stream wait for the converted context's blocking stream?
  gate = 0;
  ran = 0;
  SAY(cuLaunchHostFunc(blocking, wait_gate, nullptr));
  cuCtxSetCurrent(primary);
  SAY(cuLaunchHostFunc(nullptr, mark_ran, nullptr));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  VAL("primary legacy op ran before converted blocking stream's", ran.load());
  gate = 1;
  cuCtxSynchronize();
  cuCtxSetCurrent(c);
  SAY(cuCtxSynchronize());
  cuCtxSetCurrent(primary);
  // Does cuCtxSynchronize of the primary wait for a green stream?
  gate = 0;
  SAY(cuLaunchHostFunc(s, wait_gate, nullptr));
  std::thread release([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    gate = 1;
  });
  auto t0 = std::chrono::steady_clock::now();
  SAY(cuCtxSynchronize());
  auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  VAL("primary cuCtxSynchronize waited for the green stream", waited >= 200);
  release.join();
  cuStreamDestroy(blocking);
  cuStreamDestroy(s);
  cuGreenCtxDestroy(g);
}

void case_events() {
  CUgreenCtx g = make_green(dev_sm.sm.minSmPartitionSize);
  CUcontext c = nullptr;
  cuCtxFromGreenCtx(&c, g);
  CUstream s = nullptr;
  cuGreenCtxStreamCreate(&s, g, CU_STREAM_NON_BLOCKING, 0);
  CUevent e_primary = nullptr, e_green = nullptr;
  cuEventCreate(&e_primary, 0);
  cuCtxSetCurrent(c);
  cuEventCreate(&e_green, 0);
  cuCtxSetCurrent(primary);
  SAY(cuGreenCtxRecordEvent(g, e_primary));
  SAY(cuGreenCtxRecordEvent(g, e_green));
  SAY(cuGreenCtxRecordEvent(nullptr, e_green));
  SAY(cuGreenCtxRecordEvent(g, nullptr));
  SAY(cuGreenCtxWaitEvent(g, e_primary));
  SAY(cuGreenCtxWaitEvent(g, e_green));
  SAY(cuGreenCtxWaitEvent(nullptr, e_green));
  SAY(cuGreenCtxWaitEvent(g, nullptr));
  CUcontext other = nullptr;
  CUctxCreateParams params{};
  cuCtxCreate(&other, &params, 0, 0);
  CUevent e_other = nullptr;
  cuEventCreate(&e_other, 0);
  SAY(cuGreenCtxRecordEvent(g, e_other));
  SAY(cuGreenCtxWaitEvent(g, e_other));
  cuCtxSetCurrent(primary);
  // Record captures the green context's work.
  gate = 0;
  SAY(cuLaunchHostFunc(s, wait_gate, nullptr));
  SAY(cuGreenCtxRecordEvent(g, e_green));
  SAY(cuEventQuery(e_green));
  gate = 1;
  SAY(cuEventSynchronize(e_green));
  // ... and work of a stream made by cuStreamCreate under the converted context?
  cuCtxSetCurrent(c);
  CUstream made = nullptr;
  cuStreamCreate(&made, CU_STREAM_NON_BLOCKING);
  cuCtxSetCurrent(primary);
  gate = 0;
  SAY(cuLaunchHostFunc(made, wait_gate, nullptr));
  SAY(cuGreenCtxRecordEvent(g, e_green));
  SAY(cuEventQuery(e_green));
  gate = 1;
  cuStreamSynchronize(made);
  // ... and work of the converted context's NULL stream?
  cuCtxSetCurrent(c);
  gate = 0;
  SAY(cuLaunchHostFunc(nullptr, wait_gate, nullptr));
  cuCtxSetCurrent(primary);
  SAY(cuGreenCtxRecordEvent(g, e_green));
  SAY(cuEventQuery(e_green));
  gate = 1;
  cuCtxSetCurrent(c);
  cuCtxSynchronize();
  cuCtxSetCurrent(primary);
  // ... and the primary context's own work?
  CUstream ps = nullptr;
  cuStreamCreate(&ps, CU_STREAM_NON_BLOCKING);
  gate = 0;
  cuLaunchHostFunc(ps, wait_gate, nullptr);
  SAY(cuGreenCtxRecordEvent(g, e_green));
  SAY(cuEventQuery(e_green));
  gate = 1;
  cuStreamSynchronize(ps);
  // Wait: later work of the green context's streams waits for the event.
  gate = 0;
  ran = 0;
  cuLaunchHostFunc(ps, wait_gate, nullptr);
  cuEventRecord(e_primary, ps);
  SAY(cuGreenCtxWaitEvent(g, e_primary));
  CUstream later = nullptr;
  cuGreenCtxStreamCreate(&later, g, CU_STREAM_NON_BLOCKING, 0);
  cuLaunchHostFunc(s, mark_ran, nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  VAL("green stream ran past a waited event", ran.load());
  ran = 0;
  cuLaunchHostFunc(later, mark_ran, nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  VAL("stream made after the wait ran past it", ran.load());
  gate = 1;
  cuStreamSynchronize(s);
  cuStreamSynchronize(later);
  // Record while a green stream captures.
  SAY(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
  SAY(cuGreenCtxRecordEvent(g, e_green));
  CUstreamCaptureStatus st;
  SAY(cuStreamIsCapturing(s, &st));
  VAL("capture status after record", st);
  CUgraph graph = nullptr;
  SAY(cuStreamEndCapture(s, &graph));
  SAY(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
  SAY(cuGreenCtxWaitEvent(g, e_green));
  SAY(cuStreamIsCapturing(s, &st));
  VAL("capture status after wait", st);
  SAY(cuStreamEndCapture(s, &graph));
  // Wait on an event recorded in a capture.
  CUstream cap = nullptr;
  cuStreamCreate(&cap, CU_STREAM_NON_BLOCKING);
  SAY(cuStreamBeginCapture(cap, CU_STREAM_CAPTURE_MODE_RELAXED));
  SAY(cuEventRecord(e_primary, cap));
  SAY(cuGreenCtxWaitEvent(g, e_primary));
  SAY(cuStreamIsCapturing(cap, &st));
  VAL("capture status of the event's capture", st);
  SAY(cuStreamEndCapture(cap, &graph));
  // Events recorded in green streams, waited elsewhere.
  gate = 0;
  ran = 0;
  cuLaunchHostFunc(s, wait_gate, nullptr);
  SAY(cuEventRecord(e_primary, s));
  SAY(cuStreamWaitEvent(ps, e_primary, 0));
  cuLaunchHostFunc(ps, mark_ran, nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  VAL("primary stream ran past a green stream's event", ran.load());
  gate = 1;
  cuStreamSynchronize(ps);
  float ms = 0;
  SAY(cuEventRecord(e_green, s));
  SAY(cuEventSynchronize(e_green));
  CUevent t0 = nullptr, t1 = nullptr;
  cuEventCreate(&t0, 0);
  cuEventCreate(&t1, 0);
  cuEventRecord(t0, s);
  cuEventRecord(t1, ps);
  cuCtxSynchronize();
  SAY(cuEventElapsedTime(&ms, t0, t1));
  cuStreamDestroy(cap);
  cuStreamDestroy(later);
  cuStreamDestroy(made);
  cuStreamDestroy(ps);
  cuStreamDestroy(s);
  SAY(cuGreenCtxDestroy(g));
  SAY(cuEventQuery(e_green));
  SAY(cuEventRecord(e_green, nullptr));
  SAY(cuEventDestroy(e_green));
}

void case_teardown() {
  CUgreenCtx g = make_green(dev_sm.sm.minSmPartitionSize);
  CUcontext c = nullptr;
  cuCtxFromGreenCtx(&c, g);
  CUstream s = nullptr, made = nullptr;
  cuGreenCtxStreamCreate(&s, g, CU_STREAM_NON_BLOCKING, 0);
  cuCtxSetCurrent(c);
  cuStreamCreate(&made, 0);
  CUdeviceptr p = 0;
  SAY(cuMemAlloc(&p, 1024));
  cuCtxSetCurrent(primary);
  SAY(cuMemsetD8Async(p, 3, 1024, s));
  SAY(cuGreenCtxDestroy(g));
  SAY(cuGreenCtxDestroy(g));
  SAY(cuGreenCtxDestroy(nullptr));
  SAY(cuStreamQuery(s));
  SAY(cuStreamSynchronize(s));
  unsigned flags = 0;
  SAY(cuStreamGetFlags(s, &flags));
  CUcontext sc = nullptr;
  SAY(cuStreamGetCtx(s, &sc));
  CUgreenCtx sg = nullptr;
  SAY(cuStreamGetGreenCtx(s, &sg));
  SAY(cuMemsetD8Async(p, 3, 1024, s));
  SAY(cuStreamQuery(made));
  SAY(cuStreamDestroy(s));
  SAY(cuStreamDestroy(made));
  unsigned char host[4] = {};
  SAY(cuMemcpyDtoH(host, p, 4));
  VAL("memory of a destroyed green context still readable", host[0]);
  SAY(cuMemFree(p));
  CUcontext back = nullptr;
  SAY(cuCtxFromGreenCtx(&back, g));
  unsigned long long id = 0;
  SAY(cuGreenCtxGetId(g, &id));
  CUdevResource r{};
  SAY(cuGreenCtxGetDevResource(g, &r, CU_DEV_RESOURCE_TYPE_SM));
  SAY(cuGreenCtxStreamCreate(&s, g, CU_STREAM_NON_BLOCKING, 0));
  CUevent e = nullptr;
  cuEventCreate(&e, 0);
  SAY(cuGreenCtxRecordEvent(g, e));
  SAY(cuGreenCtxWaitEvent(g, e));
  // The converted context after its green context is gone.
  SAY(cuCtxSetCurrent(c));
  SAY(cuCtxSynchronize());
  CUdevice dev = -1;
  SAY(cuCtxGetDevice(&dev));
  CUdeviceptr q = 0;
  SAY(cuMemAlloc(&q, 16));
  unsigned ver = 0;
  SAY(cuCtxGetApiVersion(c, &ver));
  SAY(cuCtxGetDevResource(c, &r, CU_DEV_RESOURCE_TYPE_SM));
  SAY(cuCtxPushCurrent(c));
  cuCtxSetCurrent(primary);
}

void case_converted_current_destroy() {
  CUgreenCtx g = make_green(dev_sm.sm.minSmPartitionSize);
  CUcontext c = nullptr;
  cuCtxFromGreenCtx(&c, g);
  cuCtxSetCurrent(c);
  SAY(cuGreenCtxDestroy(g));
  CUcontext cur = nullptr;
  SAY(cuCtxGetCurrent(&cur));
  VAL("current after destroy == converted", cur == c);
  VAL("current after destroy == NULL", cur == nullptr);
  SAY(cuCtxSynchronize());
  CUstream s = nullptr;
  SAY(cuStreamCreate(&s, 0));
}

void case_many() {
  std::vector<CUgreenCtx> gs;
  CUdevResource groups[64];
  unsigned n = 64;
  cuDevSmResourceSplitByCount(groups, &n, &dev_sm, nullptr, 0, 8);
  VAL("groups of 8", n);
  for (unsigned i = 0; i < n; ++i) {
    CUdevResourceDesc d = nullptr;
    cuDevResourceGenerateDesc(&d, &groups[i], 1);
    CUgreenCtx g = nullptr;
    if (cuGreenCtxCreate(&g, d, 0, CU_GREEN_CTX_DEFAULT_STREAM) == CUDA_SUCCESS) gs.push_back(g);
  }
  VAL("green contexts made, one per group", gs.size());
  // The same desc many times.
  CUdevResourceDesc d = nullptr;
  cuDevResourceGenerateDesc(&d, &groups[0], 1);
  int made = 0;
  for (int i = 0; i < 64; ++i) {
    CUgreenCtx g = nullptr;
    if (cuGreenCtxCreate(&g, d, 0, CU_GREEN_CTX_DEFAULT_STREAM) == CUDA_SUCCESS) {
      ++made;
      gs.push_back(g);
    }
  }
  VAL("green contexts of one desc", made);
  int destroyed = 0;
  for (CUgreenCtx g : gs) destroyed += cuGreenCtxDestroy(g) == CUDA_SUCCESS;
  VAL("destroyed", destroyed);
}

// A stream held on the device (cuStreamWaitValue32) until release():
// ordering probes that do not depend on host functions, which driver 580
// runs one at a time.
struct Gate {
  volatile uint32_t* host = nullptr;
  CUdeviceptr dev = 0;
  Gate() {
    void* p = nullptr;
    cuMemAllocHost(&p, 4);
    host = static_cast<volatile uint32_t*>(p);
    *host = 0;
    cuMemHostGetDevicePointer(&dev, p, 0);
  }
  CUresult hold(CUstream s) { return cuStreamWaitValue32(s, dev, 1, CU_STREAM_WAIT_VALUE_GEQ); }
  void release() { *host = 1; }
};
// Whether `e` completes within a second.
bool completes(CUevent e) {
  for (int i = 0; i < 1000; ++i) {
    if (cuEventQuery(e) == CUDA_SUCCESS) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}
// Enqueues a memset and a record of a fresh event (of the primary context) on `s`.
CUevent work_on(CUstream s, CUdeviceptr p) {
  CUevent e = nullptr;
  CUcontext cur = nullptr;
  cuCtxGetCurrent(&cur);
  cuCtxPushCurrent(primary);
  cuEventCreate(&e, CU_EVENT_DISABLE_TIMING);
  cuCtxPopCurrent(nullptr);
  cuMemsetD8Async(p, 1, 64, s);
  cuEventRecord(e, s);
  return e;
}

void case_ordering() {
  CUgreenCtx g = make_green(dev_sm.sm.minSmPartitionSize);
  CUcontext c = nullptr;
  cuCtxFromGreenCtx(&c, g);
  CUstream s = nullptr, s2 = nullptr;
  cuGreenCtxStreamCreate(&s, g, CU_STREAM_NON_BLOCKING, 0);
  cuGreenCtxStreamCreate(&s2, g, CU_STREAM_NON_BLOCKING, 0);
  CUdeviceptr p = 0;
  cuMemAlloc(&p, 4096);
  {
    Gate a;
    SAY(a.hold(s));
    VAL("primary legacy runs past a held green stream", completes(work_on(CU_STREAM_LEGACY, p)));
    CUstream pb = nullptr;
    cuStreamCreate(&pb, 0);
    VAL("primary blocking stream runs past a held green stream", completes(work_on(pb, p)));
    cuCtxSetCurrent(c);
    VAL("converted NULL stream runs past a held green stream", completes(work_on(nullptr, p)));
    VAL("another green stream runs past a held green stream", completes(work_on(s2, p)));
    cuCtxSetCurrent(primary);
    a.release();
    SAY(cuStreamSynchronize(s));
  }
  {
    Gate a;
    cuCtxSetCurrent(c);
    SAY(a.hold(nullptr));
    VAL("green stream runs past a held converted NULL stream", completes(work_on(s, p)));
    CUstream made = nullptr;
    cuStreamCreate(&made, 0);
    VAL("stream made under converted runs past a held converted NULL stream", completes(work_on(made, p)));
    cuCtxSetCurrent(primary);
    VAL("primary legacy runs past a held converted NULL stream", completes(work_on(CU_STREAM_LEGACY, p)));
    a.release();
    cuCtxSetCurrent(c);
    SAY(cuCtxSynchronize());
    cuCtxSetCurrent(primary);
  }
  {
    Gate a;
    SAY(a.hold(CU_STREAM_LEGACY));
    cuCtxSetCurrent(c);
    VAL("converted NULL stream runs past a held primary legacy stream", completes(work_on(nullptr, p)));
    VAL("green stream runs past a held primary legacy stream", completes(work_on(s, p)));
    cuCtxSetCurrent(primary);
    a.release();
    SAY(cuCtxSynchronize());
  }
  for (int which = 0; which < 2; ++which) {
    // Does one context's cuCtxSynchronize wait for the other's held work?
    Gate a;
    CUstream ps = nullptr;
    cuStreamCreate(&ps, CU_STREAM_NON_BLOCKING);
    SAY(a.hold(which == 0 ? s : ps));
    std::thread release([&a] {
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
      a.release();
    });
    cuCtxSetCurrent(which == 0 ? primary : c);
    auto t0 = std::chrono::steady_clock::now();
    SAY(cuCtxSynchronize());
    auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    VAL(which == 0 ? "primary cuCtxSynchronize waits for a held green stream"
                   : "converted cuCtxSynchronize waits for a held primary stream",
        waited >= 300);
    release.join();
    cuCtxSetCurrent(primary);
    cuCtxSynchronize();
    cuCtxSetCurrent(c);
    cuCtxSynchronize();
    cuCtxSetCurrent(primary);
  }
  {
    // cuGreenCtxWaitEvent: which streams wait.
    Gate a;
    CUstream ps = nullptr;
    cuStreamCreate(&ps, CU_STREAM_NON_BLOCKING);
    SAY(a.hold(ps));
    CUevent e = nullptr;
    cuEventCreate(&e, CU_EVENT_DISABLE_TIMING);
    cuEventRecord(e, ps);
    SAY(cuGreenCtxWaitEvent(g, e));
    CUstream later = nullptr;
    cuGreenCtxStreamCreate(&later, g, CU_STREAM_NON_BLOCKING, 0);
    VAL("after green wait: green stream runs past the held event", completes(work_on(s, p)));
    VAL("after green wait: green stream made later runs past it", completes(work_on(later, p)));
    cuCtxSetCurrent(c);
    VAL("after green wait: converted NULL stream runs past it", completes(work_on(nullptr, p)));
    cuCtxSetCurrent(primary);
    VAL("after green wait: primary legacy runs past it", completes(work_on(CU_STREAM_LEGACY, p)));
    a.release();
    SAY(cuCtxSynchronize());
    cuCtxSetCurrent(c);
    SAY(cuCtxSynchronize());
    cuCtxSetCurrent(primary);
  }
  {
    // cuGreenCtxRecordEvent: a held green stream and a held converted NULL stream.
    Gate a;
    SAY(a.hold(s2));
    CUevent e = nullptr;
    cuEventCreate(&e, CU_EVENT_DISABLE_TIMING);
    SAY(cuGreenCtxRecordEvent(g, e));
    VAL("green record completes while a green stream is held", completes(e));
    a.release();
    SAY(cuEventSynchronize(e));
    SAY(cuStreamSynchronize(s2));
  }
  SAY(cuStreamDestroy(s));
  SAY(cuStreamDestroy(s2));
  SAY(cuGreenCtxDestroy(g));
}

void case_capture_default() {
  // A converted context's NULL stream and capture.
  CUgreenCtx g = make_green(dev_sm.sm.minSmPartitionSize);
  CUcontext c = nullptr;
  cuCtxFromGreenCtx(&c, g);
  cuCtxSetCurrent(c);
  CUdeviceptr p = 0;
  cuMemAlloc(&p, 256);
  for (CUstream h : {static_cast<CUstream>(nullptr), CU_STREAM_LEGACY}) {
    std::printf("  converted current, stream %p:\n", static_cast<void*>(h));
    CUgraph graph = nullptr;
    SAY(cuStreamBeginCapture(h, CU_STREAM_CAPTURE_MODE_RELAXED));
    SAY(cuMemsetD8Async(p, 5, 256, h));
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    SAY(cuStreamIsCapturing(h, &st));
    VAL("  status", st);
    SAY(cuStreamEndCapture(h, &graph));
    VAL("  graph made", graph != nullptr);
    if (graph) {
      size_t n = 0;
      cuGraphGetNodes(graph, nullptr, &n);
      VAL("  nodes", n);
      CUgraphExec exec = nullptr;
      SAY(cuGraphInstantiate(&exec, graph, 0));
      SAY(cuGraphLaunch(exec, h));
      SAY(cuStreamSynchronize(h));
    }
  }
  // A regular stream made under the converted context, capturing: does the NULL stream become unusable?
  CUstream made = nullptr;
  cuStreamCreate(&made, 0);
  SAY(cuStreamBeginCapture(made, CU_STREAM_CAPTURE_MODE_RELAXED));
  SAY(cuMemsetD8Async(p, 6, 256, nullptr));
  CUgraph graph = nullptr;
  SAY(cuStreamEndCapture(made, &graph));
  SAY(cuCtxSynchronize());
  unsigned flags = 99;
  SAY(cuStreamGetFlags(made, &flags));
  VAL("flags of cuStreamCreate(0) under converted", flags);
  cuCtxSetCurrent(primary);
  unsigned char host = 0;
  cuMemcpyDtoH(&host, p, 1);
  VAL("value", host);
  int sms = 0;
  cuCtxSetCurrent(c);
  SAY(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
  VAL("MULTIPROCESSOR_COUNT under converted == device smCount", sms == static_cast<int>(dev_sm.sm.smCount));
  cuCtxSetCurrent(primary);
}

void case_regular_destroyed() {
  // For comparison with a destroyed green context's converted context.
  CUcontext made = nullptr;
  CUctxCreateParams params{};
  cuCtxCreate(&made, &params, 0, 0);
  cuCtxDestroy(made);
  SAY(cuCtxSetCurrent(made));
  SAY(cuCtxPushCurrent(made));
  unsigned ver = 0;
  SAY(cuCtxGetApiVersion(made, &ver));
  cuCtxSetCurrent(primary);
  CUstream r = nullptr;
  cuStreamCreate(&r, 0);
  CUcontext sc = nullptr;
  CUgreenCtx sg = reinterpret_cast<CUgreenCtx>(1);
  SAY(cuStreamGetCtx_v2(r, nullptr, &sg));
  VAL("regular stream, v2 with no ctx pointer: green NULL", sg == nullptr);
  SAY(cuStreamGetCtx_v2(r, &sc, nullptr));
  VAL("regular stream, v2 with no green pointer: ctx primary", sc == primary);
  SAY(cuStreamGetCtx_v2(r, nullptr, nullptr));
  SAY(cuStreamGetCtx_v2(nullptr, nullptr, &sg));
}

void case_uninit() {}

struct Named {
  const char* name;
  void (*fn)();
  bool init;
};

}  // namespace

int main() {
  const Named cases[] = {{"uninit", case_uninit, false},
                         {"resources", case_resources, true},
                         {"split_counts", case_split_counts, true},
                         {"split_args", case_split_args, true},
                         {"desc", case_desc, true},
                         {"create", case_create, true},
                         {"primary_retained", case_primary_retained, true},
                         {"streams", case_streams, true},
                         {"work", case_work, true},
                         {"events", case_events, true},
                         {"teardown", case_teardown, true},
                         {"converted_current_destroy", case_converted_current_destroy, true},
                         {"many", case_many, true},
                         {"ordering", case_ordering, true},
                         {"capture_default", case_capture_default, true},
                         {"regular_destroyed", case_regular_destroyed, true}};
  for (const Named& c : cases) {
    std::printf("%s:\n", c.name);
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      std::setvbuf(stdout, nullptr, _IONBF, 0);  // every line out before a crash
      if (!c.init) {
        CUdevResource r{};
        SAY(cuDeviceGetDevResource(0, &r, CU_DEV_RESOURCE_TYPE_SM));
        CUgreenCtx g = nullptr;
        SAY(cuGreenCtxCreate(&g, nullptr, 0, 1));
        SAY(cuGreenCtxDestroy(nullptr));
        unsigned n = 0;
        SAY(cuDevSmResourceSplitByCount(nullptr, &n, &r, nullptr, 0, 8));
        std::fflush(stdout);
        _exit(0);
      }
      if (cuInit(0) || cuDevicePrimaryCtxRetain(&primary, 0) || cuCtxSetCurrent(primary)) {
        std::printf("  no context\n");
        _exit(1);
      }
      if (CUresult r = cuDeviceGetDevResource(0, &dev_sm, CU_DEV_RESOURCE_TYPE_SM))
        std::printf("  device resource: %s\n", name_of(r));
      c.fn();
      std::fflush(stdout);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) std::printf("  killed by signal %d\n", WTERMSIG(status));
  }
  return 0;
}
