// Copies and sets, synchronous and stream-ordered. Both kinds enqueue an op
// on a stream; the synchronous forms use the default stream (legacy, or the
// per-thread one for _ptds) and wait for their op.
#include "api/common.h"
#include "core/copy_ops.h"
#include "core/copy_resolve.h"
#include "core/ops.h"

using namespace cucpu;
using api::NullStream;

namespace {

// The stream an entry point works on: `h`, or for synchronous forms the
// default stream (legacy, or per-thread for _ptds).
// A synchronous copy or set is not an unsafe call during capture (driver
// 580 accepts cuMemcpyHtoD while another stream captures in global mode),
// but must not touch a capturing legacy or per-thread stream.
CUresult target_stream(NullStream ns, CUstream h, bool sync, Stream** s) {
  if (CUresult r = api::stream_handle(sync ? nullptr : h, ns, s)) return r;
  if (!sync) return CUDA_SUCCESS;
  api::expect_capture_rule(api::kRefusedInCapture, "kRefusedInCapture");
  return capture_forbid_on_stream(*s);
}

// Async work on a capturing stream becomes a node instead of an op.
// `node(p)` writes the node's parameters, only when a capture takes them.
template <class MakeNode>
CUresult route(Stream* s, bool sync, MakeNode&& node, Route* r) {
  *r = Route::kEnqueue;
  return sync ? CUDA_SUCCESS : api::capture_route_lazy(s, node, true, r);
}

// Sync forms wait for the op that completes their work.
CUresult finish(Stream* s, bool sync, const OpRef& done) {
  if (!sync) return CUDA_SUCCESS;
  done->wait_done();
  if (check::on()) [[unlikely]] check::host_waited_stream(s);
  return s->ctx->sticky_error();
}

CUresult copy3d(NullStream ns, CUstream h, bool sync, const CUDA_MEMCPY3D* p) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  CopyTask task;
  if (CUresult r = resolve_copy3d(*p, &task.copy, task.checks)) return r;
  Stream* s;
  if (CUresult r = target_stream(ns, h, sync, &s)) return r;
  auto node = [p](NodeParams& n) {
    n.become<NodeKind::kMemcpy>().params = *p;
  };
  Route how;
  if (CUresult r = route(s, sync, node, &how)) return r;
  if (how == Route::kCaptured) return CUDA_SUCCESS;
  OpRef done = enqueue_copy(s, std::move(task), sync);
  return finish(s, sync, done);
}

CUresult copy2d(NullStream ns, CUstream h, bool sync, const CUDA_MEMCPY2D* p) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  CUDA_MEMCPY3D q = widen(*p);
  return copy3d(ns, h, sync, &q);
}

CUresult copy1d(NullStream ns, CUstream h, bool sync, CUmemorytype dt, uintptr_t dst, CUmemorytype st,
                uintptr_t src, size_t n) {
  if (n == 0) return CUDA_SUCCESS;
  if (!dst || !src) return CUDA_ERROR_INVALID_VALUE;
  CUDA_MEMCPY3D q{};
  q.srcMemoryType = st;
  q.dstMemoryType = dt;
  if (st == CU_MEMORYTYPE_HOST) q.srcHost = reinterpret_cast<const void*>(src);
  else q.srcDevice = static_cast<CUdeviceptr>(src);
  if (dt == CU_MEMORYTYPE_HOST) q.dstHost = reinterpret_cast<void*>(dst);
  else q.dstDevice = static_cast<CUdeviceptr>(dst);
  q.WidthInBytes = n;
  q.Height = 1;
  q.Depth = 1;
  return copy3d(ns, h, sync, &q);
}

