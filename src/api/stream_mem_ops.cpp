// Stream memory operations: waits on and writes to 32- and 64-bit words in
// stream order (the _v2 entry points; the v1 names stay NOT_SUPPORTED, as
// the device reports CAN_USE_STREAM_MEM_OPS_V1 = 0 like the H200 does).
// Error codes follow driver 580 (docs/conformance.md).
#include "api/common.h"
#include "core/allocation.h"
#include "exec/mem_ops.h"

using namespace cucpu;
using api::NullStream;

namespace {

constexpr unsigned kMaxBatch = 256;  // a batch must hold fewer operations than this

// The word must lie in one allocation that is not managed memory, aligned
// to its size.
CUresult check_word(CUdeviceptr addr, size_t size, MemOpSpec* m) {
  if (addr == 0 || addr % size != 0) return CUDA_ERROR_INVALID_VALUE;
  auto a = Registry::instance().find(static_cast<uintptr_t>(addr));
  if (!a || a->kind == MemKind::kManaged) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = check_device_range(addr, size, &m->check)) return r;
  m->addr = static_cast<uintptr_t>(addr);
  return CUDA_SUCCESS;
}

CUresult wait_spec(CUdeviceptr addr, uint64_t value, unsigned flags, bool wide, MemOpSpec* m) {
  if (flags & CU_STREAM_WAIT_VALUE_FLUSH) return CUDA_ERROR_NOT_SUPPORTED;  // CAN_FLUSH_REMOTE_WRITES is 0
  if (flags > CU_STREAM_WAIT_VALUE_NOR) return CUDA_ERROR_INVALID_VALUE;
  m->kind = wide ? MemOpSpec::Kind::kWait64 : MemOpSpec::Kind::kWait32;
  m->condition = flags;
  m->value = value;
  return check_word(addr, wide ? 8 : 4, m);
}

CUresult write_spec(CUdeviceptr addr, uint64_t value, unsigned flags, bool wide, MemOpSpec* m) {
  // Driver 580 refuses CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER too.
  if (flags != CU_STREAM_WRITE_VALUE_DEFAULT) return CUDA_ERROR_INVALID_VALUE;
  m->kind = wide ? MemOpSpec::Kind::kWrite64 : MemOpSpec::Kind::kWrite32;
  m->value = value;
  return check_word(addr, wide ? 8 : 4, m);
}

CUresult enqueue(NullStream ns, CUstream h, std::vector<MemOpSpec> specs) {
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  Route route;  // no batch-memop graph nodes: refused during capture, which stays valid
  if (CUresult r = capture_route(s, NodeParams{}, false, &route, false)) return r;
  if (specs.empty()) return CUDA_SUCCESS;
  s->enqueue(new MemOpsOp(std::move(specs)));
  return CUDA_SUCCESS;
}

// One wait or write; `spec` is wait_spec or write_spec.
template <class Value>
CUresult single(NullStream ns, CUstream h, CUdeviceptr addr, Value value, unsigned flags,
                CUresult (*spec)(CUdeviceptr, uint64_t, unsigned, bool, MemOpSpec*)) {
  std::vector<MemOpSpec> specs(1);
  if (CUresult r = spec(addr, value, flags, sizeof(Value) == 8, &specs[0])) return r;
  return enqueue(ns, h, std::move(specs));
}
CUresult wait32(NullStream ns, CUstream h, CUdeviceptr addr, cuuint32_t value, unsigned flags) {
  return single(ns, h, addr, value, flags, wait_spec);
}
CUresult wait64(NullStream ns, CUstream h, CUdeviceptr addr, cuuint64_t value, unsigned flags) {
  return single(ns, h, addr, value, flags, wait_spec);
}
CUresult write32(NullStream ns, CUstream h, CUdeviceptr addr, cuuint32_t value, unsigned flags) {
  return single(ns, h, addr, value, flags, write_spec);
}
CUresult write64(NullStream ns, CUstream h, CUdeviceptr addr, cuuint64_t value, unsigned flags) {
  return single(ns, h, addr, value, flags, write_spec);
}

CUresult batch(NullStream ns, CUstream h, unsigned count, CUstreamBatchMemOpParams* ops, unsigned flags) {
  if (flags != 0 || count >= kMaxBatch) return CUDA_ERROR_INVALID_VALUE;
  if (count > 0 && !ops) return CUDA_ERROR_INVALID_VALUE;  // driver 580 crashes here
  std::vector<MemOpSpec> specs(count);
  for (unsigned i = 0; i < count; ++i) {
    const CUstreamBatchMemOpParams& p = ops[i];
    CUresult r = CUDA_SUCCESS;
    switch (api::raw_enum(p.operation)) {  // any bit pattern may arrive: no enum load
      case CU_STREAM_MEM_OP_WAIT_VALUE_32:
        r = wait_spec(p.waitValue.address, p.waitValue.value, p.waitValue.flags, false, &specs[i]);
        break;
      case CU_STREAM_MEM_OP_WAIT_VALUE_64:
        r = wait_spec(p.waitValue.address, p.waitValue.value64, p.waitValue.flags, true, &specs[i]);
        break;
      case CU_STREAM_MEM_OP_WRITE_VALUE_32:
        r = write_spec(p.writeValue.address, p.writeValue.value, p.writeValue.flags, false, &specs[i]);
        break;
      case CU_STREAM_MEM_OP_WRITE_VALUE_64:
        r = write_spec(p.writeValue.address, p.writeValue.value64, p.writeValue.flags, true, &specs[i]);
        break;
      case CU_STREAM_MEM_OP_BARRIER:
        specs[i].kind = MemOpSpec::Kind::kBarrier;
        break;
      case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
        r = CUDA_ERROR_NOT_SUPPORTED;
        break;
      default:
        r = CUDA_ERROR_INVALID_VALUE;
    }
    if (r != CUDA_SUCCESS) return r;
  }
  return enqueue(ns, h, std::move(specs));
}

}  // namespace

CUCPU_STREAM_ENTRY(cuStreamWaitValue32_v2, _ptsz, wait32,
                   (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags), stream, addr, value,
                   flags)
CUCPU_STREAM_ENTRY(cuStreamWaitValue64_v2, _ptsz, wait64,
                   (CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags), stream, addr, value,
                   flags)
CUCPU_STREAM_ENTRY(cuStreamWriteValue32_v2, _ptsz, write32,
                   (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags), stream, addr, value,
                   flags)
CUCPU_STREAM_ENTRY(cuStreamWriteValue64_v2, _ptsz, write64,
                   (CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags), stream, addr, value,
                   flags)
CUCPU_STREAM_ENTRY(cuStreamBatchMemOp_v2, _ptsz, batch,
                   (CUstream stream, unsigned int count, CUstreamBatchMemOpParams* paramArray, unsigned int flags),
                   stream, count, paramArray, flags)
