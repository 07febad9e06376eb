// Shared pieces of the kernel tests (kernels_*.cpp): loading the checked-in
// images of tests/kernels, device buffers, launches, and element-wise
// comparison that reports every mismatching op at once.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

#ifndef CONF_KERNELS_DIR
#define CONF_KERNELS_DIR "tests/kernels"
#endif

namespace kt {

// The tests/kernels directory: $CONF_KERNELS_DIR if set, else the source
// tree's, fixed at configure time.
inline std::string kernels_dir() {
  const char* e = std::getenv("CONF_KERNELS_DIR");
  return e && *e ? e : CONF_KERNELS_DIR;
}

inline bool image_exists(const std::string& rel) { return std::ifstream(kernels_dir() + "/" + rel).good(); }

// The file's bytes; PTX gets the terminating NUL cuModuleLoadData needs.
inline std::vector<char> read_image(const std::string& rel) {
  std::ifstream f(kernels_dir() + "/" + rel, std::ios::binary);
  if (!f) throw conf::Failure{"cannot read " + kernels_dir() + "/" + rel + " (set CONF_KERNELS_DIR)"};
  std::vector<char> v((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  v.push_back('\0');
  return v;
}

inline std::string cu_fail(const std::string& call, CUresult r) { return call + " returned " + conf::name_of(r); }

struct Module {
  CUmodule mod = nullptr;
  std::string image;
  explicit Module(const std::string& rel) : image(rel) {
    std::vector<char> bytes = read_image(rel);
    CUresult r = cuModuleLoadData(&mod, bytes.data());
    if (r != CUDA_SUCCESS) throw conf::Failure{cu_fail("cuModuleLoadData(" + rel + ")", r)};
  }
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module() {
    if (mod) cuModuleUnload(mod);
  }
  CUfunction fn(const char* name) const {
    CUfunction f = nullptr;
    CUresult r = cuModuleGetFunction(&f, mod, name);
    if (r != CUDA_SUCCESS) throw conf::Failure{cu_fail(std::string("cuModuleGetFunction(") + name + ")", r)};
    return f;
  }
  CUdeviceptr global(const char* name, size_t* bytes = nullptr) const {
    CUdeviceptr p = 0;
    size_t n = 0;
    CUresult r = cuModuleGetGlobal(&p, &n, mod, name);
    if (r != CUDA_SUCCESS) throw conf::Failure{cu_fail(std::string("cuModuleGetGlobal(") + name + ")", r)};
    if (bytes) *bytes = n;
    return p;
  }
};

// The PTX images of one source: sm_90 always, sm_75 where regen.sh could
// build one.
inline std::vector<std::string> ptx_variants(const std::string& name) {
  std::vector<std::string> v{"ptx/" + name + ".sm90.ptx"};
  if (image_exists("ptx/" + name + ".sm75.ptx")) v.push_back("ptx/" + name + ".sm75.ptx");
  return v;
}

// Runs body(module) once per PTX variant; a failure names the variant.
template <class F>
void for_each_variant(const std::string& name, F body) {
  for (const auto& img : ptx_variants(name)) {
    try {
      Module m(img);
      body(m);
    } catch (conf::Failure& f) {
      f.what = img + ": " + f.what;
      throw;
    }
  }
}

template <class T>
struct Buf {
  CUdeviceptr p = 0;
  size_t n = 0;
  explicit Buf(size_t count) : n(count) {
    CUresult r = cuMemAlloc(&p, n * sizeof(T) ? n * sizeof(T) : 1);
    if (r != CUDA_SUCCESS) throw conf::Failure{cu_fail("cuMemAlloc", r)};
    zero();
  }
  explicit Buf(const std::vector<T>& h) : Buf(h.size()) { put(h); }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  ~Buf() {
    if (p) cuMemFree(p);
  }
  void zero() {
    CUresult r = cuMemsetD8(p, 0, n * sizeof(T));
    if (r != CUDA_SUCCESS) throw conf::Failure{cu_fail("cuMemsetD8", r)};
  }
  void put(const std::vector<T>& h) {
    CUresult r = cuMemcpyHtoD(p, h.data(), h.size() * sizeof(T));
    if (r != CUDA_SUCCESS) throw conf::Failure{cu_fail("cuMemcpyHtoD", r)};
  }
  std::vector<T> get() const {
    std::vector<T> h(n);
    CUresult r = cuMemcpyDtoH(h.data(), p, n * sizeof(T));
    if (r != CUDA_SUCCESS) throw conf::Failure{cu_fail("cuMemcpyDtoH", r)};
    return h;
  }
};

struct Dim {
  unsigned x = 1, y = 1, z = 1;
  Dim(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
  Dim(int a, int b = 1, int c = 1) : x((unsigned)a), y((unsigned)b), z((unsigned)c) {}
};

// cuLaunchKernel with kernelParams pointing at copies of args, which must
// have the kernel's parameter types exactly.
template <class... A>
CUresult launch(CUfunction f, Dim grid, Dim block, unsigned shmem, CUstream s, A... args) {
  void* params[] = {static_cast<void*>(&args)..., nullptr};
  return cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, shmem, s, params, nullptr);
}

// launch, then synchronize the context; both must succeed.
template <class... A>
void run(CUfunction f, Dim grid, Dim block, unsigned shmem, A... args) {
  CUresult r = launch(f, grid, block, shmem, nullptr, args...);
  if (r != CUDA_SUCCESS) throw conf::Failure{cu_fail("cuLaunchKernel", r)};
  r = cuCtxSynchronize();
  if (r != CUDA_SUCCESS) throw conf::Failure{cu_fail("cuCtxSynchronize after a launch", r)};
}

// A deterministic generator (splitmix64).
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed) {}
  uint64_t u64() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint32_t u32() { return (uint32_t)(u64() >> 32); }
  int range(int lo, int hi) { return lo + (int)(u32() % (uint32_t)(hi - lo + 1)); }
};

template <class T>
uint64_t bits_of(T v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}

template <class T>
T from_bits(uint64_t b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}

// Collects mismatches per op and throws one Failure naming, for each
// failing op, how many elements differ and the first of them.
struct Checker {
  std::string what;
  std::function<std::string(size_t)> describe;  // the inputs of element i
  std::ostringstream msg;
  int failing_ops = 0;
  explicit Checker(std::string w, std::function<std::string(size_t)> d = nullptr)
      : what(std::move(w)), describe(std::move(d)) {}

