// cuInit, versions, error names, cuGetProcAddress.
#include "harness.h"

CONF_TEST(DriverVersionIs13000) {
  int v = 0;
  ASSERT_CU(cuDriverGetVersion(&v));
  EXPECT_TRUE(v == 13000);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDriverGetVersion(nullptr));
}

CONF_TEST(InitRefusesNonzeroFlags) { EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuInit(1)); }

CONF_TEST(ErrorNamesAndStringsAnswerKnownCodesAndRefuseUnknownOnes) {
  const char* s = nullptr;
  ASSERT_CU(cuGetErrorName(CUDA_ERROR_INVALID_VALUE, &s));
  EXPECT_TRUE(std::strcmp(s, "CUDA_ERROR_INVALID_VALUE") == 0);
  ASSERT_CU(cuGetErrorName(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, &s));
  EXPECT_TRUE(std::strcmp(s, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED") == 0);
  ASSERT_CU(cuGetErrorString(CUDA_ERROR_NOT_READY, &s));
  EXPECT_TRUE(s && *s);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGetErrorName(static_cast<CUresult>(12345), &s));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGetErrorString(static_cast<CUresult>(12345), &s));
}

static void* proc(const char* name, int version, cuuint64_t flags, CUdriverProcAddressQueryResult* st,
                  CUresult expect = CUDA_SUCCESS) {
  void* p = nullptr;
  EXPECT_CU(expect, cuGetProcAddress(name, &p, version, flags, st));
  return p;
}

CONF_TEST(ProcAddressResolvesEachVersionToItsOwnEntryPoint) {
  CUdriverProcAddressQueryResult st;
  void* v3 = proc("cuStreamGetCaptureInfo", 12030, CU_GET_PROC_ADDRESS_DEFAULT, &st);
  EXPECT_TRUE(st == CU_GET_PROC_ADDRESS_SUCCESS && v3 != nullptr);
  void* v2 = proc("cuStreamGetCaptureInfo", 11030, CU_GET_PROC_ADDRESS_DEFAULT, &st);
  EXPECT_TRUE(v2 != nullptr && v2 != v3);
  void* b2 = proc("cuMemcpy3DBatchAsync", 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st);
  void* b1 = proc("cuMemcpy3DBatchAsync", 12080, CU_GET_PROC_ADDRESS_DEFAULT, &st);
  EXPECT_TRUE(b1 && b2 && b1 != b2);
  void* bc2 = proc("cuStreamBeginCapture", 10010, CU_GET_PROC_ADDRESS_DEFAULT, &st);
  void* bc1 = proc("cuStreamBeginCapture", 10000, CU_GET_PROC_ADDRESS_DEFAULT, &st);
  EXPECT_TRUE(bc1 && bc2 && bc1 != bc2);
  // What we resolve must be what the loader links for the same symbol.
  void* q = proc("cuStreamQuery", 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st);
  EXPECT_TRUE(q == reinterpret_cast<void*>(&cuStreamQuery));
}

CONF_TEST(ProcAddressStreamFlagsPickLegacyOrPerThreadEntryPoints) {
  CUdriverProcAddressQueryResult st;
  void* legacy = proc("cuStreamQuery", 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st);
  void* ptds = proc("cuStreamQuery", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st);
  EXPECT_TRUE(legacy && ptds && legacy != ptds);
  void* m = proc("cuMemcpy", 6000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st);
  EXPECT_TRUE(m == nullptr && st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
}

CONF_TEST(ProcAddressRefusesSuffixedUnknownAndTooOldRequests) {
  CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
  void* p = proc("cuStreamGetCtx_v2", 13000, 0, &st);
  EXPECT_TRUE(p == nullptr && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  p = proc("cuStreamQuery_ptsz", 13000, 0, &st);
  EXPECT_TRUE(p == nullptr && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  p = proc("cuNoSuchFunction", 13000, 0, &st);
  EXPECT_TRUE(p == nullptr && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  p = proc("cuStreamGetCtx", 9010, 0, &st);
  EXPECT_TRUE(p == nullptr && st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  proc("cuInit", 13010, 0, &st, CUDA_ERROR_INVALID_VALUE);
  void* pp = nullptr;
  conf::info("proc_bad_flags", cuGetProcAddress("cuInit", &pp, 13000, 8, &st));
  conf::info("proc_v1_found", cuGetProcAddress_v2("cuInit", &pp, 13000, 0, nullptr));
}
