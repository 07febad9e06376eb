// cuGetExportTable: the driver's private tables that cudart 13.0 (static and
// shared) asks for before its first runtime call. Which tables, which slots
// and what each must answer were learnt by tracing cudart against NVIDIA's
// driver 580 (tools/darktrace); docs/conformance.md records the trace.
//
// Layout: an array of pointers; slot 0 holds the table's size in bytes,
// except in the context-local-storage table, whose slot 0 is a function.
// A slot cudart was never seen to call answers CUDA_ERROR_NOT_SUPPORTED and
// names itself once in the log.
#include <pthread.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "api/common.h"
#include "api/context.h"
#include "core/integrity_hash.h"

using namespace cucpu;

namespace {

using Uuid = unsigned char[16];
constexpr Uuid kCudartInterface = {0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a,
                                   0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9};
constexpr Uuid kToolsCallbackHooks = {0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74,
                                      0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66};
constexpr Uuid kToolsTls = {0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47,
                            0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc};
constexpr Uuid kContextLocalStorage = {0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11,
                                       0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93};
constexpr Uuid kContextChecks = {0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43,
                                 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e};
constexpr Uuid kIntegrityCheck = {0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b,
                                  0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2};

constexpr Uuid kToolsObjectIds = {0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48,
                                  0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2};

constexpr Uuid kToolsModuleQueries = {0x6e, 0x16, 0x3f, 0xbe, 0xb9, 0x58, 0x44, 0x4d,
                                     0x83, 0x5c, 0xe1, 0x82, 0xaf, 0xf1, 0x99, 0x1e};

enum Table { kCudart, kHooks, kTls, kStorage, kChecks, kIntegrity, kObjectIds, kModuleQueries, kTableCount };
constexpr const char* kTableNames[kTableCount] = {"cudart_interface", "tools_callback_hooks", "tools_tls",
                                                  "context_local_storage", "context_checks", "integrity_check",
                                                  "tools_object_ids", "tools_module_queries"};

// A slot never seen called: refuses, and says so once.
template <int T, int S>
CUresult unknown_slot() {
  static std::atomic<bool> said{false};
  if (!said.exchange(true, std::memory_order_relaxed))
    log_line("export table %s, slot %d is not implemented: returning CUDA_ERROR_NOT_SUPPORTED", kTableNames[T], S);
  return CUDA_ERROR_NOT_SUPPORTED;
}
// A tool-notification slot: no profiler or debugger is ever attached to
// cucpu, so there is no one to notify, and the call succeeds.
template <int T, int S>
CUresult quiet_slot() {
  return CUDA_SUCCESS;
}

const void* size_slot(size_t slots) { return reinterpret_cast<const void*>(slots * sizeof(void*)); }
template <class F>
const void* fn(F* f) {
  return reinterpret_cast<const void*>(f);
}

// --- CUDART_INTERFACE -------------------------------------------------------

CUresult module_from_wrapper(CUmodule* mod, const void* wrapper) {
  return api::call("cudart_interface.module_from_wrapper", api::kDefault, [&] {
    if (!mod || !wrapper) return CUDA_ERROR_INVALID_VALUE;
    return cuModuleLoadFatBinary(mod, wrapper);  // cuModuleLoadData refuses wrappers
  }, mod, wrapper);
}
CUresult module_from_wrapper_ex(CUmodule* mod, const void* wrapper, void*, void*, unsigned) {
  return module_from_wrapper(mod, wrapper);
}
CUresult module_from_fatbin(const void* fatbin, CUmodule* mod, void*, void*, unsigned) {
  return api::call("cudart_interface.module_from_fatbin", api::kDefault, [&] {
    if (!mod || !fatbin) return CUDA_ERROR_INVALID_VALUE;
    return cuModuleLoadData(mod, fatbin);
  }, fatbin, mod);
}
CUresult primary_context(CUcontext* pctx, CUdevice dev) {
  return api::call("cudart_interface.primary_context", api::kDefault,
                   [&] { return api::primary_context_handle(dev, pctx); }, pctx, dev);
}
// Slot 7 takes one word and does nothing observable (ZLUDA's finding; cudart
// 13.0 was not seen to call it).
CUresult cudart_no_op(uintptr_t) { return CUDA_SUCCESS; }
CUresult load_compilers() { return CUDA_SUCCESS; }

const void* const cudart_interface[13] = {
    size_slot(13),           fn(module_from_wrapper),      fn(primary_context),
    fn(unknown_slot<kCudart, 3>), fn(unknown_slot<kCudart, 4>), fn(unknown_slot<kCudart, 5>),
    fn(module_from_wrapper_ex), fn(cudart_no_op),            fn(module_from_fatbin),
    fn(unknown_slot<kCudart, 9>), nullptr,                     fn(unknown_slot<kCudart, 11>),
    fn(load_compilers)};

// --- TOOLS_RUNTIME_CALLBACK_HOOKS: scratch buffers tools would read --------

void* hooks_buffer_a(void** ptr, size_t* size) {
  static void* buffer[1024];
  if (ptr) *ptr = buffer;
  if (size) *size = 1024;
  return buffer;
}
void* hooks_buffer_b(void** ptr, size_t* size) {
  static unsigned char buffer[14];
  if (ptr) *ptr = buffer;
  if (size) *size = 14;
  return buffer;
}
const void* const tools_callback_hooks[7] = {
    size_slot(7),      fn(quiet_slot<kHooks, 1>), fn(hooks_buffer_a), fn(quiet_slot<kHooks, 3>),
    fn(quiet_slot<kHooks, 4>), fn(quiet_slot<kHooks, 5>), fn(hooks_buffer_b)};

// Slot 2: the calling thread's current context (null when none). cuBLAS,
// cuBLASLt and cuFFT read it and hand it to TOOLS_OBJECT_IDS below.
CUresult tls_current_context(CUcontext* out) {
  return api::call("tools_tls.current_context", api::kInHostFn, [&] {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    *out = reinterpret_cast<CUcontext>(current_context());
    return CUDA_SUCCESS;
  }, out);
}
const void* const tools_tls[3] = {size_slot(3), fn(quiet_slot<kTls, 1>), fn(tls_current_context)};

// --- TOOLS_OBJECT_IDS: identities of contexts and streams -------------------
// cuBLAS, cuBLASLt and cuFFT key their per-context and per-stream caches
// (handles, workspaces) on what these slots answer, with the context
// TOOLS_TLS slot 2 gave. 64 slots, as on driver 580; what each slot means
// was read from how the libraries use its answer and confirmed by a trace
// against the driver (docs/conformance.md). CUPTI asks for it too.

// The context's unique id (as cuCtxGetId; null: the current context).
CUresult object_context_id(CUcontext ctx, unsigned long long* id) {
  return api::call("tools_object_ids.context_id", api::kInHostFn, [&] {
    if (!id) return CUDA_ERROR_INVALID_VALUE;
    Context* c;
    if (CUresult r = ctx ? api::ctx_handle(ctx, &c) : api::current_ctx_handle(&c)) return r;
    *id = c->id;
    return CUDA_SUCCESS;
  }, ctx, id);
}
// The stream a handle names: a created stream as it is; NULL (the legacy
// default stream, or the per-thread one when `per_thread`), CU_STREAM_LEGACY
// and CU_STREAM_PER_THREAD as the special handle of that default stream.
CUresult object_stream(CUcontext, CUstream s, CUstream* out, int per_thread) {
  return api::call("tools_object_ids.stream", api::kInHostFn, [&] {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    Stream* st;
    if (CUresult r = api::stream_handle(s, per_thread ? api::NullStream::kPerThread : api::NullStream::kLegacy, &st))
      return r;
    *out = s ? s : per_thread ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
    return CUDA_SUCCESS;
  }, s, out, per_thread);
}
// The unique id of the stream a handle names (as cuStreamGetId).
CUresult object_stream_id(CUcontext, CUstream s, unsigned long long* id) {
  return api::call("tools_object_ids.stream_id", api::kInHostFn, [&] {
    if (!id) return CUDA_ERROR_INVALID_VALUE;
    Stream* st;
    if (CUresult r = api::stream_handle(s, api::NullStream::kLegacy, &st)) return r;
    *id = st->id;
    return CUDA_SUCCESS;
  }, s, id);
}

template <size_t... I>
constexpr auto object_ids_table(std::index_sequence<I...>) {
  return std::array<const void*, 64>{{I == 0    ? size_slot(64)
                                      : I == 4  ? fn(object_context_id)
                                      : I == 39 ? fn(object_stream_id)
                                      : I == 51 ? fn(object_stream)
                                                : fn(unknown_slot<kObjectIds, int(I)>)...}};
}
const std::array<const void*, 64> tools_object_ids = object_ids_table(std::make_index_sequence<64>{});

// --- TOOLS_MODULE_QUERIES (6e163fbe…) ------------------------------------------
// cuFFT loads each of its kernels as a module of one function and asks for
// that function without its name: slot 7 calls `visit(user, f)` for every
// function of the module and answers how many there were (cuFFT wants 1).
// 64 slots, as on driver 580 (traced: docs/conformance.md).
int module_for_each_function(CUcontext, CUmodule mod, void (*visit)(void*, CUfunction), void* user) {
  unsigned count = 0;
  const CUresult r = api::call("tools_module_queries.for_each_function", api::kInHostFn, [&] {
    if (!visit) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult e = cuModuleGetFunctionCount(&count, mod)) return e;
    std::vector<CUfunction> fns(count);
    if (CUresult e = cuModuleEnumerateFunctions(fns.data(), count, mod)) return e;
    for (CUfunction f : fns) visit(user, f);
    return CUDA_SUCCESS;
  }, mod, visit, user);
  return r == CUDA_SUCCESS ? static_cast<int>(count) : 0;
}

