// Stream memory operations: waits on and writes to 32- and 64-bit words in
// stream order (the _v2 entry points; the v1 names stay NOT_SUPPORTED, as
// the device reports CAN_USE_STREAM_MEM_OPS_V1 = 0 like the H200 does).
// Validation and error codes: build_mem_op_specs (exec/mem_ops.h). During
// capture each call becomes one batch-memop node, as on driver 580.
#include "api/common.h"
#include "exec/mem_ops.h"

using namespace cucpu;
using api::NullStream;

namespace {

constexpr unsigned kMaxBatch = 256;  // a batch must hold fewer operations than this

CUresult enqueue(NullStream ns, CUstream h, const CUstreamBatchMemOpParams* ops, unsigned count) {
  std::vector<MemOpSpec> specs;
  if (CUresult r = build_mem_op_specs(ops, count, &specs)) return r;
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  NodeParams node;
  node.kind = NodeKind::kBatchMemOp;
  if (s->capturing.load(std::memory_order_acquire)) {  // the node's copy of the operations, only when needed
    node.memops.assign(ops, ops + count);
    node.memop_ctx = reinterpret_cast<CUcontext>(s->ctx);
  }
  Route route;
  if (CUresult r = capture_route(s, node, true, &route)) return r;
  if (route == Route::kCaptured || specs.empty()) return CUDA_SUCCESS;
  s->enqueue(new MemOpsOp(std::move(specs)));
  return CUDA_SUCCESS;
}

CUresult wait32(NullStream ns, CUstream h, CUdeviceptr addr, cuuint32_t value, unsigned flags) {
  CUstreamBatchMemOpParams op{};
  op.waitValue = {CU_STREAM_MEM_OP_WAIT_VALUE_32, addr, {value}, flags, 0};
  return enqueue(ns, h, &op, 1);
}
CUresult wait64(NullStream ns, CUstream h, CUdeviceptr addr, cuuint64_t value, unsigned flags) {
  CUstreamBatchMemOpParams op{};
  op.waitValue = {CU_STREAM_MEM_OP_WAIT_VALUE_64, addr, {}, flags, 0};
  op.waitValue.value64 = value;
  return enqueue(ns, h, &op, 1);
}
CUresult write32(NullStream ns, CUstream h, CUdeviceptr addr, cuuint32_t value, unsigned flags) {
  CUstreamBatchMemOpParams op{};
  op.writeValue = {CU_STREAM_MEM_OP_WRITE_VALUE_32, addr, {value}, flags, 0};
  return enqueue(ns, h, &op, 1);
}
CUresult write64(NullStream ns, CUstream h, CUdeviceptr addr, cuuint64_t value, unsigned flags) {
  CUstreamBatchMemOpParams op{};
  op.writeValue = {CU_STREAM_MEM_OP_WRITE_VALUE_64, addr, {}, flags, 0};
  op.writeValue.value64 = value;
  return enqueue(ns, h, &op, 1);
}

CUresult batch(NullStream ns, CUstream h, unsigned count, CUstreamBatchMemOpParams* ops, unsigned flags) {
  if (flags != 0 || count >= kMaxBatch) return CUDA_ERROR_INVALID_VALUE;
  return enqueue(ns, h, ops, count);
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
