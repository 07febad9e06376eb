// Device printf, assert, trap, memory faults and __nanosleep
// (tests/kernels/faults.cu). On NVIDIA's driver a fault is sticky for the
// whole process: its own context, the primary context and any context
// created later all keep returning it. So each fault runs in a child
// process (this program again, running one hidden FaultChild* test), inside
// a context of its own there; the parent forwards the child's INFO lines
// and then checks that its own context still works.
#include <unistd.h>

#include <cstdio>

#include "kernels_util.h"

namespace {

const char* kFaultsPtx = "ptx/faults.sm90.ptx";

using kt::in_fault_child;

// run_in_child, then checks that this process is unaffected.
void run_in_child(const std::string& name) {
  kt::run_in_child(name);
  kt::Module m(kFaultsPtx);
  kt::Buf<int32_t> out(64);
  kt::run(m.fn("assert_if"), {1}, {32}, 0, 5, out.p);
  EXPECT_TRUE(out.get()[31] == 6);
}

// A context of the test's own, current while it lives.
struct OwnContext {
  CUcontext ctx = nullptr;
  OwnContext() {
    CUdevice d;
    ASSERT_CU(cuDeviceGet(&d, 0));
    ASSERT_CU(cuCtxCreate(&ctx, nullptr, 0, d));
  }
  OwnContext(const OwnContext&) = delete;
  OwnContext& operator=(const OwnContext&) = delete;
  ~OwnContext() {
    if (ctx) cuCtxDestroy(ctx);
    cuCtxSetCurrent(conf::primary());
  }
};

// In the child: launches a faulting kernel through `go` in a fresh context.
// The launch itself succeeds, the synchronization returns `expected`, and
// later calls in that context keep returning it. What the primary context
// returns afterwards is recorded only.
template <class Go>
void fault_case(const char* key, CUresult expected, Go go) {
  if (!in_fault_child()) throw conf::Skip{"runs in a child process of the matching Kernel* test"};
  const std::string k(key);
  {
    OwnContext own;
    kt::Module m(kFaultsPtx);
    kt::Buf<int32_t> buf(64);
    ASSERT_CU(go(m, buf));
    CUresult sync = cuCtxSynchronize();
    conf::info(key, sync);
    if (sync != expected)
      throw conf::Failure{k + ": synchronize returned " + conf::name_of(sync) + ", expected " +
                          conf::name_of(expected)};
    CUresult again = cuCtxSynchronize();
    CUdeviceptr p = 0;
    CUresult alloc = cuMemAlloc(&p, 256);
    conf::info((k + "_then_synchronize").c_str(), again);
    conf::info((k + "_then_mem_alloc").c_str(), alloc);
    if (again != sync || alloc != sync)
      throw conf::Failure{k + ": the error was not sticky (" + conf::name_of(again) + ", " + conf::name_of(alloc) +
                          ")"};
  }
  CUdeviceptr p = 0;
  CUresult r = cuCtxSetCurrent(conf::primary());
  if (r == CUDA_SUCCESS) r = cuMemAlloc(&p, 256);
  conf::info((k + "_then_primary_mem_alloc").c_str(), r);
  if (r == CUDA_SUCCESS) cuMemFree(p);
}

}  // namespace

CONF_TEST(KernelDevicePrintfCompletesWithoutError) {
  kt::for_each_variant("faults", [&](kt::Module& m) { kt::run(m.fn("say_hello"), {2}, {32}, 0, 42, 3.25); });
}

CONF_TEST(KernelAssertPasses) {
  kt::for_each_variant("faults", [&](kt::Module& m) {
    kt::Buf<int32_t> out(64);
    kt::run(m.fn("assert_if"), {1}, {64}, 0, 41, out.p);
    std::vector<int32_t> got = out.get();
    EXPECT_TRUE(got[0] == 42 && got[63] == 42);
  });
}

CONF_TEST(KernelFailedAssertIsStickyAssert) { run_in_child("FaultChildFailedAssertIsStickyAssert"); }
CONF_TEST(FaultChildFailedAssertIsStickyAssert) {
  fault_case("fault_assert", CUDA_ERROR_ASSERT, [](kt::Module& m, kt::Buf<int32_t>& buf) {
    return kt::launch(m.fn("assert_if"), {1}, {32}, 0, nullptr, 42, buf.p);
  });
}

CONF_TEST(KernelTrapIsStickyLaunchFailed) { run_in_child("FaultChildTrapIsStickyLaunchFailed"); }
CONF_TEST(FaultChildTrapIsStickyLaunchFailed) {
  fault_case("fault_trap", CUDA_ERROR_LAUNCH_FAILED, [](kt::Module& m, kt::Buf<int32_t>& buf) {
    return kt::launch(m.fn("trap_if"), {1}, {1}, 0, nullptr, 1, buf.p);
  });
}