CUresult memset2d(NullStream ns, CUstream h, bool sync, CUdeviceptr dst, size_t pitch, uint32_t value,
                  unsigned elem, size_t width, size_t height) {
  // The context is the stream's (a host function's worker has none current).
  Stream* s;
  if (CUresult r = target_stream(ns, h, sync, &s)) return r;
  if (width == 0 || height == 0) return CUDA_SUCCESS;
  Memset2D m;  // the element count and span are overflow-checked there
  MemCheck check;
  if (CUresult r = resolve_memset2d(dst, pitch, elem, value, width, height, &m, &check)) return r;
  pitch = m.pitch;
  auto node = [&](NodeParams& n) {
    n.become<NodeKind::kMemset>().params = {dst, pitch, value, elem, width, height};
  };
  Route how;
  if (CUresult r = route(s, sync, node, &how)) return r;
  if (how == Route::kCaptured) return CUDA_SUCCESS;
  auto* op = new MemsetOp(m, check);
  OpRef done = sync ? OpRef::share(op) : OpRef();  // only a sync form waits for it
  s->enqueue(op);
  return finish(s, sync, done);
}

// The entry-point bodies, by shape.
CUresult memcpy_sync(NullStream ns, CUdeviceptr d, CUdeviceptr s, size_t n) {
  return copy1d(ns, nullptr, true, CU_MEMORYTYPE_UNIFIED, d, CU_MEMORYTYPE_UNIFIED, s, n);
}
CUresult memcpy_async(NullStream ns, CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h) {
  return copy1d(ns, h, false, CU_MEMORYTYPE_UNIFIED, d, CU_MEMORYTYPE_UNIFIED, s, n);
}
CUresult htod(NullStream ns, CUdeviceptr d, const void* s, size_t n) {
  return copy1d(ns, nullptr, true, CU_MEMORYTYPE_DEVICE, d, CU_MEMORYTYPE_HOST, reinterpret_cast<uintptr_t>(s), n);
}
CUresult dtoh(NullStream ns, void* d, CUdeviceptr s, size_t n) {
  return copy1d(ns, nullptr, true, CU_MEMORYTYPE_HOST, reinterpret_cast<uintptr_t>(d), CU_MEMORYTYPE_DEVICE, s, n);
}
CUresult dtod(NullStream ns, CUdeviceptr d, CUdeviceptr s, size_t n) {
  return copy1d(ns, nullptr, true, CU_MEMORYTYPE_DEVICE, d, CU_MEMORYTYPE_DEVICE, s, n);
}
CUresult htod_async(NullStream ns, CUdeviceptr d, const void* s, size_t n, CUstream h) {
  return copy1d(ns, h, false, CU_MEMORYTYPE_DEVICE, d, CU_MEMORYTYPE_HOST, reinterpret_cast<uintptr_t>(s), n);
}
CUresult dtoh_async(NullStream ns, void* d, CUdeviceptr s, size_t n, CUstream h) {
  return copy1d(ns, h, false, CU_MEMORYTYPE_HOST, reinterpret_cast<uintptr_t>(d), CU_MEMORYTYPE_DEVICE, s, n);
}
// The common small case, without a CUDA_MEMCPY3D: both ranges checked, one op.
CUresult dtod_async(NullStream ns, CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h) {
  if (n == 0) return CUDA_SUCCESS;
  Context* c;  // the checks in copy3d's order: context, ranges, stream
  if (CUresult r = api::current_ctx(&c)) return r;
  MemCheck checks[2];
  if (CUresult r = check_device_ranges(s, d, n, checks)) return r;
  Stream* st;
  if (CUresult r = target_stream(ns, h, false, &st)) return r;
  if (api::capture_concerns(st))
    return copy1d(ns, h, false, CU_MEMORYTYPE_DEVICE, d, CU_MEMORYTYPE_DEVICE, s, n);  // becomes a node
  enqueue_linear_copy(st, reinterpret_cast<unsigned char*>(d), reinterpret_cast<const unsigned char*>(s), n, checks);
  return CUDA_SUCCESS;
}
CUresult copy2d_sync(NullStream ns, const CUDA_MEMCPY2D* p) { return copy2d(ns, nullptr, true, p); }
CUresult copy3d_sync(NullStream ns, const CUDA_MEMCPY3D* p) { return copy3d(ns, nullptr, true, p); }
CUresult copy2d_async(NullStream ns, const CUDA_MEMCPY2D* p, CUstream h) { return copy2d(ns, h, false, p); }
CUresult copy3d_async(NullStream ns, const CUDA_MEMCPY3D* p, CUstream h) { return copy3d(ns, h, false, p); }
CUresult peer_async(NullStream ns, CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream h) {
  Context* tmp;
  if (CUresult r = api::ctx_handle(dc, &tmp)) return r;
  if (CUresult r = api::ctx_handle(sc, &tmp)) return r;
  return copy1d(ns, h, false, CU_MEMORYTYPE_DEVICE, d, CU_MEMORYTYPE_DEVICE, s, n);
}
CUresult peer_sync(NullStream ns, CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n) {
  Context* tmp;
  if (CUresult r = api::ctx_handle(dc, &tmp)) return r;
  if (CUresult r = api::ctx_handle(sc, &tmp)) return r;
  return copy1d(ns, nullptr, true, CU_MEMORYTYPE_DEVICE, d, CU_MEMORYTYPE_DEVICE, s, n);
}