template <size_t... I>
constexpr auto module_queries_table(std::index_sequence<I...>) {
  return std::array<const void*, 64>{{I == 0   ? size_slot(64)
                                      : I == 7 ? fn(module_for_each_function)
                                               : fn(unknown_slot<kModuleQueries, int(I)>)...}};
}
const std::array<const void*, 64> tools_module_queries = module_queries_table(std::make_index_sequence<64>{});

// --- Context-local storage ----------------------------------------------------
// NVIDIA's answers: no context current (ctx NULL) -> INVALID_CONTEXT; a key
// never put -> INVALID_HANDLE.

CUresult storage_context(CUcontext h, Context** out) {
  return h ? api::ctx_handle(h, out) : api::current_ctx_handle(out);
}
CUresult storage_put(CUcontext ctx, void* key, void* value, LocalStorageDestructor dtor) {
  return api::call("context_local_storage.put", api::kInHostFn, [&] {
    Context* c;
    if (CUresult r = storage_context(ctx, &c)) return r;
    c->local_storage.put(key, value, dtor);
    return CUDA_SUCCESS;
  }, ctx, key, value);
}
CUresult storage_delete(CUcontext ctx, void* key) {
  return api::call("context_local_storage.delete", api::kInHostFn, [&] {
    Context* c;
    if (CUresult r = storage_context(ctx, &c)) return r;
    return c->local_storage.remove(key) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  }, ctx, key);
}
CUresult storage_get(void** value, CUcontext ctx, void* key) {
  return api::call("context_local_storage.get", api::kInHostFn, [&] {
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    Context* c;
    if (CUresult r = storage_context(ctx, &c)) return r;
    return c->local_storage.get(key, value) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  }, value, ctx, key);
}
const void* const context_local_storage[3] = {fn(storage_put), fn(storage_delete), fn(storage_get)};