CONF_TEST(KernelTrapNotTaken) {
  kt::Module m(kFaultsPtx);
  kt::Buf<int32_t> out(1);
  kt::run(m.fn("trap_if"), {1}, {1}, 0, 0, out.p);
  EXPECT_TRUE(out.get()[0] == 2);
}

CONF_TEST(KernelFarStoreIsStickyIllegalAddress) { run_in_child("FaultChildFarStoreIsStickyIllegalAddress"); }
CONF_TEST(FaultChildFarStoreIsStickyIllegalAddress) {
  fault_case("fault_store_far", CUDA_ERROR_ILLEGAL_ADDRESS, [](kt::Module& m, kt::Buf<int32_t>& buf) {
    return kt::launch(m.fn("store_far"), {1}, {1}, 0, nullptr, buf.p, 1ll << 40);
  });
}

CONF_TEST(KernelFarLoadIsStickyIllegalAddress) { run_in_child("FaultChildFarLoadIsStickyIllegalAddress"); }
CONF_TEST(FaultChildFarLoadIsStickyIllegalAddress) {
  fault_case("fault_load_far", CUDA_ERROR_ILLEGAL_ADDRESS, [](kt::Module& m, kt::Buf<int32_t>& buf) {
    return kt::launch(m.fn("load_far"), {1}, {32}, 0, nullptr, buf.p, -(1ll << 38), buf.p);
  });
}

CONF_TEST(KernelFarReductionIsStickyIllegalAddress) { run_in_child("FaultChildFarReductionIsStickyIllegalAddress"); }
CONF_TEST(FaultChildFarReductionIsStickyIllegalAddress) {
  fault_case("fault_reduce_far", CUDA_ERROR_ILLEGAL_ADDRESS, [](kt::Module& m, kt::Buf<int32_t>& buf) {
    return kt::launch(m.fn("reduce_far"), {4}, {32}, 0, nullptr, buf.p, 1ll << 40);
  });
}

CONF_TEST(KernelNullPageLoadIsStickyIllegalAddress) { run_in_child("FaultChildNullPageLoadIsStickyIllegalAddress"); }
CONF_TEST(FaultChildNullPageLoadIsStickyIllegalAddress) {
  fault_case("fault_load_null", CUDA_ERROR_ILLEGAL_ADDRESS, [](kt::Module& m, kt::Buf<int32_t>& buf) {
    return kt::launch(m.fn("load_far"), {1}, {1}, 0, nullptr, (CUdeviceptr)16, 0ll, buf.p);
  });
}

CONF_TEST(KernelMisalignedLoadIsStickyMisalignedAddress) { run_in_child("FaultChildMisalignedLoadIsStickyMisalignedAddress"); }
CONF_TEST(FaultChildMisalignedLoadIsStickyMisalignedAddress) {
  fault_case("fault_load_misaligned", CUDA_ERROR_MISALIGNED_ADDRESS, [](kt::Module& m, kt::Buf<int32_t>& buf) {
    return kt::launch(m.fn("load_misaligned"), {1}, {1}, 0, nullptr, buf.p, 1, buf.p);
  });
}

CONF_TEST(KernelMisalignedStoreIsStickyMisalignedAddress) { run_in_child("FaultChildMisalignedStoreIsStickyMisalignedAddress"); }
CONF_TEST(FaultChildMisalignedStoreIsStickyMisalignedAddress) {
  fault_case("fault_store_misaligned", CUDA_ERROR_MISALIGNED_ADDRESS, [](kt::Module& m, kt::Buf<int32_t>& buf) {
    return kt::launch(m.fn("store_misaligned"), {1}, {1}, 0, nullptr, buf.p, 4);
  });
}

CONF_TEST(KernelNanosleepReturnsWithinASecond) {
  kt::for_each_variant("faults", [&](kt::Module& m) {
    kt::Buf<uint64_t> out(64);
    kt::run(m.fn("nap"), {2}, {32}, 0, 20000u, out.p);
    std::vector<uint64_t> got = out.get();
    uint64_t lo = ~0ull, hi = 0;
    for (uint64_t v : got) lo = std::min(lo, v), hi = std::max(hi, v);
    conf::info_value("nanosleep_20us_min_ns", (long long)lo);
    conf::info_value("nanosleep_20us_max_ns", (long long)hi);
    // __nanosleep sleeps for about [0, 2 * ns]: only an upper bound holds.
    EXPECT_TRUE(hi < 1000000000ull);
  });
}
