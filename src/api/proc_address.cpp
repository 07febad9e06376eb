// cuGetProcAddress and cuGetProcAddress_v2: the driver's symbol lookup by
// base name, CUDA version and stream flavour, answered from the one table
// (entry_points.inc). The rules, as observed on NVIDIA's driver 580:
//  - the query name must be a base name; suffixed names (_v2, _ptsz, ...)
//    are "symbol not found";
//  - a version above the driver's own (13000) is CUDA_ERROR_INVALID_VALUE;
//  - otherwise the variant with the greatest "since" version <= the
//    requested one is returned; when every variant is newer, the status is
//    VERSION_NOT_SUFFICIENT; both cases return CUDA_SUCCESS.
#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "api/entry.h"
#include "api/proc_table.h"

namespace cucpu {

namespace {

struct ProcEntry {
  std::string_view base;
  void* fn;
  int since[3];  // default, legacy stream, per-thread default stream
};

const std::vector<ProcEntry>& table() {
  static const std::vector<ProcEntry> t = [] {
    std::vector<ProcEntry> v;
    v.reserve(kProcEntryCount);
    for (unsigned i = 0; i < kProcEntryCount; ++i) {
      const RawProcEntry& e = kProcEntries[i];
      v.push_back({e.base, e.fn, {e.since[0], e.since[1], e.since[2]}});
    }
    std::stable_sort(v.begin(), v.end(), [](const ProcEntry& a, const ProcEntry& b) { return a.base < b.base; });
    return v;
  }();
  return t;
}

constexpr int kDriverVersion = 13000;

CUresult lookup(const char* symbol, void** pfn, int version, cuuint64_t flags,
                CUdriverProcAddressQueryResult* status) {
  if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
  const cuuint64_t known = CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  if ((flags & ~known) != 0 || flags == known) return CUDA_ERROR_INVALID_VALUE;
  if (version > kDriverVersion) return CUDA_ERROR_INVALID_VALUE;
  int column = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ? 2
               : (flags & CU_GET_PROC_ADDRESS_LEGACY_STREAM)         ? 1
                                                                     : 0;
  *pfn = nullptr;
  const auto& t = table();
  std::string_view name(symbol);
  auto [lo, hi] = std::equal_range(t.begin(), t.end(), ProcEntry{name, nullptr, {}},
                                   [](const ProcEntry& a, const ProcEntry& b) { return a.base < b.base; });
  const ProcEntry* best = nullptr;
  bool exists = false;
  for (auto it = lo; it != hi; ++it) {
    int since = it->since[column];
    if (since == 0) continue;
    exists = true;
    if (since <= version && (!best || since > best->since[column])) best = &*it;
  }
  CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
  if (best) *pfn = best->fn;
  else st = exists ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (status) *status = st;
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace cucpu

using namespace cucpu;

static CUresult impl_cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) { return lookup(symbol, pfn, cudaVersion, flags, nullptr); }

#include "api/entries/proc_address.inc"