// A peer copy is a 3D copy whose operands name their contexts; every context
// shares the host's memory, so once the contexts check out it is a plain one.
CUresult peer3d(NullStream ns, CUstream h, bool sync, const CUDA_MEMCPY3D_PEER* p) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  Context* tmp;
  if (CUresult r = api::ctx_handle(p->srcContext, &tmp)) return r;
  if (CUresult r = api::ctx_handle(p->dstContext, &tmp)) return r;
  CUDA_MEMCPY3D q{};
  q.srcXInBytes = p->srcXInBytes;
  q.srcY = p->srcY;
  q.srcZ = p->srcZ;
  copy_enum(q.srcMemoryType, p->srcMemoryType);
  q.srcHost = p->srcHost;
  q.srcDevice = p->srcDevice;
  q.srcArray = p->srcArray;
  q.srcPitch = p->srcPitch;
  q.srcHeight = p->srcHeight;
  q.dstXInBytes = p->dstXInBytes;
  q.dstY = p->dstY;
  q.dstZ = p->dstZ;
  copy_enum(q.dstMemoryType, p->dstMemoryType);
  q.dstHost = p->dstHost;
  q.dstDevice = p->dstDevice;
  q.dstArray = p->dstArray;
  q.dstPitch = p->dstPitch;
  q.dstHeight = p->dstHeight;
  q.WidthInBytes = p->WidthInBytes;
  q.Height = p->Height;
  q.Depth = p->Depth;
  return copy3d(ns, h, sync, &q);
}
CUresult peer3d_sync(NullStream ns, const CUDA_MEMCPY3D_PEER* p) { return peer3d(ns, nullptr, true, p); }
CUresult peer3d_async(NullStream ns, const CUDA_MEMCPY3D_PEER* p, CUstream h) { return peer3d(ns, h, false, p); }

