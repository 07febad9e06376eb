// Asks a libcuda.so.1 how cuGetProcAddress_v2 resolves every name at every
// CUDA version and flag, and prints only the points where the answer changes.
// Output rows: name  flags  version  result  status  symbol
#include <cuda.h>
#include <dlfcn.h>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

int main(int argc, char** argv) {
  if (argc < 2) { std::fprintf(stderr, "usage: probe NAMES\n"); return 2; }
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!lib) { std::fprintf(stderr, "%s\n", dlerror()); return 1; }
  auto init = (CUresult(*)(unsigned))dlsym(lib, "cuInit");
  auto get = (GetProc)dlsym(lib, "cuGetProcAddress_v2");
  std::printf("#cuInit\t%d\n", init(0));
  std::vector<int> versions = {0, 1, 999};
  for (int v = 1000; v <= 14000; v += 10) versions.push_back(v);
  versions.push_back(20000); versions.push_back(99999);
  setvbuf(stdout, nullptr, _IOLBF, 0);
  std::ifstream in(argv[1]);
  std::string name;
  const cuuint64_t flagset[] = {CU_GET_PROC_ADDRESS_DEFAULT, CU_GET_PROC_ADDRESS_LEGACY_STREAM,
                                CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM};
  while (std::getline(in, name)) {
    if (name.empty()) continue;
    for (cuuint64_t fl : flagset) {
      std::string last;
      for (int v : versions) {
        void* p = nullptr;
        CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)-1;
        CUresult r = get(name.c_str(), &p, v, fl, &st);
        std::string sym = "-";
        if (p) {
          Dl_info info{};
          if (dladdr(p, &info) && info.dli_sname) {
            sym = info.dli_sname;
            if (info.dli_saddr != p) sym += "+off";
          } else sym = "?";
        }
        std::string key = std::to_string(r) + "\t" + std::to_string((int)st) + "\t" + sym;
        if (key != last) {
          std::printf("%s\t%llu\t%d\t%s\n", name.c_str(), (unsigned long long)fl, v, key.c_str());
          last = key;
        }
      }
    }
  }
  // Edge cases of the call itself.
  void* p = nullptr; CUdriverProcAddressQueryResult st;

  std::printf("#null_pfn\t%d\n", get("cuInit", nullptr, 13000, 0, &st));
  std::printf("#null_status\t%d\n", get("cuInit", &p, 13000, 0, nullptr));
  std::printf("#bad_flags\t%d\t%d\n", get("cuInit", &p, 13000, 8, &st), (int)st);
  std::printf("#unknown\t%d\t%d\t%p\n", get("cuNoSuchThing", &p, 13000, 0, &st), (int)st, p);
  return 0;
}