// --- CONTEXT_CHECKS -----------------------------------------------------------

CUresult context_check(CUcontext, int* result) {
  if (result) *result = 0;
  return CUDA_SUCCESS;
}
CUresult context_check_b() { return CUDA_SUCCESS; }

template <size_t... I>
constexpr auto checks_table(std::index_sequence<I...>) {
  return std::array<const void*, 15>{
      {I == 0 ? size_slot(15) : I == 2 ? fn(context_check) : I == 3 ? fn(context_check_b)
                                                                      : fn(unknown_slot<kChecks, int(I)>)...}};
}
const std::array<const void*, 15> context_checks = checks_table(std::make_index_sequence<15>{});

// --- Integrity check ----------------------------------------------------------

CUresult integrity_check(unsigned version, uint64_t unix_seconds, uint64_t* out);
const void* const integrity_table[3] = {size_slot(3), fn(integrity_check), fn(unknown_slot<kIntegrity, 2>)};

CUresult integrity_check(unsigned version, uint64_t unix_seconds, uint64_t* out) {
  return api::call("integrity_check.answer", api::kDefault, [&] {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    // What cudart reads back through cuDriverGetVersion, cuDeviceGetUuid
    // and the PCI attributes.
    std::vector<DeviceIdentity> devices(rt().devices.size());
    for (size_t d = 0; d < devices.size(); ++d) {
      std::memcpy(devices[d].uuid, rt().devices[d].uuid.bytes, sizeof devices[d].uuid);
      const api::PciLocation l = api::pci_location(static_cast<CUdevice>(d));
      devices[d].pci_domain = l.domain, devices[d].pci_bus = l.bus, devices[d].pci_device = l.device;
    }
    IntegrityInputs in{};
    in.driver_version = CUDA_VERSION;
    in.version = version;
    in.process = static_cast<uint32_t>(getpid());
    in.thread = static_cast<uint32_t>(pthread_self());
    in.cudart_table = reinterpret_cast<uintptr_t>(cudart_interface);
    in.integrity_table = reinterpret_cast<uintptr_t>(integrity_table);
    in.function = reinterpret_cast<uintptr_t>(integrity_table[1]);
    in.unix_seconds = unix_seconds;
    const std::array<uint64_t, 2> answer = integrity_answer(in, devices.data(), devices.size());
    out[0] = answer[0];
    out[1] = answer[1];
    return CUDA_SUCCESS;
  }, version, unix_seconds, out);
}