  // Compares got[k * n + i] with want[k * n + i] for every op k and element i.
  template <class T, class Eq>
  void ops(const std::vector<T>& got, const std::vector<T>& want, size_t n, const std::vector<std::string>& names,
           Eq eq) {
    size_t nops = n ? want.size() / n : 0;
    for (size_t k = 0; k < nops; ++k) {
      size_t bad = 0, first = 0;
      for (size_t i = 0; i < n; ++i)
        if (!eq(got[k * n + i], want[k * n + i], k)) {
          if (!bad) first = i;
          ++bad;
        }
      if (!bad) continue;
      if (++failing_ops > 12) continue;
      msg << " [op " << k << (k < names.size() ? " " + names[k] : std::string()) << ": " << bad << "/" << n
          << " differ; first i=" << first << " got 0x" << std::hex << bits_of(got[k * n + first]) << " want 0x"
          << bits_of(want[k * n + first]) << std::dec;
      if (describe) msg << " inputs " << describe(first);
      msg << "]";
    }
  }
  template <class T>
  void ops(const std::vector<T>& got, const std::vector<T>& want, size_t n, const std::vector<std::string>& names) {
    ops(got, want, n, names, [](const T& a, const T& b, size_t) { return bits_of(a) == bits_of(b); });
  }
  template <class T>
  void all(const std::vector<T>& got, const std::vector<T>& want, const std::string& name = "") {
    ops(got, want, want.size(), {name});
  }
  void done() {
    if (failing_ops) throw conf::Failure{what + ": " + std::to_string(failing_ops) + " ops differ:" + msg.str()};
  }
};

inline std::string hex(uint64_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

// A device fault is sticky for the whole process on NVIDIA's driver (and
// on cucpu): tests that fault run in a child process, this program again.
// True in a child process started by run_in_child.
inline bool in_fault_child() {
  const char* e = std::getenv("CONF_FAULT_CHILD");
  return e && std::strcmp(e, "1") == 0;
}

// Runs test `name` of this program in a child process (60 s at most),
// forwards its INFO lines, and fails unless it passed.
inline void run_in_child(const std::string& name) {
  char exe[4096];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) throw conf::Failure{"cannot find this program (/proc/self/exe)"};
  exe[len] = '\0';
  std::string cmd = "CONF_FAULT_CHILD=1 timeout 60 '" + std::string(exe) + "' --exact " + name + " 2>&1";
  std::fflush(stdout);
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw conf::Failure{"popen failed"};
  std::string verdict;
  char line[4096];
  while (std::fgets(line, sizeof line, p)) {
    std::string l(line);
    if (!l.empty() && l.back() == '\n') l.pop_back();
    if (l.rfind("INFO ", 0) == 0 && l.rfind("INFO driver", 0) != 0) {
      std::printf("%s\n", l.c_str());
      std::fflush(stdout);
    } else if (l.rfind("PASS " + name, 0) == 0 || l.rfind("FAIL " + name, 0) == 0 || l.rfind("SKIP " + name, 0) == 0) {
      verdict = l;
    }
  }
  int status = pclose(p);
  if (verdict.rfind("PASS", 0) != 0)
    throw conf::Failure{"child " + name + ": " +
                        (verdict.empty() ? "exited with status " + std::to_string(status) : verdict)};
}


}  // namespace kt
