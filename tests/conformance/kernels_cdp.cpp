// Kernels of tests/kernels/cdp.cu (dynamic parallelism, built with
// -rdc=true): child launches into every kind of device stream, nesting,
// tail launches, device-side copies and sets, and the device runtime's
// errors. NVIDIA's driver needs the PTX linked with libcudadevrt.a (the
// device runtime's code); cucpu provides the device runtime itself and
// loads the PTX as it is.
#include <cstdio>
#include <string>
#include <vector>

#include "kernels_util.h"

namespace {

// libcudadevrt.a of the toolkit, where one is installed.
std::string devrt_path() {
  std::vector<std::string> dirs;
  if (const char* h = std::getenv("CUDA_HOME")) dirs.push_back(std::string(h) + "/lib64");
  dirs.push_back("/usr/local/cuda/lib64");
  dirs.push_back("/usr/local/cuda/targets/x86_64-linux/lib");
  for (const std::string& d : dirs)
    if (std::ifstream(d + "/libcudadevrt.a").good()) return d + "/libcudadevrt.a";
  return {};
}

// cuLinkComplete's image, loaded as a module; the link state is destroyed.
CUmodule load_linked(CUlinkState link) {
  void* cubin = nullptr;
  size_t size = 0;
  CUmodule mod = nullptr;
  CUresult r = cuLinkComplete(link, &cubin, &size);
  if (r == CUDA_SUCCESS) r = cuModuleLoadData(&mod, cubin);
  cuLinkDestroy(link);
  if (r != CUDA_SUCCESS) throw conf::Failure{kt::cu_fail("cuLinkComplete and cuModuleLoadData", r)};
  return mod;
}

// The module of one PTX variant: loaded as it is, else linked with the device runtime.
struct CdpModule {
  CUmodule mod = nullptr;
  explicit CdpModule(const std::string& rel) {
    std::vector<char> ptx = kt::read_image(rel);
    if (cuModuleLoadData(&mod, ptx.data()) == CUDA_SUCCESS) return;
    const std::string devrt = devrt_path();
    if (devrt.empty()) throw conf::Skip{"the PTX needs libcudadevrt.a, and no toolkit is installed"};
    CUlinkState link;
    ASSERT_CU(cuLinkCreate(0, nullptr, nullptr, &link));
    CUresult r = cuLinkAddData(link, CU_JIT_INPUT_PTX, ptx.data(), ptx.size(), rel.c_str(), 0, nullptr, nullptr);
    if (r == CUDA_SUCCESS) r = cuLinkAddFile(link, CU_JIT_INPUT_LIBRARY, devrt.c_str(), 0, nullptr, nullptr);
    if (r != CUDA_SUCCESS) {
      cuLinkDestroy(link);
      throw conf::Failure{kt::cu_fail("linking " + rel + " with libcudadevrt.a", r)};
    }
    mod = load_linked(link);
  }
  CdpModule(const CdpModule&) = delete;
  CdpModule& operator=(const CdpModule&) = delete;
  ~CdpModule() {
    if (mod) cuModuleUnload(mod);
  }
  CUfunction fn(const char* name) const {
    CUfunction f = nullptr;
    ASSERT_CU(cuModuleGetFunction(&f, mod, name));
    return f;
  }
};

template <class F>
void for_each_cdp_variant(F body) {
  for (const auto& img : kt::ptx_variants("cdp")) {
    try {
      CdpModule m(img);
      body(m);
    } catch (conf::Failure& f) {
      f.what = img + ": " + f.what;
      throw;
    }
  }
}

}  // namespace

CONF_TEST(KernelCdpChildrenRunInEveryDeviceStream) {
  for_each_cdp_variant([&](CdpModule& m) {
    const int blocks = 16;
    kt::Buf<int32_t> out(5 * 1024), errors(1);
    kt::run(m.fn("cdp_parent"), {blocks}, {32}, 0, out.p, errors.p);
    const std::vector<int32_t> got = out.get();
    std::vector<int32_t> want(5 * 1024, 0);
    for (int row = 0; row < 4; ++row)
      for (int i = 0; i < blocks * 64; ++i) want[row * 1024 + i] = row + 1;
    for (int i = 0; i < blocks * 64; ++i) want[4096 + i] = 3;  // three steps, in order
    kt::Checker ck("children");
    ck.all(got, want);
    ck.done();
    EXPECT_TRUE(errors.get()[0] == 0);
  });
}