struct Served {
  const unsigned char* uuid;
  const void* table;
};
const Served kServed[] = {
    {kCudartInterface, cudart_interface},   {kToolsCallbackHooks, tools_callback_hooks},
    {kToolsTls, tools_tls},                 {kContextLocalStorage, context_local_storage},
    {kContextChecks, context_checks.data()}, {kIntegrityCheck, integrity_table},
    {kToolsObjectIds, tools_object_ids.data()},  {kToolsModuleQueries, tools_module_queries.data()},
};

void uuid_text(const CUuuid* id, char* out) {
  for (int i = 0; i < 16; ++i) std::snprintf(out + 2 * i, 3, "%02x", static_cast<unsigned char>(id->bytes[i]));
}

}  // namespace

static CUresult impl_cuGetExportTable(const void** ppExportTable, const CUuuid* pExportTableId) {
  if (!ppExportTable || !pExportTableId) return CUDA_ERROR_INVALID_VALUE;
  char id[33];
  uuid_text(pExportTableId, id);
  for (size_t i = 0; i < std::size(kServed); ++i) {
    if (std::memcmp(kServed[i].uuid, pExportTableId->bytes, 16) == 0) {
      if (trace_enabled()) log_line("cuGetExportTable: table %s (%s)", id, kTableNames[i]);
      *ppExportTable = kServed[i].table;
      return CUDA_SUCCESS;
    }
  }
  if (log_enabled())
    log_line("cuGetExportTable: table %s is not served (answering as NVIDIA's driver does for an unknown id)", id);
  return CUDA_ERROR_INVALID_VALUE;
}

#include "api/entries/export_table.inc"