// 1D copies to and from CUDA arrays: n bytes of the array's first row,
// from a byte offset (the driver's 1D arrays).
struct Side1D {
  CUmemorytype type;
  CUarray array = nullptr;
  const void* host = nullptr;
  CUdeviceptr device = 0;
  size_t offset = 0;
};
CUresult array_copy(NullStream ns, CUstream h, bool sync, const Side1D& dst, const Side1D& src, size_t n) {
  CUDA_MEMCPY3D q{};
  q.dstMemoryType = dst.type;
  q.dstArray = dst.array;
  q.dstHost = const_cast<void*>(dst.host);
  q.dstDevice = dst.device;
  q.dstXInBytes = dst.offset;
  q.srcMemoryType = src.type;
  q.srcArray = src.array;
  q.srcHost = src.host;
  q.srcDevice = src.device;
  q.srcXInBytes = src.offset;
  q.WidthInBytes = n;
  q.Height = 1;
  q.Depth = 1;
  return copy3d(ns, h, sync, &q);
}
Side1D arr(CUarray a, size_t offset) { return {CU_MEMORYTYPE_ARRAY, a, nullptr, 0, offset}; }
Side1D host(const void* p) { return {CU_MEMORYTYPE_HOST, nullptr, p, 0, 0}; }
Side1D dev(CUdeviceptr p) { return {CU_MEMORYTYPE_DEVICE, nullptr, nullptr, p, 0}; }
CUresult htoa(NullStream ns, CUarray d, size_t off, const void* s, size_t n) {
  return array_copy(ns, nullptr, true, arr(d, off), host(s), n);
}
CUresult atoh(NullStream ns, void* d, CUarray s, size_t off, size_t n) {
  return array_copy(ns, nullptr, true, host(d), arr(s, off), n);
}
CUresult dtoa(NullStream ns, CUarray d, size_t off, CUdeviceptr s, size_t n) {
  return array_copy(ns, nullptr, true, arr(d, off), dev(s), n);
}
CUresult atod(NullStream ns, CUdeviceptr d, CUarray s, size_t off, size_t n) {
  return array_copy(ns, nullptr, true, dev(d), arr(s, off), n);
}
CUresult atoa(NullStream ns, CUarray d, size_t doff, CUarray s, size_t soff, size_t n) {
  return array_copy(ns, nullptr, true, arr(d, doff), arr(s, soff), n);
}
CUresult htoa_async(NullStream ns, CUarray d, size_t off, const void* s, size_t n, CUstream h) {
  return array_copy(ns, h, false, arr(d, off), host(s), n);
}
CUresult atoh_async(NullStream ns, void* d, CUarray s, size_t off, size_t n, CUstream h) {
  return array_copy(ns, h, false, host(d), arr(s, off), n);
}

CUresult d8(NullStream ns, CUdeviceptr d, unsigned char v, size_t n) { return memset2d(ns, nullptr, true, d, 0, v, 1, n, 1); }
CUresult d16(NullStream ns, CUdeviceptr d, unsigned short v, size_t n) { return memset2d(ns, nullptr, true, d, 0, v, 2, n, 1); }
CUresult d32(NullStream ns, CUdeviceptr d, unsigned int v, size_t n) { return memset2d(ns, nullptr, true, d, 0, v, 4, n, 1); }
CUresult d2d8(NullStream ns, CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h) { return memset2d(ns, nullptr, true, d, p, v, 1, w, h); }
CUresult d2d16(NullStream ns, CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t h) { return memset2d(ns, nullptr, true, d, p, v, 2, w, h); }
CUresult d2d32(NullStream ns, CUdeviceptr d, size_t p, unsigned int v, size_t w, size_t h) { return memset2d(ns, nullptr, true, d, p, v, 4, w, h); }
CUresult d8a(NullStream ns, CUdeviceptr d, unsigned char v, size_t n, CUstream s) { return memset2d(ns, s, false, d, 0, v, 1, n, 1); }
CUresult d16a(NullStream ns, CUdeviceptr d, unsigned short v, size_t n, CUstream s) { return memset2d(ns, s, false, d, 0, v, 2, n, 1); }
CUresult d32a(NullStream ns, CUdeviceptr d, unsigned int v, size_t n, CUstream s) { return memset2d(ns, s, false, d, 0, v, 4, n, 1); }
CUresult d2d8a(NullStream ns, CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h, CUstream s) { return memset2d(ns, s, false, d, p, v, 1, w, h); }
CUresult d2d16a(NullStream ns, CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t h, CUstream s) { return memset2d(ns, s, false, d, p, v, 2, w, h); }
CUresult d2d32a(NullStream ns, CUdeviceptr d, size_t p, unsigned int v, size_t w, size_t h, CUstream s) { return memset2d(ns, s, false, d, p, v, 4, w, h); }

}  // namespace

#include "api/entries/memcpy.inc"
