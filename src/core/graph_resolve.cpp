// Resolving a node's parameters into what an executable graph runs
// (GraphExec::resolve), and the memory checks that copy and set nodes keep.
#include "core/graph_exec.h"

#include <cstring>

#include "base/raw_enum.h"
#include "core/array.h"
#include "core/check.h"
#include "core/event.h"
#include "core/kernel_op.h"
#include "core/ops.h"
#include "core/runtime.h"

namespace cucpu {

namespace {
// The array a copy side names, when its memory type is ARRAY (read as an
// integer: the field comes from caller memory).
Array* array_side(const CUmemorytype& type, CUarray h) {
  return raw_enum(type) == CU_MEMORYTYPE_ARRAY ? rt().arrays.live(h) : nullptr;
}
}  // namespace

CUresult validate_node_params(NodeParams& p) {
  ExecNode scratch;
  if (p.kind() == NodeKind::kMemcpy) p.copy().checks[0] = p.copy().checks[1] = MemCheck{};
  if (p.kind() == NodeKind::kMemset) p.memset().check = MemCheck{};
  CUresult r = GraphExec::resolve_for_validation(p, &scratch);
  if (r == CUDA_SUCCESS) record_checks(p, scratch);
  return r;
}

void record_memory_checks(NodeParams& p) {
  if (p.kind() != NodeKind::kMemcpy && p.kind() != NodeKind::kMemset) return;
  (void)validate_node_params(p);
}

void record_checks(NodeParams& p, const ExecNode& resolved) {
  if (p.kind() == NodeKind::kMemcpy) {
    p.copy().checks[0] = resolved.copy().checks[0];
    p.copy().checks[1] = resolved.copy().checks[1];
  } else if (p.kind() == NodeKind::kMemset) {
    p.memset().check = resolved.set().check;
  }
}

CUresult GraphExec::resolve(const NodeParams& p, ExecNode* e) {
  e->kind = p.kind();
  switch (p.kind()) {
    case NodeKind::kHost:
      if (!p.host().fn) return CUDA_ERROR_INVALID_VALUE;
      e->work = p.host();
      return CUDA_SUCCESS;
    case NodeKind::kMemcpy: {
      // Memory the node named when it was set and that is gone since (freed
      // before instantiation): driver 580 crashes; refused here.
      const CopyNodeData& node = p.copy();
      if (!memory_still_valid(node.checks, 2)) return CUDA_ERROR_INVALID_VALUE;
      auto c = std::make_shared<ExecCopy>();
      if (CUresult r = resolve_copy3d(node.params, &c->copy, c->checks)) return r;
      // The exec keeps the storage of the arrays it copies to or from.
      if (Array* a = array_side(node.params.srcMemoryType, node.params.srcArray)) c->keep[0] = a->data;
      if (Array* a = array_side(node.params.dstMemoryType, node.params.dstArray)) c->keep[1] = a->data;
      e->work = std::shared_ptr<const ExecCopy>(std::move(c));
      return CUDA_SUCCESS;
    }
    case NodeKind::kMemset: {
      if (!memory_still_valid(&p.memset().check, 1)) return CUDA_ERROR_INVALID_VALUE;
      const CUDA_MEMSET_NODE_PARAMS& m = p.memset().params;
      unsigned es = m.elementSize;
      if (es != 1 && es != 2 && es != 4) return CUDA_ERROR_INVALID_VALUE;
      if (m.width == 0 || m.height == 0) return CUDA_ERROR_INVALID_VALUE;
      // The same overflow-checked walk as the stream-ordered memsets.
      auto set = std::make_shared<ExecSet>();
      if (CUresult r = resolve_memset2d(m.dst, m.pitch, es, m.value, m.width, m.height, &set->set, &set->check)) return r;
      e->work = std::shared_ptr<const ExecSet>(std::move(set));
      return CUDA_SUCCESS;
    }
    case NodeKind::kEventRecord:
    case NodeKind::kEventWait:
      if (!rt().events.live(p.event())) return CUDA_ERROR_INVALID_VALUE;
      e->work = p.event();
      return CUDA_SUCCESS;
    case NodeKind::kMemAlloc:
    case NodeKind::kMemFree:
      e->work = p.memory();  // mapped already: the nodes order, they move nothing
      return CUDA_SUCCESS;
    case NodeKind::kBatchMemOp: {
      std::vector<MemOpSpec> specs;
      if (CUresult r = build_mem_op_specs(p.memops().ops.data(), static_cast<unsigned>(p.memops().ops.size()), &specs)) return r;
      e->work = std::move(specs);
      return CUDA_SUCCESS;
    }
    case NodeKind::kKernel: {
      const KernelNodeData& k = p.kernel();
      if (!k.fn) return CUDA_ERROR_INVALID_VALUE;
      const ptx::Kernel* kernel = k.fn->loaded();
      if (!kernel) return CUDA_ERROR_INVALID_PTX;
      const LaunchShape shape{{k.grid[0], k.grid[1], k.grid[2]}, {k.block[0], k.block[1], k.block[2]}, k.shared};
      if (CUresult r = check_launch_shape(*k.fn, *kernel, shape)) return r;
      auto kd = std::make_shared<KernelNodeData>(k);
      kd->args.clear();
      e->work = std::shared_ptr<const KernelNodeData>(std::move(kd));
      e->parallel = launch_in_parallel(shape);
      for (const CUlaunchAttribute& a : k.attrs)
        if (raw_enum(a.id) == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && a.value.cooperative) e->cooperative = true;
      if (e->cooperative) {
        if (!cooperative_fits(*k.fn, *kernel, shape)) return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
        e->parallel = true;  // a segment of its own
      }
      return CUDA_SUCCESS;
    }
    default:
      return CUDA_SUCCESS;
  }
}

}  // namespace cucpu
