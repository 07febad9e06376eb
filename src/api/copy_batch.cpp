// Batched copies: cuMemcpy3DBatchAsync (v1, v2) and cuMemcpyBatchAsync
// (v1, v2). The whole batch is validated before anything is enqueued; the
// copies then run as one stream group, spread over the workers.
#include <cstdlib>
#include <vector>

#include "api/common.h"
#include "core/array.h"
#include "base/checked_math.h"
#include "core/copy_ops.h"
#include "core/copy_resolve.h"
#include "core/capture.h"
#include "core/check.h"

using namespace cucpu;
using api::NullStream;
using api::raw_enum;

namespace {

bool access_order_ok(const CUmemcpySrcAccessOrder& o) {
  int v = raw_enum(o);
  return v == CU_MEMCPY_SRC_ACCESS_ORDER_STREAM || v == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL ||
         v == CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
}

// Location hints (locHint, srcLocHint, dstLocHint) are not checked: driver
// 580 accepts any value, even an undefined location type, and all of
// cucpu's memory is host memory, so there is nothing to place.

// Element size an operand imposes: its array's, or 0 for a pointer.
CUresult operand_elem(const CUmemcpy3DOperand& o, size_t* elem, Array** array) {
  switch (raw_enum(o.type)) {
    case CU_MEMCPY_OPERAND_TYPE_POINTER:
      if (!o.op.ptr.ptr) return CUDA_ERROR_INVALID_VALUE;
      *elem = 0;
      *array = nullptr;
      return CUDA_SUCCESS;
    case CU_MEMCPY_OPERAND_TYPE_ARRAY:
      *array = rt().arrays.live(o.op.array.array);
      if (!*array) return CUDA_ERROR_INVALID_VALUE;
      *elem = (*array)->elem_size;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

// One side of the copy a batch operand names. Offsets and row lengths in
// elements become bytes here: a product that overflows is out of range
// (CUDA_ERROR_INVALID_VALUE, as driver 580 for an array offset past the
// end); resolve_copy checks the rest.
CUresult describe(const CUmemcpy3DOperand& o, Array* array, size_t elem, const CUextent3D& ext, CopySide* side) {
  *side = CopySide{};
  if (array) {
    side->type = CU_MEMORYTYPE_ARRAY;
    side->array = o.op.array.array;
    if (!checked_mul(o.op.array.offset.x, elem, &side->x)) return CUDA_ERROR_INVALID_VALUE;
    side->y = o.op.array.offset.y;
    side->z = o.op.array.offset.z;
    return CUDA_SUCCESS;
  }
  side->type = CU_MEMORYTYPE_UNIFIED;
  side->dev = o.op.ptr.ptr;
  if (!checked_mul(o.op.ptr.rowLength ? o.op.ptr.rowLength : ext.width, elem, &side->pitch))
    return CUDA_ERROR_INVALID_VALUE;
  side->height = o.op.ptr.layerHeight ? o.op.ptr.layerHeight : ext.height;
  return CUDA_SUCCESS;
}

// `cucpu check`: a source read during the call (or, with ANY, perhaps then).
void note_source_order(Stream* s, const CopyTask& t, size_t index, const CUmemcpySrcAccessOrder& order) {
  if (!check::on()) [[likely]] return;
  const unsigned v = raw_enum(order);
  if (v == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL || v == CU_MEMCPY_SRC_ACCESS_ORDER_ANY)
    check::source_read_during_call(s, t.copy, index, v == CU_MEMCPY_SRC_ACCESS_ORDER_ANY);
}

CUresult validate_3d_op(Stream* s, size_t index, const CUDA_MEMCPY3D_BATCH_OP& op, CopyTask* task) {
  if (!access_order_ok(op.srcAccessOrder)) return CUDA_ERROR_INVALID_VALUE;
  if (op.flags & ~static_cast<unsigned>(CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE)) return CUDA_ERROR_INVALID_VALUE;
  const CUextent3D& ext = op.extent;
  if (ext.width == 0 || ext.height == 0 || ext.depth == 0) return CUDA_ERROR_INVALID_VALUE;
  size_t se, de;
  Array* sa;
  Array* da;
  if (CUresult r = operand_elem(op.src, &se, &sa)) return r;
  if (CUresult r = operand_elem(op.dst, &de, &da)) return r;
  if (sa && da && se != de) return CUDA_ERROR_INVALID_VALUE;
  const size_t elem = se ? se : de ? de : 1;
  for (const CUmemcpy3DOperand* o : {&op.src, &op.dst}) {
    if (raw_enum(o->type) != CU_MEMCPY_OPERAND_TYPE_POINTER) continue;
    if (o->op.ptr.rowLength && o->op.ptr.rowLength < ext.width) return CUDA_ERROR_INVALID_VALUE;
    if (o->op.ptr.layerHeight && o->op.ptr.layerHeight < ext.height) return CUDA_ERROR_INVALID_VALUE;
  }
  CopySide src, dst;
  if (CUresult r = describe(op.src, sa, elem, ext, &src)) return r;
  if (CUresult r = describe(op.dst, da, elem, ext, &dst)) return r;
  CopyBox box{0, ext.height, ext.depth};
  if (!checked_mul(ext.width, elem, &box.width_bytes)) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = resolve_copy(src, dst, box, &task->copy, task->checks)) return r;
  note_source_order(s, *task, index, op.srcAccessOrder);
  if (raw_enum(op.srcAccessOrder) == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL) return stage_source(*task);
  return CUDA_SUCCESS;
}

// Copies within a batch are unordered, and dependent copies are undefined
// on the driver. cucpu defines them: a batch in which one copy writes bytes
// that another reads or writes runs its copies one after another, in list
// order (`cucpu check` reports the pairs, core/check.h). Independent
// batches run in parallel.
CUresult enqueue_batch(Stream* s, std::vector<CopyTask> tasks) {
  const bool dependent = tasks.size() > 1 && !find_dependent_copies(copy_list(tasks)).empty();
  enqueue_copies(s, std::move(tasks), dependent);
  return CUDA_SUCCESS;
}

// The batch calls refuse the legacy NULL stream; the per-thread one is fine.
// Batches have no graph node: a capturing stream refuses them.
CUresult batch_stream(NullStream ns, CUstream h, Stream** s) {
  if (h == CU_STREAM_LEGACY || (h == nullptr && ns == NullStream::kLegacy)) {
    Context* c;
    if (CUresult r = api::current_ctx(&c)) return r;
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (CUresult r = api::stream_handle(h, ns, s)) return r;
  Route route;  // refused during capture, but the capture stays valid (driver 580)
  return api::refuse_during_capture(*s, &route, false);
}

CUresult batch_3d(NullStream ns, size_t n, CUDA_MEMCPY3D_BATCH_OP* ops, size_t* fail_idx, unsigned long long flags,
                  CUstream h) {
  if (fail_idx) *fail_idx = SIZE_MAX;
  Stream* s;
  if (CUresult r = batch_stream(ns, h, &s)) return r;
  if (n == 0 || !ops || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  // Validate (and read DURING_API_CALL sources) before anything is enqueued.
  std::vector<CopyTask> tasks(n);
  for (size_t i = 0; i < n; ++i) {
    if (CUresult r = validate_3d_op(s, i, ops[i], &tasks[i])) {
      if (fail_idx) *fail_idx = i;
      return r;
    }
  }
  return enqueue_batch(s, std::move(tasks));
}

CUresult batch_1d(NullStream ns, CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count,
                  CUmemcpyAttributes* attrs, size_t* attr_idxs, size_t num_attrs, size_t* fail_idx, CUstream h) {
  if (fail_idx) *fail_idx = SIZE_MAX;
  Stream* s;
  if (CUresult r = batch_stream(ns, h, &s)) return r;
  if (count == 0 || !dsts || !srcs || !sizes || !attrs || !attr_idxs) return CUDA_ERROR_INVALID_VALUE;
  if (num_attrs == 0 || num_attrs > count || attr_idxs[0] != 0) return CUDA_ERROR_INVALID_VALUE;
  for (size_t a = 0; a < num_attrs; ++a) {
    if (a > 0 && attr_idxs[a] <= attr_idxs[a - 1]) return CUDA_ERROR_INVALID_VALUE;
    if (attr_idxs[a] >= count) return CUDA_ERROR_INVALID_VALUE;
    const CUmemcpyAttributes& at = attrs[a];
    if (!access_order_ok(at.srcAccessOrder) || (at.flags & ~static_cast<unsigned>(CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE)))
      return CUDA_ERROR_INVALID_VALUE;
  }
  std::vector<CopyTask> tasks(count);
  size_t a = 0;
  for (size_t i = 0; i < count; ++i) {
    while (a + 1 < num_attrs && attr_idxs[a + 1] <= i) ++a;
    CopySide src{}, dst{};
    src.type = dst.type = CU_MEMORYTYPE_UNIFIED;
    src.dev = srcs[i];
    dst.dev = dsts[i];
    CUresult r = (sizes[i] == 0 || !srcs[i] || !dsts[i])
                     ? CUDA_ERROR_INVALID_VALUE
                     : resolve_copy(src, dst, CopyBox{sizes[i], 1, 1}, &tasks[i].copy, tasks[i].checks);
    if (r != CUDA_SUCCESS) {
      if (fail_idx) *fail_idx = i;
      return r;
    }
    note_source_order(s, tasks[i], i, attrs[a].srcAccessOrder);
    if (raw_enum(attrs[a].srcAccessOrder) == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL) {
      if (CUresult r = stage_source(tasks[i])) {
        if (fail_idx) *fail_idx = i;
        return r;
      }
    }
  }
  return enqueue_batch(s, std::move(tasks));
}

CUresult batch_3d_v2(NullStream ns, size_t n, CUDA_MEMCPY3D_BATCH_OP* ops, unsigned long long flags, CUstream h) {
  return batch_3d(ns, n, ops, nullptr, flags, h);
}
CUresult batch_1d_v2(NullStream ns, CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count,
                     CUmemcpyAttributes* attrs, size_t* attr_idxs, size_t num_attrs, CUstream h) {
  return batch_1d(ns, dsts, srcs, sizes, count, attrs, attr_idxs, num_attrs, nullptr, h);
}

}  // namespace

#include "api/entries/copy_batch.inc"
