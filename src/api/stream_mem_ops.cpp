// Stream memory operations: waits on and writes to 32- and 64-bit words in
// stream order (the _v2 entry points; the v1 names stay NOT_SUPPORTED, as
// the device reports CAN_USE_STREAM_MEM_OPS_V1 = 0 like the H200 does).
// Validation and error codes: build_mem_op_specs (core/mem_ops.h). During
// capture each call becomes one batch-memop node, as on driver 580.
#include "api/common.h"
#include "core/mem_ops.h"

using namespace cucpu;
using api::NullStream;

namespace {

constexpr unsigned kMaxBatch = 256;  // a batch must hold fewer operations than this

CUresult enqueue(NullStream ns, CUstream h, const CUstreamBatchMemOpParams* ops, unsigned count) {
  std::vector<MemOpSpec> specs;
  if (CUresult r = build_mem_op_specs(ops, count, &specs)) return r;
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  auto node = [&](NodeParams& p) {  // the node's own copy of the operations
    MemOpNodeData& node = p.become<NodeKind::kBatchMemOp>();
    node.ops.assign(ops, ops + count);
    node.ctx = reinterpret_cast<CUcontext>(s->ctx);
  };
  Route route;
  if (CUresult r = api::capture_route_lazy(s, node, true, &route)) return r;
  if (route == Route::kCaptured || specs.empty()) return CUDA_SUCCESS;
  s->enqueue(new MemOpsOp(std::move(specs)));
  return CUDA_SUCCESS;
}

// The single-op entry points: one batch entry of `type`.
CUresult one_op(NullStream ns, CUstream h, CUstreamBatchMemOpType type, CUdeviceptr addr, cuuint64_t value,
                unsigned flags) {
  CUstreamBatchMemOpParams op{};
  const bool wide = type == CU_STREAM_MEM_OP_WAIT_VALUE_64 || type == CU_STREAM_MEM_OP_WRITE_VALUE_64;
  auto fill = [&](auto& p) {  // wait and write entries have the same fields
    p.operation = type;
    p.address = addr;
    p.flags = flags;
    if (wide) p.value64 = value;
    else p.value = static_cast<cuuint32_t>(value);
  };
  if (type == CU_STREAM_MEM_OP_WAIT_VALUE_32 || type == CU_STREAM_MEM_OP_WAIT_VALUE_64) fill(op.waitValue);
  else fill(op.writeValue);
  return enqueue(ns, h, &op, 1);
}
CUresult wait32(NullStream ns, CUstream h, CUdeviceptr addr, cuuint32_t value, unsigned flags) {
  return one_op(ns, h, CU_STREAM_MEM_OP_WAIT_VALUE_32, addr, value, flags);
}
CUresult wait64(NullStream ns, CUstream h, CUdeviceptr addr, cuuint64_t value, unsigned flags) {
  return one_op(ns, h, CU_STREAM_MEM_OP_WAIT_VALUE_64, addr, value, flags);
}
CUresult write32(NullStream ns, CUstream h, CUdeviceptr addr, cuuint32_t value, unsigned flags) {
  return one_op(ns, h, CU_STREAM_MEM_OP_WRITE_VALUE_32, addr, value, flags);
}
CUresult write64(NullStream ns, CUstream h, CUdeviceptr addr, cuuint64_t value, unsigned flags) {
  return one_op(ns, h, CU_STREAM_MEM_OP_WRITE_VALUE_64, addr, value, flags);
}

CUresult batch(NullStream ns, CUstream h, unsigned count, CUstreamBatchMemOpParams* ops, unsigned flags) {
  if (flags != 0 || count >= kMaxBatch) return CUDA_ERROR_INVALID_VALUE;
  return enqueue(ns, h, ops, count);
}

}  // namespace

#include "api/entries/stream_mem_ops.inc"