CONF_TEST(KernelCdpNestsAndTailLaunchesSeeTheirParentsWork) {
  for_each_cdp_variant([&](CdpModule& m) {
    kt::Buf<int32_t> levels(8);
    kt::run(m.fn("cdp_nest"), {1}, {1}, 0, levels.p, 0, 6);
    const std::vector<int32_t> got = levels.get();
    for (int d = 0; d < 8; ++d) EXPECT_TRUE(got[d] == (d < 6 ? d + 100 : 0));
    kt::Buf<int32_t> data(128), sum(1);
    kt::run(m.fn("cdp_tail_after"), {1}, {1}, 0, data.p, sum.p);
    EXPECT_TRUE(sum.get()[0] == 5 * 128);
  });
}

CONF_TEST(KernelCdpLargeChildGridRunsWhole) {
  for_each_cdp_variant([&](CdpModule& m) {
    kt::Buf<int32_t> out(256 * 256);
    kt::run(m.fn("cdp_big"), {1}, {1}, 0, out.p);
    const std::vector<int32_t> got = out.get();
    kt::Checker ck("big");
    ck.all(got, std::vector<int32_t>(got.size(), 11));
    ck.done();
  });
}

// Driver 580 (H100) answers cudaSuccess to the device-side memset and
// leaves the memory as it was (a probe of memset sizes 256 and 16: the
// same); cucpu sets the bytes (docs/conformance.md). The set's effect is
// checked on cucpu alone.
CONF_TEST(KernelCdpDeviceCopiesAndSetsFollowTheLaunchBefore) {
  for_each_cdp_variant([&](CdpModule& m) {
    kt::Buf<int32_t> a(64), b(64), c(64);
    kt::run(m.fn("cdp_copies"), {1}, {1}, 0, a.p, b.p, c.p);
    const std::vector<int32_t> gb = b.get(), gc = c.get();
    conf::info_value("cdp_device_memset_word", gc[0]);
    for (int i = 0; i < 64; ++i) {
      EXPECT_TRUE(gb[i] == 7);
      if (conf::on_cucpu()) EXPECT_TRUE(gc[i] == 0x01010101);
    }
  });
}

CONF_TEST(KernelCdpRuntimeReportsErrorsAndTheDevice) {
  for_each_cdp_variant([&](CdpModule& m) {
    kt::Buf<int32_t> out(4);
    kt::run(m.fn("cdp_errors"), {1}, {1}, 0, out.p);
    const std::vector<int32_t> got = out.get();
    conf::info_value("cdp_oversized_block_error", got[0]);
    EXPECT_TRUE(got[0] == 9);  // cudaErrorInvalidConfiguration
    EXPECT_TRUE(got[1] == 0);  // read once, then cleared
    EXPECT_TRUE(got[2] == 0);
    EXPECT_TRUE(got[3] == 1024);
  });
}

// A 3D copy of nothing answers success; a 3D copy of a box lands where it
// should. The 3D set is checked on cucpu alone, as the 1D one above.
CONF_TEST(KernelCdpDevice3DCopiesAndSets) {
  for_each_cdp_variant([&](CdpModule& m) {
    std::vector<uint8_t> src(8 * 4 * 3), dst(8 * 4 * 3, 0x11);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i + 1);
    kt::Buf<uint8_t> s(src), d(dst);
    kt::Buf<int32_t> out(4);
    kt::run(m.fn("cdp_copies_3d"), {1}, {1}, 0, out.p, s.p, d.p);
    const std::vector<int32_t> got = out.get();
    for (int i = 0; i < 4; ++i) EXPECT_TRUE(got[i] == 0);
    std::vector<uint8_t> want = dst;
    for (int z = 0; z < 2; ++z)
      for (int y = 0; y < 2; ++y)
        for (int x = 0; x < 3; ++x) want[((z + 1) * 4 + y) * 8 + 2 + x] = src[((z + 1) * 4 + y + 1) * 8 + 1 + x];
    const std::vector<uint8_t> after = d.get();
    conf::info_value("cdp_device_memset3d_byte", after[0]);
    for (size_t i = 32; i < want.size(); ++i) EXPECT_TRUE(after[i] == want[i]);
    if (conf::on_cucpu())
      for (size_t i = 0; i < 32; ++i) EXPECT_TRUE(after[i] == 0x22);
  });
}

