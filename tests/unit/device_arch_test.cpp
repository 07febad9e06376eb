// The architecture a device presents (CUCPU_ARCH): the capability it
// reports, the limits that follow from it, and which PTX targets load.
// ctest runs this program under each architecture cucpu presents.
#include <cstdlib>
#include <cstring>
#include <string>

#include "api_context_test.h"

namespace {

int attr(CUdevice_attribute a) {
  int v = -1;
  EXPECT_EQ(cuDeviceGetAttribute(&v, a, 0), CUDA_SUCCESS);
  return v;
}

CUresult load(const std::string& target) {
  const std::string ptx = ".version 8.7\n.target " + target +
                          "\n.address_size 64\n.visible .entry k(.param .u32 n) {\n  .shared .align 4 .b8 s[16];\n  ret;\n}\n";
  CUmodule m = nullptr;
  CUresult r = cuModuleLoadData(&m, ptx.c_str());
  if (r == CUDA_SUCCESS) cuModuleUnload(m);
  return r;
}

class DeviceArch : public ApiContextTest {};

TEST_F(DeviceArch, ReportsTheCapabilityCucpuArchNames) {
  const int cc = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
                 attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  const char* env = std::getenv("CUCPU_ARCH");
  EXPECT_EQ(cc, env ? std::atoi(env + 3) : 121);
  int fn_cc = 0;
  CUmodule m;
  ASSERT_EQ(cuModuleLoadData(&m, ".version 8.0\n.target sm_75\n.address_size 64\n.visible .entry k() { ret; }\n"),
            CUDA_SUCCESS);
  CUfunction f;
  ASSERT_EQ(cuModuleGetFunction(&f, m, "k"), CUDA_SUCCESS);
  ASSERT_EQ(cuFuncGetAttribute(&fn_cc, CU_FUNC_ATTRIBUTE_BINARY_VERSION, f), CUDA_SUCCESS);
  EXPECT_EQ(fn_cc, cc);  // code runs as the device's own architecture
  cuModuleUnload(m);
}

TEST_F(DeviceArch, SharedMemoryLimitsAgreeWithEachOther) {
  const int per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  const int optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  const int reserved = attr(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
  EXPECT_EQ(optin, per_sm - reserved);
  EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK), 48 * 1024);
  EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR) % 512, 0);
  // A launch may opt in to exactly that much dynamic shared memory.
  CUmodule m;
  ASSERT_EQ(cuModuleLoadData(&m, ".version 8.0\n.target sm_75\n.address_size 64\n.visible .entry k() { ret; }\n"),
            CUDA_SUCCESS);
  CUfunction f;
  ASSERT_EQ(cuModuleGetFunction(&f, m, "k"), CUDA_SUCCESS);
  EXPECT_EQ(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin + 1), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin), CUDA_SUCCESS);
  EXPECT_EQ(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, optin, nullptr, nullptr, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, optin + 1, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  cuModuleUnload(m);
}

TEST_F(DeviceArch, PtxTargetsLoadByTheDriversRules) {
  const int major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  const int minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  const std::string sm = "sm_" + std::to_string(major * 10 + minor);
  EXPECT_EQ(load(sm), CUDA_SUCCESS);                                           // its own
  EXPECT_EQ(load("sm_75"), CUDA_SUCCESS);                                      // an older one
  EXPECT_EQ(load("sm_" + std::to_string(major * 10 + minor + 1)), CUDA_ERROR_INVALID_PTX);  // a newer one
  EXPECT_EQ(load(sm + "a"), CUDA_SUCCESS);                                     // this architecture alone
  EXPECT_EQ(load("sm_80a"), CUDA_ERROR_INVALID_PTX);                           // another's alone
  EXPECT_EQ(load("sm_" + std::to_string(major * 10) + "f"), CUDA_SUCCESS);     // its family
  EXPECT_EQ(load("sm_" + std::to_string(major * 10 + 9) + "f"), CUDA_ERROR_INVALID_PTX);  // a later member
}

}  // namespace
