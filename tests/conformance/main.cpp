// Runs every conformance test against whichever libcuda.so.1 the loader
// finds, and ends with "N passed, N failed, N skipped".
#include <cstdlib>

#include "harness.h"

// The child processes of the IPC tests (ipc.cpp).
int ipc_child(const char* hex, const char* bytes);
int ipc_event_child(const char* hex, const char* pipe_fd);
int ipc_pool_child(const char* fd, const char* hex, const char* bytes);

// usage: cucpu_conformance [SUBSTRING] | --list | --exact NAME
int main(int argc, char** argv) {
  if (argc > 3 && std::strcmp(argv[1], "--ipc-child") == 0) return ipc_child(argv[2], argv[3]);
  if (argc > 3 && std::strcmp(argv[1], "--ipc-event-child") == 0) return ipc_event_child(argv[2], argv[3]);
  if (argc > 4 && std::strcmp(argv[1], "--ipc-pool-child") == 0) return ipc_pool_child(argv[2], argv[3], argv[4]);
  if (argc > 1 && std::strcmp(argv[1], "--list") == 0) {
    for (const auto& t : conf::registry()) std::printf("%s\n", t.name);
    return 0;
  }
  const bool exact = argc > 2 && std::strcmp(argv[1], "--exact") == 0;
  const char* filter = exact ? argv[2] : argc > 1 ? argv[1] : nullptr;
  if (cuInit(0) != CUDA_SUCCESS) {
    std::printf("cuInit failed\n");
    return 1;
  }
  std::printf("INFO driver %s\n", conf::on_cucpu() ? "cucpu" : "nvidia");
  int passed = 0, failed = 0, skipped = 0;
  for (const auto& t : conf::registry()) {
    if (filter && (exact ? std::strcmp(t.name, filter) != 0 : !std::strstr(t.name, filter))) continue;
    cuCtxSetCurrent(conf::primary());
    try {
      t.fn();
      std::printf("PASS %s\n", t.name);
      ++passed;
    } catch (const conf::Failure& f) {
      std::printf("FAIL %s: %s\n", t.name, f.what.c_str());
      ++failed;
    } catch (const conf::Skip& s) {
      std::printf("SKIP %s: %s\n", t.name, s.why.c_str());
      ++skipped;
    }
    std::fflush(stdout);
  }
  std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed == 0 ? 0 : 1;
}