// What cudaFuncGetAttributes answers from device code (INFO: cucpu's device
// runtime does not provide it and says cudaErrorNotSupported on stderr).
CONF_TEST(KernelCdpUnsupportedCallsAnswerAnError) {
  for_each_cdp_variant([&](CdpModule& m) {
    kt::Buf<int32_t> out(2);
    kt::run(m.fn("cdp_unsupported"), {1}, {1}, 0, out.p);
    const std::vector<int32_t> got = out.get();
    conf::info_value("cdp_func_get_attributes", got[0]);
    if (conf::on_cucpu()) EXPECT_TRUE(got[0] == 801 && got[1] == 801);
  });
}

// The driver's way: the PTX linked with libcudadevrt.a (CU_JIT_INPUT_LIBRARY).
CONF_TEST(KernelCdpLinkedWithTheDeviceRuntimeLibrary) {
  const std::string devrt = devrt_path();
  if (devrt.empty()) throw conf::Skip{"no toolkit: libcudadevrt.a not found"};
  std::vector<char> ptx = kt::read_image("ptx/cdp.sm90.ptx");
  CUlinkState link;
  ASSERT_CU(cuLinkCreate(0, nullptr, nullptr, &link));
  ASSERT_CU(cuLinkAddData(link, CU_JIT_INPUT_PTX, ptx.data(), ptx.size(), "cdp", 0, nullptr, nullptr));
  ASSERT_CU(cuLinkAddFile(link, CU_JIT_INPUT_LIBRARY, devrt.c_str(), 0, nullptr, nullptr));
  CUmodule mod = load_linked(link);
  CUfunction f;
  ASSERT_CU(cuModuleGetFunction(&f, mod, "cdp_nest"));
  kt::Buf<int32_t> levels(4);
  kt::run(f, {1}, {1}, 0, levels.p, 0, 3);
  const std::vector<int32_t> got = levels.get();
  EXPECT_TRUE(got[0] == 100 && got[1] == 101 && got[2] == 102 && got[3] == 0);
  ASSERT_CU(cuModuleUnload(mod));
}

// An archive (CU_JIT_INPUT_LIBRARY) is read member by member, each member's
// fatbins adding their PTX; a file that is no archive is INVALID_IMAGE.
CONF_TEST(KernelCdpArchiveMembersAddTheirDeviceCode) {
  SKIP_ON_NVIDIA("the member is a bare fatbin, not a host object nvlink reads");
  std::vector<char> fatbin = kt::read_image("fatbin/cdp.sm90.fatbin");
  fatbin.pop_back();  // read_image's NUL
  std::string ar = "!<arch>\n";
  char header[61];
  std::snprintf(header, sizeof header, "%-16s%-12s%-6s%-6s%-8s%-10zu`\n", "cdp.o/", "0", "0", "0", "644", fatbin.size());
  ar.append(header, 60);
  ar.append(fatbin.begin(), fatbin.end());
  if (fatbin.size() & 1) ar.push_back('\n');
  CUlinkState link;
  ASSERT_CU(cuLinkCreate(0, nullptr, nullptr, &link));
  char junk[] = "!<arch>\nnot a member header";
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, cuLinkAddData(link, CU_JIT_INPUT_LIBRARY, junk, sizeof junk, "junk", 0, nullptr, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, cuLinkAddData(link, CU_JIT_INPUT_LIBRARY, fatbin.data(), fatbin.size(), "x", 0, nullptr, nullptr));
  ASSERT_CU(cuLinkAddData(link, CU_JIT_INPUT_LIBRARY, ar.data(), ar.size(), "libcdp.a", 0, nullptr, nullptr));
  CUmodule mod = load_linked(link);
  CUfunction f;
  ASSERT_CU(cuModuleGetFunction(&f, mod, "cdp_tail_after"));
  kt::Buf<int32_t> data(128), sum(1);
  kt::run(f, {1}, {1}, 0, data.p, sum.p);
  EXPECT_TRUE(sum.get()[0] == 5 * 128);
  ASSERT_CU(cuModuleUnload(mod));
}
