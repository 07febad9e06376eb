// cuModuleLoad and cuLibraryLoadFromFile on paths that are not loadable
// images: missing, a directory, an empty file, a file of garbage.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "harness.h"

namespace {
std::string temp_path(const char* name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/" + name;
}
void write_file(const std::string& path, const char* text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f) {
    std::fputs(text, f);
    std::fclose(f);
  }
}
}  // namespace

CONF_TEST(ModuleLoadFromBadFiles) {
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  CUmodule m;
  CUlibrary lib;
  const std::string empty = temp_path("cucpu_conf_empty.ptx"), junk = temp_path("cucpu_conf_junk.bin");
  write_file(empty, "");
  write_file(junk, "this is not a module\n");
  conf::info("module_load.missing", cuModuleLoad(&m, "/nonexistent/cucpu/none.ptx"));
  conf::info("module_load.directory", cuModuleLoad(&m, "/tmp"));
  conf::info("module_load.empty", cuModuleLoad(&m, empty.c_str()));
  conf::info("module_load.junk", cuModuleLoad(&m, junk.c_str()));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuModuleLoad(&m, nullptr));
  conf::info("library_load.missing",
             cuLibraryLoadFromFile(&lib, "/nonexistent/cucpu/none.ptx", nullptr, nullptr, 0, nullptr, nullptr, 0));
  conf::info("library_load.directory", cuLibraryLoadFromFile(&lib, "/tmp", nullptr, nullptr, 0, nullptr, nullptr, 0));
  conf::info("library_load.empty", cuLibraryLoadFromFile(&lib, empty.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  conf::info("library_load.junk", cuLibraryLoadFromFile(&lib, junk.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  std::remove(empty.c_str());
  std::remove(junk.c_str());
}

CONF_TEST(ModuleLoadRefusesEndlessFilesAndFatbinWrappers) {
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  CUmodule m = nullptr;
  // A file that never ends is no image: refused at once, not read until memory runs out.
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, cuModuleLoad(&m, "/dev/zero"));
  if (conf::on_cucpu()) {
    // The same reader (not run on the driver: it may read until memory runs out).
    CUlibrary lib = nullptr;
    EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, cuLibraryLoadFromFile(&lib, "/dev/zero", nullptr, nullptr, 0, nullptr, nullptr, 0));
    CUlinkState link = nullptr;
    ASSERT_CU(cuLinkCreate(0, nullptr, nullptr, &link));
    EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, cuLinkAddFile(link, CU_JIT_INPUT_PTX, "/dev/zero", 0, nullptr, nullptr));
    ASSERT_CU(cuLinkDestroy(link));
  }
  // A fatbin wrapper (what __cudaRegisterFatBinary takes) is not an image,
  // wherever its pointer leads.
  struct {
    uint32_t magic = 0x466243B1, version = 1;
    const void* data = reinterpret_cast<const void*>(uintptr_t{0x10});
    void* unused = nullptr;
  } wrapper;
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, cuModuleLoadData(&m, &wrapper));
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, cuModuleLoadDataEx(&m, &wrapper, 0, nullptr, nullptr));
  // The context still works.
  CUdeviceptr p = 0;
  ASSERT_CU(cuMemAlloc(&p, 16));
  ASSERT_CU(cuMemFree(p));
}
