// The flag arguments the trace prints by name: which argument of which entry
// point takes which flag set. Entry points not listed print numbers.
#include <cstdio>
#include <cstring>
#include <iterator>

#include "api/entry.h"

namespace cucpu::api {
namespace {

#define FLAG(x) {static_cast<unsigned long long>(x), #x}
const FlagName kStream[] = {FLAG(CU_STREAM_NON_BLOCKING)};
const FlagName kEvent[] = {FLAG(CU_EVENT_BLOCKING_SYNC), FLAG(CU_EVENT_DISABLE_TIMING), FLAG(CU_EVENT_INTERPROCESS)};
const FlagName kEventRecord[] = {FLAG(CU_EVENT_RECORD_EXTERNAL)};
const FlagName kEventWait[] = {FLAG(CU_EVENT_WAIT_EXTERNAL)};
const FlagName kHostAlloc[] = {FLAG(CU_MEMHOSTALLOC_PORTABLE), FLAG(CU_MEMHOSTALLOC_DEVICEMAP),
                               FLAG(CU_MEMHOSTALLOC_WRITECOMBINED)};
const FlagName kHostRegister[] = {FLAG(CU_MEMHOSTREGISTER_PORTABLE), FLAG(CU_MEMHOSTREGISTER_DEVICEMAP),
                                  FLAG(CU_MEMHOSTREGISTER_IOMEMORY), FLAG(CU_MEMHOSTREGISTER_READ_ONLY)};
const FlagName kAttach[] = {FLAG(CU_MEM_ATTACH_GLOBAL), FLAG(CU_MEM_ATTACH_HOST), FLAG(CU_MEM_ATTACH_SINGLE)};
const FlagName kContext[] = {FLAG(CU_CTX_SCHED_SPIN), FLAG(CU_CTX_SCHED_YIELD), FLAG(CU_CTX_SCHED_BLOCKING_SYNC),
                             FLAG(CU_CTX_MAP_HOST), FLAG(CU_CTX_LMEM_RESIZE_TO_MAX), FLAG(CU_CTX_COREDUMP_ENABLE),
                             FLAG(CU_CTX_USER_COREDUMP_ENABLE), FLAG(CU_CTX_SYNC_MEMOPS)};
const FlagName kInstantiate[] = {FLAG(CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH),
                                 FLAG(CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD),
                                 FLAG(CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH),
                                 FLAG(CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY)};
#undef FLAG

struct Entry {
  const char* name;
  unsigned index;
  const FlagName* names;
  size_t count;
};
#define E(fn, i, set) {fn, i, set, std::size(set)}
const Entry kEntries[] = {
    E("cuStreamCreate", 1, kStream),           E("cuStreamCreateWithPriority", 1, kStream),
    E("cuEventCreate", 1, kEvent),             E("cuEventRecordWithFlags", 2, kEventRecord),
    E("cuEventRecordWithFlags_ptsz", 2, kEventRecord), E("cuStreamWaitEvent", 2, kEventWait),
    E("cuStreamWaitEvent_ptsz", 2, kEventWait), E("cuMemHostAlloc", 2, kHostAlloc),
    E("cuMemHostRegister_v2", 2, kHostRegister), E("cuMemAllocManaged", 2, kAttach),
    E("cuStreamAttachMemAsync", 3, kAttach),   E("cuStreamAttachMemAsync_ptsz", 3, kAttach),
    E("cuDevicePrimaryCtxSetFlags_v2", 1, kContext), E("cuCtxSetFlags", 0, kContext),
    E("cuGraphInstantiateWithFlags", 2, kInstantiate),
};
#undef E

}  // namespace

const FlagName* trace_flag_names(const char* name, unsigned index, size_t* count) {
  for (const Entry& e : kEntries) {
    if (e.index == index && std::strcmp(e.name, name) == 0) {
      *count = e.count;
      return e.names;
    }
  }
  return nullptr;
}

void trace_flags(char*& p, char* end, unsigned long long v, const FlagName* names, size_t count) {
  auto put = [&](const char* fmt, auto x) {
    const int n = std::snprintf(p, static_cast<size_t>(end - p), fmt, x);
    if (n > 0) p += n < end - p ? n : end - p - 1;
  };
  if (v == 0) {
    put("%s", "0");
    return;
  }
  bool any = false;
  for (size_t i = 0; i < count; ++i) {
    if (names[i].bit == 0 || (v & names[i].bit) != names[i].bit) continue;
    put(any ? "|%s" : "%s", names[i].name);
    v &= ~names[i].bit;
    any = true;
  }
  if (v) put(any ? "|%#llx" : "%#llx", v);
}

}  // namespace cucpu::api
