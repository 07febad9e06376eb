// Call families: copies and sets of every shape, and the checked copies and
// sets (the bytes must come out right).
#include "harness.h"

#include <algorithm>

namespace fz {

// ------------------------------------------------------------------ copies

namespace {

// One side of a 1D copy of a fixed memory type.
CopySide side1d(Reader& r, int mtype) {
  CopySide s;
  s.mtype = mtype;
  s.m = pick_mem(r, mtype == CU_MEMORYTYPE_HOST ? Use::kHost
                    : mtype == CU_MEMORYTYPE_UNIFIED ? Use::kUnified
                                                     : Use::kValidated);
  return s;
}

// Makes a 1D copy legal by shortening it to the host memory there is; false
// when it cannot be.
bool legal1d(const CopySide& s, const CopySide& d, size_t* n) {
  if (copy_legal(s, d, *n, 1, 1)) return true;
  size_t room = SIZE_MAX;
  for (const CopySide* x : {&s, &d})
    if (x->mtype != CU_MEMORYTYPE_DEVICE && x->m.src == MemRef::kHostBuf) room = std::min(room, x->m.avail);
  if (room == SIZE_MAX || room == 0) return false;
  *n = std::min(*n, room);
  return copy_legal(s, d, *n, 1, 1);
}

size_t copy_len(Reader& r) { return r.one_in(4) ? r.size() : 1 + r.u16() % 4096; }

}  // namespace

void fam_copy1d(Reader& r) {
  const unsigned v = r.below(14);
  const bool pt = r.one_in(2);
  size_t n = copy_len(r);
  static const int kinds[][2] = {
      {CU_MEMORYTYPE_UNIFIED, CU_MEMORYTYPE_UNIFIED}, {CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_DEVICE},
      {CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST}, {CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_DEVICE}};
  // 0 unified, 1 HtoD, 2 DtoH, 3 DtoD / peer
  const unsigned shape = v < 8 ? v / 2 : v < 12 ? v - 8 : 3;
  CopySide s = side1d(r, kinds[shape][0]);
  CopySide d = side1d(r, kinds[shape][1]);
  if (!legal1d(s, d, &n)) return;
  const CUdeviceptr sp = s.m.p, dp = d.m.p;
  const void* sh = reinterpret_cast<const void*>(s.m.p);
  void* dh = reinterpret_cast<void*>(d.m.p);
  const bool sync = v < 8 || v == 12;
  if (sync) sem_release_all();
  CUstream st = sync ? nullptr : g_pool.pick_stream(r);
  switch (v) {
    case 0: case 1: pt ? API(cuMemcpy_ptds, dp, sp, n) : API(cuMemcpy, dp, sp, n); break;
    case 2: case 3: pt ? API(cuMemcpyHtoD_v2_ptds, dp, sh, n) : API(cuMemcpyHtoD_v2, dp, sh, n); break;
    case 4: case 5: pt ? API(cuMemcpyDtoH_v2_ptds, dh, sp, n) : API(cuMemcpyDtoH_v2, dh, sp, n); break;
    case 6: case 7: pt ? API(cuMemcpyDtoD_v2_ptds, dp, sp, n) : API(cuMemcpyDtoD_v2, dp, sp, n); break;
    case 8: pt ? API(cuMemcpyAsync_ptsz, dp, sp, n, st) : API(cuMemcpyAsync, dp, sp, n, st); break;
    case 9: pt ? API(cuMemcpyHtoDAsync_v2_ptsz, dp, sh, n, st) : API(cuMemcpyHtoDAsync_v2, dp, sh, n, st); break;
    case 10: pt ? API(cuMemcpyDtoHAsync_v2_ptsz, dh, sp, n, st) : API(cuMemcpyDtoHAsync_v2, dh, sp, n, st); break;
    case 11: pt ? API(cuMemcpyDtoDAsync_v2_ptsz, dp, sp, n, st) : API(cuMemcpyDtoDAsync_v2, dp, sp, n, st); break;
    case 12: {
      CUcontext dc = static_cast<CUcontext>(g_pool.pick(r, T::kCtx)), sc = static_cast<CUcontext>(g_pool.pick(r, T::kCtx));
      pt ? API(cuMemcpyPeer_ptds, dp, dc, sp, sc, n) : API(cuMemcpyPeer, dp, dc, sp, sc, n);
      break;
    }
    default: {
      CUcontext dc = static_cast<CUcontext>(g_pool.pick(r, T::kCtx)), sc = static_cast<CUcontext>(g_pool.pick(r, T::kCtx));
      pt ? API(cuMemcpyPeerAsync_ptsz, dp, dc, sp, sc, n, st) : API(cuMemcpyPeerAsync, dp, dc, sp, sc, n, st);
      break;
    }
  }
}

void fam_copy3d(Reader& r) {
  const unsigned v = r.below(14);
  const bool pt = r.one_in(2);
  const bool two_d = v < 6;
  CUDA_MEMCPY3D q;
  if (two_d) {
    size_t W = r.one_in(4) ? r.size() : 1 + r.u16() % 2048;
    size_t H = r.one_in(4) ? r.size() : r.u8() % 8;
    CopySide s, d;
    gen_side(r, &s, true);
    gen_side(r, &d, true);
    s.z = d.z = 0;  // what a 2D copy means
    s.height = d.height = 0;
    size_t D = 1;
    if (avoid("copy_wrap") && copy_wraps(s, d, W, H, 1)) tame_copy(&s, &d, &W, &H, &D);
    legalize_copy(&s, &d, W, H, 1);
    fill_memcpy3d(s, d, W, H, 1, &q);
  } else {
    gen_memcpy3d(r, &q);
  }
  CUDA_MEMCPY2D q2{};
  q2.srcXInBytes = q.srcXInBytes;
  q2.srcY = q.srcY;
  std::memcpy(&q2.srcMemoryType, &q.srcMemoryType, sizeof(int));
  q2.srcHost = q.srcHost;
  q2.srcDevice = q.srcDevice;
  q2.srcArray = q.srcArray;
  q2.srcPitch = q.srcPitch;
  q2.dstXInBytes = q.dstXInBytes;
  q2.dstY = q.dstY;
  std::memcpy(&q2.dstMemoryType, &q.dstMemoryType, sizeof(int));
  q2.dstHost = q.dstHost;
  q2.dstDevice = q.dstDevice;
  q2.dstArray = q.dstArray;
  q2.dstPitch = q.dstPitch;
  q2.WidthInBytes = q.WidthInBytes;
  q2.Height = q.Height;
  CUDA_MEMCPY3D_PEER qp{};
  qp.srcXInBytes = q.srcXInBytes;
  qp.srcY = q.srcY;
  qp.srcZ = q.srcZ;
  std::memcpy(&qp.srcMemoryType, &q.srcMemoryType, sizeof(int));
  qp.srcHost = q.srcHost;
  qp.srcDevice = q.srcDevice;
  qp.srcArray = q.srcArray;
  qp.srcContext = static_cast<CUcontext>(g_pool.pick(r, T::kCtx));
  qp.srcPitch = q.srcPitch;
  qp.srcHeight = q.srcHeight;
  qp.dstXInBytes = q.dstXInBytes;
  qp.dstY = q.dstY;
  qp.dstZ = q.dstZ;
  std::memcpy(&qp.dstMemoryType, &q.dstMemoryType, sizeof(int));
  qp.dstHost = q.dstHost;
  qp.dstDevice = q.dstDevice;
  qp.dstArray = q.dstArray;
  qp.dstContext = static_cast<CUcontext>(g_pool.pick(r, T::kCtx));
  qp.dstPitch = q.dstPitch;
  qp.dstHeight = q.dstHeight;
  qp.WidthInBytes = q.WidthInBytes;
  qp.Height = q.Height;
  qp.Depth = q.Depth;
  const bool null = r.one_in(32);
  trace_memcpy3d(q);
  const bool sync = v < 4 || v == 6 || v == 7 || v == 10 || v == 11;
  if (sync) sem_release_all();
  CUstream s = sync ? nullptr : g_pool.pick_stream(r);
  switch (v) {
    case 0: case 1: pt ? API(cuMemcpy2D_v2_ptds, null ? nullptr : &q2) : API(cuMemcpy2D_v2, null ? nullptr : &q2); break;
    case 2: case 3:
      pt ? API(cuMemcpy2DUnaligned_v2_ptds, null ? nullptr : &q2) : API(cuMemcpy2DUnaligned_v2, null ? nullptr : &q2);
      break;
    case 4: case 5:
      pt ? API(cuMemcpy2DAsync_v2_ptsz, null ? nullptr : &q2, s) : API(cuMemcpy2DAsync_v2, null ? nullptr : &q2, s);
      break;
    case 6: case 7: pt ? API(cuMemcpy3D_v2_ptds, null ? nullptr : &q) : API(cuMemcpy3D_v2, null ? nullptr : &q); break;
    case 8: case 9:
      pt ? API(cuMemcpy3DAsync_v2_ptsz, null ? nullptr : &q, s) : API(cuMemcpy3DAsync_v2, null ? nullptr : &q, s);
      break;
    case 10: case 11: pt ? API(cuMemcpy3DPeer_ptds, null ? nullptr : &qp) : API(cuMemcpy3DPeer, null ? nullptr : &qp); break;
    default:
      pt ? API(cuMemcpy3DPeerAsync_ptsz, null ? nullptr : &qp, s) : API(cuMemcpy3DPeerAsync, null ? nullptr : &qp, s);
      break;
  }
}

void fam_copybatch(Reader& r) {
  const bool pt = r.one_in(2);
  CUstream s = g_pool.pick_stream(r);
  const unsigned v = r.below(4);
  if (v < 2) {
    // cuMemcpy3DBatchAsync: operands are pointers (unified sides) or arrays.
    unsigned n = r.count(6);
    std::vector<CUDA_MEMCPY3D_BATCH_OP> ops(n);
    for (auto& op : ops) {
      std::memset(&op, 0, sizeof op);
      op.extent.width = r.one_in(4) ? r.size() : 1 + r.u8() % 64;
      op.extent.height = r.one_in(4) ? r.size() : 1 + r.u8() % 4;
      op.extent.depth = r.one_in(4) ? r.size() : 1 + r.u8() % 2;
      CopySide side[2];
      CUmemcpy3DOperand* o[2] = {&op.src, &op.dst};
      size_t elem[2] = {0, 0};
      for (int k = 0; k < 2; ++k) {
        int type = r.enum_of({CU_MEMCPY_OPERAND_TYPE_POINTER, CU_MEMCPY_OPERAND_TYPE_POINTER, CU_MEMCPY_OPERAND_TYPE_ARRAY});
        set_enum(&o[k]->type, type);
        if (type == CU_MEMCPY_OPERAND_TYPE_ARRAY) {
          side[k].mtype = CU_MEMORYTYPE_ARRAY;
          side[k].arr = static_cast<CUarray>(g_pool.pick(r, T::kArray, &side[k].array));
          o[k]->op.array.array = side[k].arr;
          o[k]->op.array.offset.x = r.one_in(4) ? r.size() : r.u8() % 8;
          o[k]->op.array.offset.y = r.one_in(8) ? r.size() : r.u8() % 4;
          o[k]->op.array.offset.z = r.one_in(8) ? r.size() : 0;
          std::lock_guard<std::mutex> g(g_pool.mu);
          if (side[k].array >= 0) elem[k] = g_pool.of(T::kArray)[side[k].array].elem;
        } else {
          side[k].mtype = CU_MEMORYTYPE_UNIFIED;
          side[k].m = pick_mem(r, Use::kUnified);
          if (r.one_in(32)) side[k].m = MemRef{};
          o[k]->op.ptr.ptr = side[k].m.p;
          o[k]->op.ptr.rowLength = r.one_in(2) ? 0 : r.one_in(4) ? r.size() : op.extent.width + r.u8() % 8;
          o[k]->op.ptr.layerHeight = r.one_in(2) ? 0 : r.one_in(4) ? r.size() : op.extent.height + r.u8() % 4;
          set_enum(&o[k]->op.ptr.locHint.type, r.u8() % 5);
          o[k]->op.ptr.locHint.id = r.u8() % 3;
        }
      }
      const size_t e = elem[0] ? elem[0] : elem[1] ? elem[1] : 1;
      const u128 W = u128{op.extent.width} * e;
      for (int k = 0; k < 2; ++k) {
        if (side[k].mtype == CU_MEMORYTYPE_ARRAY) {
          side[k].x = o[k]->op.array.offset.x * e;
          side[k].y = o[k]->op.array.offset.y;
          side[k].z = o[k]->op.array.offset.z;
          if (o[k]->op.array.offset.x && side[k].x / o[k]->op.array.offset.x != e) side[k].x = SIZE_MAX;
        } else {
          u128 pitch = u128{o[k]->op.ptr.rowLength ? o[k]->op.ptr.rowLength : op.extent.width} * e;
          side[k].pitch = pitch >> 64 ? SIZE_MAX : static_cast<size_t>(pitch);
          side[k].height = o[k]->op.ptr.layerHeight ? o[k]->op.ptr.layerHeight : op.extent.height;
        }
      }
      if (avoid("copy_wrap")) {
        bool big = W >> 64 || (u128{op.extent.width} * op.extent.height * op.extent.depth) >> 64;
        for (int k = 0; k < 2; ++k) big = big || side[k].pitch == SIZE_MAX || side[k].x == SIZE_MAX;
        size_t w = op.extent.width, h = op.extent.height, dd = op.extent.depth;
        if (big || copy_wraps(side[0], side[1], static_cast<size_t>(W), h, dd)) {
          // Refused for certain: the harness keeps away from wrapping sizes.
          for (int k = 0; k < 2; ++k)
            if (side[k].mtype == CU_MEMORYTYPE_UNIFIED) o[k]->op.ptr.ptr = 0;
          (void)w;
        }
      }
      const size_t Wb = W >> 64 ? SIZE_MAX : static_cast<size_t>(W);
      if (!copy_legal(side[0], side[1], Wb, op.extent.height, op.extent.depth)) {
        // A pointer the harness may not hand over for these bytes: NULL (refused).
        for (int k = 0; k < 2; ++k)
          if (side[k].mtype == CU_MEMORYTYPE_UNIFIED) o[k]->op.ptr.ptr = 0;
      }
      set_enum(&op.srcAccessOrder, r.enum_of({CU_MEMCPY_SRC_ACCESS_ORDER_STREAM, CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL,
                                              CU_MEMCPY_SRC_ACCESS_ORDER_ANY, CU_MEMCPY_SRC_ACCESS_ORDER_INVALID}));
      op.flags = r.flags(CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE);
    }
    size_t fail_idx;
    unsigned long long flags = r.one_in(8) ? r.u64() : 0;
    CUDA_MEMCPY3D_BATCH_OP* p = n ? ops.data() : nullptr;
    size_t count = n;
    if (r.one_in(16)) {
      p = nullptr;
      count = r.size();
    }
    trace_batch3d(p, std::min<size_t>(count, n));
    if (v == 0) {
      pt ? API(cuMemcpy3DBatchAsync_ptsz, count, p, maybe(r, &fail_idx, 4), flags, s)
         : API(cuMemcpy3DBatchAsync, count, p, maybe(r, &fail_idx, 4), flags, s);
    } else {
      pt ? API(cuMemcpy3DBatchAsync_v2_ptsz, count, p, flags, s) : API(cuMemcpy3DBatchAsync_v2, count, p, flags, s);
    }
    return;
  }
  // cuMemcpyBatchAsync: 1D unified copies.
  unsigned n = r.count(8);
  std::vector<CUdeviceptr> dsts(n), srcs(n);
  std::vector<size_t> sizes(n);
  for (unsigned i = 0; i < n; ++i) {
    CopySide sd = side1d(r, CU_MEMORYTYPE_UNIFIED), dd = side1d(r, CU_MEMORYTYPE_UNIFIED);
    sizes[i] = r.one_in(16) ? 0 : copy_len(r);
    if (!legal1d(sd, dd, &sizes[i])) sd.m.p = 0;  // refused
    srcs[i] = r.one_in(32) ? 0 : sd.m.p;
    dsts[i] = r.one_in(32) ? 0 : dd.m.p;
  }
  unsigned na = n ? 1 + r.below(n) : r.below(2);
  std::vector<CUmemcpyAttributes> attrs(na);
  std::vector<size_t> idxs(na);
  size_t next = 0;
  for (unsigned a = 0; a < na; ++a) {
    std::memset(&attrs[a], 0, sizeof attrs[a]);
    set_enum(&attrs[a].srcAccessOrder, r.enum_of({CU_MEMCPY_SRC_ACCESS_ORDER_STREAM, CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL,
                                                  CU_MEMCPY_SRC_ACCESS_ORDER_ANY, CU_MEMCPY_SRC_ACCESS_ORDER_INVALID}));
    set_enum(&attrs[a].srcLocHint.type, r.u8() % 5);
    set_enum(&attrs[a].dstLocHint.type, r.u8() % 5);
    attrs[a].flags = r.flags(CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE);
    idxs[a] = r.one_in(16) ? r.size() : next;
    next += 1 + r.below(2);
  }
  size_t num_attrs = na;
  if (r.one_in(16)) num_attrs = 0;
  auto nul = [&](auto* p) { return r.one_in(32) ? nullptr : p; };
  size_t fail_idx;
  auto* dp = n ? nul(dsts.data()) : nullptr;
  auto* sp = n ? nul(srcs.data()) : nullptr;
  auto* zp = n ? nul(sizes.data()) : nullptr;
  auto* ap = na ? nul(attrs.data()) : nullptr;
  auto* ip = na ? nul(idxs.data()) : nullptr;
  if (v == 2) {
    pt ? API(cuMemcpyBatchAsync_ptsz, dp, sp, zp, size_t{n}, ap, ip, num_attrs, maybe(r, &fail_idx, 4), s)
       : API(cuMemcpyBatchAsync, dp, sp, zp, size_t{n}, ap, ip, num_attrs, maybe(r, &fail_idx, 4), s);
  } else {
    pt ? API(cuMemcpyBatchAsync_v2_ptsz, dp, sp, zp, size_t{n}, ap, ip, num_attrs, s)
       : API(cuMemcpyBatchAsync_v2, dp, sp, zp, size_t{n}, ap, ip, num_attrs, s);
  }
}

void fam_memset(Reader& r) {
  const unsigned v = r.below(12);
  const bool pt = r.one_in(2);
  MemRef m = pick_mem(r, Use::kValidated);
  const CUdeviceptr d = m.p;
  size_t n = r.one_in(3) ? r.size() : r.u16() % 2048;
  size_t pitch = r.one_in(3) ? r.size() : (r.one_in(2) ? 64u << r.below(5) : r.u16());
  size_t h = r.one_in(4) ? r.size() : r.u8() % 16;
  if (avoid("memset_wrap") && (u128{n} * 4 >> 64 || (u128{h ? h - 1 : 0} * pitch + u128{n} * 4) >> 64)) {
    n %= 2048;
    pitch %= 8192;
    h %= 16;
  }
  const uint32_t val = r.u32();
  const bool sync = v < 6;
  if (sync) sem_release_all();
  CUstream s = sync ? nullptr : g_pool.pick_stream(r);
  const auto uc = static_cast<unsigned char>(val);
  const auto us = static_cast<unsigned short>(val);
  switch (v) {
    case 0: pt ? API(cuMemsetD8_v2_ptds, d, uc, n) : API(cuMemsetD8_v2, d, uc, n); break;
    case 1: pt ? API(cuMemsetD16_v2_ptds, d, us, n) : API(cuMemsetD16_v2, d, us, n); break;
    case 2: pt ? API(cuMemsetD32_v2_ptds, d, val, n) : API(cuMemsetD32_v2, d, val, n); break;
    case 3: pt ? API(cuMemsetD2D8_v2_ptds, d, pitch, uc, n, h) : API(cuMemsetD2D8_v2, d, pitch, uc, n, h); break;
    case 4: pt ? API(cuMemsetD2D16_v2_ptds, d, pitch, us, n, h) : API(cuMemsetD2D16_v2, d, pitch, us, n, h); break;
    case 5: pt ? API(cuMemsetD2D32_v2_ptds, d, pitch, val, n, h) : API(cuMemsetD2D32_v2, d, pitch, val, n, h); break;
    case 6: pt ? API(cuMemsetD8Async_ptsz, d, uc, n, s) : API(cuMemsetD8Async, d, uc, n, s); break;
    case 7: pt ? API(cuMemsetD16Async_ptsz, d, us, n, s) : API(cuMemsetD16Async, d, us, n, s); break;
    case 8: pt ? API(cuMemsetD32Async_ptsz, d, val, n, s) : API(cuMemsetD32Async, d, val, n, s); break;
    case 9: pt ? API(cuMemsetD2D8Async_ptsz, d, pitch, uc, n, h, s) : API(cuMemsetD2D8Async, d, pitch, uc, n, h, s); break;
    case 10:
      pt ? API(cuMemsetD2D16Async_ptsz, d, pitch, us, n, h, s) : API(cuMemsetD2D16Async, d, pitch, us, n, h, s);
      break;
    default:
      pt ? API(cuMemsetD2D32Async_ptsz, d, pitch, val, n, h, s) : API(cuMemsetD2D32Async, d, pitch, val, n, h, s);
      break;
  }
}

// ------------------------------------------------------------ checked copies

namespace {

constexpr size_t kChk = 8192;
enum Kind { kPageable, kPinned, kDevice, kManaged, kKinds };
const char* kKindName[] = {"pageable", "pinned", "device", "managed"};

bool live_priv(int i) {
  std::lock_guard<std::mutex> g(g_pool.mu);
  return i >= 0 && static_cast<size_t>(i) < g_pool.allocs.size() && g_pool.allocs[i].st == St::kLive;
}

// The thread's private buffers (made on first use in the current context).
bool ensure_private() {
  Thread& t = me();
  if (!live_priv(t.chk_dev)) {
    CUdeviceptr p;
    if (fail(API(cuMemAlloc_v2, &p, kChk))) return false;
    t.chk_dev = new_alloc(p, kChk, Mem::kDevice, g_pool.current_ctx_index(), true);
  }
  if (!live_priv(t.chk_pinned)) {
    void* p;
    if (fail(API(cuMemAllocHost_v2, &p, kChk))) return false;
    t.chk_pinned = new_alloc(reinterpret_cast<uintptr_t>(p), kChk, Mem::kHost, g_pool.current_ctx_index(), true);
  }
  if (!live_priv(t.chk_managed)) {
    CUdeviceptr p;
    if (fail(API(cuMemAllocManaged, &p, kChk, static_cast<unsigned>(CU_MEM_ATTACH_GLOBAL)))) return false;
    t.chk_managed = new_alloc(p, kChk, Mem::kManaged, g_pool.current_ctx_index(), true);
  }
  return true;
}

uint8_t* kind_ptr(Kind k) {
  Thread& t = me();
  switch (k) {
    case kPageable: return t.chk_host;
    case kPinned: return reinterpret_cast<uint8_t*>(alloc_ptr(t.chk_pinned));
    case kDevice: return reinterpret_cast<uint8_t*>(alloc_ptr(t.chk_dev));
    default: return reinterpret_cast<uint8_t*>(alloc_ptr(t.chk_managed));
  }
}

bool write_kind(Kind k, const uint8_t* bytes) {
  if (k == kDevice) return !fail(API(cuMemcpyHtoD_v2, reinterpret_cast<CUdeviceptr>(kind_ptr(k)), bytes, kChk));
  std::memcpy(kind_ptr(k), bytes, kChk);
  return true;
}

bool read_kind(Kind k, uint8_t* bytes) {
  if (k == kDevice) return !fail(API(cuMemcpyDtoH_v2, bytes, reinterpret_cast<CUdeviceptr>(kind_ptr(k)), kChk));
  std::memcpy(bytes, kind_ptr(k), kChk);
  return true;
}

// A stream for an async variant whose work is known to run (not captured).
CUstream check_stream(Reader& r, bool pt, bool* ok) {
  *ok = false;
  CUstream s;
  switch (r.below(5)) {
    case 0: s = nullptr; break;
    case 1: s = CU_STREAM_LEGACY; break;
    case 2: s = CU_STREAM_PER_THREAD; break;
    case 3: {
      Thread& t = me();
      CUstream cur;
      {
        std::lock_guard<std::mutex> g(g_pool.mu);
        cur = t.chk_stream;
      }
      if (!cur) {
        CUstream ns;
        if (fail(API(cuStreamCreate, &ns, static_cast<unsigned>(CU_STREAM_NON_BLOCKING)))) return nullptr;
        int ci = g_pool.current_ctx_index();
        std::lock_guard<std::mutex> g(g_pool.mu);  // end_captures reads it from the other thread
        t.chk_stream = ns;
        t.chk_stream_ctx = ci;
      }
      s = t.chk_stream;
      break;
    }
    default: {
      if (g_pool.two_threads) return nullptr;
      int i = g_pool.pick_live(r, T::kStream, false);
      if (i < 0) return nullptr;
      s = static_cast<CUstream>(g_pool.h(T::kStream, i));
      break;
    }
  }
  *ok = capture_status(s, pt) == CU_STREAM_CAPTURE_STATUS_NONE;
  return s;
}

// Waits for a check's async copy. Synchronizing is an unsafe call while a
// capture runs elsewhere (driver 580 refuses it in GLOBAL mode), so it is
// made in RELAXED mode: the copy must be done before the buffers are reused.
bool sync_stream(CUstream s, bool pt) {
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  API(cuThreadExchangeStreamCaptureMode, &mode);
  const bool ok = !fail(pt ? API(cuStreamSynchronize_ptsz, s) : API(cuStreamSynchronize, s));
  API(cuThreadExchangeStreamCaptureMode, &mode);
  return ok;
}

struct Images {
  uint8_t before[kKinds][kChk];
  uint8_t after[kKinds][kChk];
};

void compare(const char* what, Kind k, const uint8_t* want, const uint8_t* got, const char* detail) {
  for (size_t i = 0; i < kChk; ++i)
    if (want[i] != got[i])
      violated(what, "%s: %s buffer byte %zu is %#x, expected %#x", detail, kKindName[k], i, got[i], want[i]);
}

}  // namespace

void fam_checked_copy(Reader& r) {
  if (!ensure_private()) return;
  static thread_local Images img;
  const unsigned v = r.below(12);  // 0-3 1D sync, 4-7 1D async, 8-9 2D sync, 10-11 2D async
  const bool pt = r.one_in(2);
  const unsigned shape = r.below(5);  // 0 HtoD, 1 DtoH, 2 DtoD, 3 unified, 4 peer
  Kind sk, dk;
  auto devlike = [&] { return r.one_in(2) ? kDevice : kManaged; };
  auto hostlike = [&] { return r.one_in(2) ? kPageable : kPinned; };
  switch (shape) {
    case 0: sk = hostlike(); dk = devlike(); break;
    case 1: sk = devlike(); dk = hostlike(); break;
    case 3: sk = static_cast<Kind>(r.below(4)); dk = static_cast<Kind>(r.below(4)); break;
    default: sk = devlike(); dk = devlike(); break;
  }
  const bool two_d = v >= 8;
  const bool async = (v >= 4 && v < 8) || v >= 10;
  // Geometry: 1D n bytes, or H rows of W bytes with pitches; same buffer: halves.
  const bool same = sk == dk;
  const size_t span = same ? kChk / 2 : kChk;
  size_t W = 1 + r.u16() % (two_d ? 512 : 4096), H = two_d ? 1 + r.u8() % 8 : 1;
  size_t sp = two_d ? W + r.u8() % 64 : W, dp = two_d ? W + r.u8() % 64 : W;
  if (two_d && (H - 1) * std::max(sp, dp) + W > span) H = 1;
  size_t s_end = (H - 1) * sp + W, d_end = (H - 1) * dp + W;
  size_t so = r.u16() % (span - s_end + 1), doff = r.u16() % (span - d_end + 1);
  if (same) doff += kChk / 2;
  bool ok;
  CUstream s = async ? check_stream(r, pt, &ok) : nullptr;
  if (async && !ok) return;
  sem_release_all();
  // Known contents before.
  const uint8_t seed = r.u8();
  for (size_t i = 0; i < kChk; ++i) {
    img.before[sk][i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
    if (!same) img.before[dk][i] = static_cast<uint8_t>(~(seed + i * 13));
  }
  if (!write_kind(sk, img.before[sk]) || (!same && !write_kind(dk, img.before[dk]))) return;
  uint8_t* sb = kind_ptr(sk) + so;
  uint8_t* db = kind_ptr(dk) + doff;
  const auto S = reinterpret_cast<CUdeviceptr>(sb), D = reinterpret_cast<CUdeviceptr>(db);
  CUresult res;
  char detail[160];
  if (!two_d) {
    const size_t n = W;
    if (shape == 4) {
      CUcontext c = static_cast<CUcontext>(g_pool.h(T::kCtx, 0));
      res = async ? (pt ? API(cuMemcpyPeerAsync_ptsz, D, c, S, c, n, s) : API(cuMemcpyPeerAsync, D, c, S, c, n, s))
                  : (pt ? API(cuMemcpyPeer_ptds, D, c, S, c, n) : API(cuMemcpyPeer, D, c, S, c, n));
    } else if (shape == 0) {
      res = async ? (pt ? API(cuMemcpyHtoDAsync_v2_ptsz, D, sb, n, s) : API(cuMemcpyHtoDAsync_v2, D, sb, n, s))
                  : (pt ? API(cuMemcpyHtoD_v2_ptds, D, sb, n) : API(cuMemcpyHtoD_v2, D, sb, n));
    } else if (shape == 1) {
      res = async ? (pt ? API(cuMemcpyDtoHAsync_v2_ptsz, db, S, n, s) : API(cuMemcpyDtoHAsync_v2, db, S, n, s))
                  : (pt ? API(cuMemcpyDtoH_v2_ptds, db, S, n) : API(cuMemcpyDtoH_v2, db, S, n));
    } else if (shape == 2) {
      res = async ? (pt ? API(cuMemcpyDtoDAsync_v2_ptsz, D, S, n, s) : API(cuMemcpyDtoDAsync_v2, D, S, n, s))
                  : (pt ? API(cuMemcpyDtoD_v2_ptds, D, S, n) : API(cuMemcpyDtoD_v2, D, S, n));
    } else {
      res = async ? (pt ? API(cuMemcpyAsync_ptsz, D, S, n, s) : API(cuMemcpyAsync, D, S, n, s))
                  : (pt ? API(cuMemcpy_ptds, D, S, n) : API(cuMemcpy, D, S, n));
    }
    std::snprintf(detail, sizeof detail, "1D %s copy of %zu bytes, %s+%zu -> %s+%zu (variant %u%s)",
                  async ? "async" : "sync", n, kKindName[sk], so, kKindName[dk], doff, shape, pt ? " per-thread" : "");
  } else {
    CUDA_MEMCPY2D q{};
    auto type_of = [&](Kind k, bool as_device) {
      if (shape == 3) return CU_MEMORYTYPE_UNIFIED;
      return as_device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    };
    q.srcMemoryType = type_of(sk, sk == kDevice || sk == kManaged);
    q.dstMemoryType = type_of(dk, dk == kDevice || dk == kManaged);
    q.srcHost = sb;
    q.srcDevice = S;
    q.srcPitch = sp;
    q.dstHost = db;
    q.dstDevice = D;
    q.dstPitch = dp;
    q.WidthInBytes = W;
    q.Height = H;
    res = async ? (pt ? API(cuMemcpy2DAsync_v2_ptsz, &q, s) : API(cuMemcpy2DAsync_v2, &q, s))
                : (pt ? API(cuMemcpy2D_v2_ptds, &q) : API(cuMemcpy2D_v2, &q));
    std::snprintf(detail, sizeof detail, "2D %s copy of %zu x %zu bytes, %s+%zu pitch %zu -> %s+%zu pitch %zu",
                  async ? "async" : "sync", W, H, kKindName[sk], so, sp, kKindName[dk], doff, dp);
  }
  if (fail(res)) return;
  if (async && !sync_stream(s, pt)) return;
  // The expected images.
  std::memcpy(img.after[sk], img.before[sk], kChk);
  if (!same) std::memcpy(img.after[dk], img.before[dk], kChk);
  for (size_t y = 0; y < H; ++y) std::memcpy(img.after[dk] + doff + y * dp, img.before[sk] + so + y * sp, W);
  static thread_local uint8_t got[kChk];
  if (!read_kind(dk, got)) return;
  compare("a successful copy did not produce the right bytes", dk, img.after[dk], got, detail);
  if (!same) {
    if (!read_kind(sk, got)) return;
    compare("a successful copy changed its source", sk, img.after[sk], got, detail);
  }
}

void fam_checked_memset(Reader& r) {
  if (!ensure_private()) return;
  static thread_local uint8_t want[kChk], got[kChk];
  const Kind k = static_cast<Kind>(1 + r.below(3));  // pinned, device, managed
  const unsigned elem = 1u << r.below(3);
  const bool two_d = r.one_in(2), async = r.one_in(2), pt = r.one_in(2);
  size_t W = 1 + r.u16() % (two_d ? 256 : 2048), H = two_d ? 1 + r.u8() % 8 : 1;
  size_t pitch = two_d ? W * elem + elem * (r.u8() % 16) : W * elem;
  if ((H - 1) * pitch + W * elem > kChk) H = 1;
  const size_t end = (H - 1) * pitch + W * elem;
  const size_t off = (r.u16() % ((kChk - end) / elem + 1)) * elem;
  const uint32_t val = r.u32();
  bool ok;
  CUstream s = async ? check_stream(r, pt, &ok) : nullptr;
  if (async && !ok) return;
  sem_release_all();
  for (size_t i = 0; i < kChk; ++i) want[i] = static_cast<uint8_t>(i * 31 + val);
  if (!write_kind(k, want)) return;
  const auto D = reinterpret_cast<CUdeviceptr>(kind_ptr(k) + off);
  const auto uc = static_cast<unsigned char>(val);
  const auto us = static_cast<unsigned short>(val);
  CUresult res;
  if (!two_d) {
    switch (elem) {
      case 1: res = async ? (pt ? API(cuMemsetD8Async_ptsz, D, uc, W, s) : API(cuMemsetD8Async, D, uc, W, s))
                          : (pt ? API(cuMemsetD8_v2_ptds, D, uc, W) : API(cuMemsetD8_v2, D, uc, W)); break;
      case 2: res = async ? (pt ? API(cuMemsetD16Async_ptsz, D, us, W, s) : API(cuMemsetD16Async, D, us, W, s))
                          : (pt ? API(cuMemsetD16_v2_ptds, D, us, W) : API(cuMemsetD16_v2, D, us, W)); break;
      default: res = async ? (pt ? API(cuMemsetD32Async_ptsz, D, val, W, s) : API(cuMemsetD32Async, D, val, W, s))
                           : (pt ? API(cuMemsetD32_v2_ptds, D, val, W) : API(cuMemsetD32_v2, D, val, W)); break;
    }
  } else {
    switch (elem) {
      case 1: res = async ? (pt ? API(cuMemsetD2D8Async_ptsz, D, pitch, uc, W, H, s) : API(cuMemsetD2D8Async, D, pitch, uc, W, H, s))
                          : (pt ? API(cuMemsetD2D8_v2_ptds, D, pitch, uc, W, H) : API(cuMemsetD2D8_v2, D, pitch, uc, W, H)); break;
      case 2: res = async ? (pt ? API(cuMemsetD2D16Async_ptsz, D, pitch, us, W, H, s) : API(cuMemsetD2D16Async, D, pitch, us, W, H, s))
                          : (pt ? API(cuMemsetD2D16_v2_ptds, D, pitch, us, W, H) : API(cuMemsetD2D16_v2, D, pitch, us, W, H)); break;
      default: res = async ? (pt ? API(cuMemsetD2D32Async_ptsz, D, pitch, val, W, H, s) : API(cuMemsetD2D32Async, D, pitch, val, W, H, s))
                           : (pt ? API(cuMemsetD2D32_v2_ptds, D, pitch, val, W, H) : API(cuMemsetD2D32_v2, D, pitch, val, W, H)); break;
    }
  }
  if (fail(res)) return;
  if (async && !sync_stream(s, pt)) return;
  for (size_t y = 0; y < H; ++y)
    for (size_t x = 0; x < W; ++x) std::memcpy(want + off + y * pitch + x * elem, &val, elem);
  if (!read_kind(k, got)) return;
  char detail[128];
  std::snprintf(detail, sizeof detail, "%s %zu-bit memset of %zu x %zu at +%zu pitch %zu value %#x",
                async ? "async" : "sync", size_t{elem} * 8, W, H, off, pitch, val);
  compare("a successful memset did not produce the right bytes", k, want, got, detail);
}

}  // namespace fz
