// Call families: allocation, frees, pointer queries and CUDA arrays.
#include "harness.h"

#include <algorithm>

namespace fz {

int new_alloc(uintptr_t p, size_t size, Mem kind, int ctx, bool priv, int hostbuf) {
  Alloc a;
  a.p = p;
  a.size = size;
  a.kind = kind;
  a.ctx = ctx;
  a.priv = priv;
  a.hostbuf = hostbuf;
  return g_pool.add_alloc(a);
}

uintptr_t alloc_ptr(int i) {
  std::lock_guard<std::mutex> g(g_pool.mu);
  return g_pool.allocs[i].p;
}

namespace {


// A live allocation of one of `kinds` of this thread, or -1.
int pick_alloc(Reader& r, std::initializer_list<Mem> kinds) {
  uint8_t k = r.u8();
  std::lock_guard<std::mutex> g(g_pool.mu);
  std::vector<int> c;
  for (size_t i = 0; i < g_pool.allocs.size(); ++i) {
    const Alloc& a = g_pool.allocs[i];
    if (a.st != St::kLive || a.priv || (g_pool.two_threads && a.thread != thread_index())) continue;
    if (std::find(kinds.begin(), kinds.end(), a.kind) != kinds.end()) c.push_back(static_cast<int>(i));
  }
  return c.empty() ? -1 : c[k % c.size()];
}

// The pointer a free call gets: mostly a live allocation of the kinds, else anything.
uintptr_t free_target(Reader& r, std::initializer_list<Mem> kinds, int* idx) {
  *idx = r.one_in(8) ? -1 : pick_alloc(r, kinds);
  if (*idx >= 0) return alloc_ptr(*idx);
  MemRef m = pick_mem(r, Use::kValidated);
  // With two threads, a stale or forged pointer may be the other thread's
  // allocation by now (freed addresses are reused): freeing it would be
  // the program's race, so only a host buffer (never an allocation) stands in.
  if (g_pool.two_threads) return m.src == MemRef::kHostBuf ? m.p : 0;
  return m.p;
}

// Allocation `idx` (if any) is recorded dead before its free is called, so
// that the other thread, whose next allocation may take the address the
// moment the free returns, never finds it still live; freed() brings it back
// if the free fails. True when this call marked it.
bool freeing(int idx) {
  if (idx < 0) return false;
  std::lock_guard<std::mutex> g(g_pool.mu);
  if (g_pool.allocs[idx].st != St::kLive) return false;
  g_pool.allocs[idx].st = St::kDead;
  return true;
}

void freed(int idx, uintptr_t p, CUresult res, const char* what, bool null_ok, bool marked) {
  if (idx >= 0) {
    std::lock_guard<std::mutex> g(g_pool.mu);
    if (res != CUDA_SUCCESS && marked) g_pool.allocs[idx].st = St::kLive;
    return;
  }
  if (res != CUDA_SUCCESS) return;
  if (p == 0 && null_ok) return;
  std::lock_guard<std::mutex> g(g_pool.mu);
  for (auto& a : g_pool.allocs)
    if (a.st == St::kLive && a.p == p) {
      a.st = St::kDead;
      return;
    }
  violated("a free succeeded on a pointer that is no live allocation's base", "%s(%#llx)", what,
           static_cast<unsigned long long>(p));
}

size_t fmt_bytes(int f) {
  switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: case CU_AD_FORMAT_UNORM_INT8X1:
    case CU_AD_FORMAT_SNORM_INT8X1:
      return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF:
    case CU_AD_FORMAT_UNORM_INT16X1: case CU_AD_FORMAT_SNORM_INT16X1:
      return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT:
      return 4;
    default:
      return 0;
  }
}

}  // namespace

// ------------------------------------------------------------- allocation

void fam_alloc(Reader& r) {
  const bool pt = r.one_in(2);
  switch (r.below(9)) {
    case 0: case 1: {
      CUdeviceptr p = 0;
      size_t n = alloc_size(r);
      if (!fail(API(cuMemAlloc_v2, maybe(r, &p, 32), n)))
        new_alloc(p, n, Mem::kDevice, g_pool.current_ctx_index());
      break;
    }
    case 2: {
      CUdeviceptr p = 0;
      size_t pitch = 0;
      size_t w = r.size(), h = r.one_in(2) ? 1 + r.u8() % 32 : r.size();
      unsigned elem = static_cast<unsigned>(r.enum_of({4, 8, 16, 1, 2, 0, 32}));
      // Real sizes stay small; products that wrap stay (the library must refuse them).
      u128 rows = (u128{w} + 511) / 512 * 512;
      u128 total = rows * h;  // w, h < 2^64: no u128 overflow
      if (total > kMaxRealAlloc && (total <= g_total_mem || avoid("pitch_wrap"))) {
        w %= 4096;
        h = 1 + h % 64;
        rows = (u128{w} + 511) / 512 * 512;
        total = rows * h;
      }
      if (fail(API(cuMemAllocPitch_v2, maybe(r, &p, 32), maybe(r, &pitch, 32), w, h, elem))) break;
      CUdeviceptr base = 0;
      size_t size = 0;
      if (fail(API(cuMemGetAddressRange_v2, &base, &size, p)) || base != p)
        violated("cuMemAllocPitch's allocation is not one the library knows", "%#llx", static_cast<unsigned long long>(p));
      if (pitch < w || u128{pitch} * h > size)
        violated("cuMemAllocPitch returned a pitch and height that do not fit its allocation",
                 "width %zu height %zu: pitch %zu, allocation %zu bytes (pitch*height %s 2^64)", w, h, pitch, size,
                 u128{pitch} * h >> 64 ? ">=" : "<");
      new_alloc(p, size, Mem::kPitch, g_pool.current_ctx_index());
      break;
    }
    case 3: {
      void* p = nullptr;
      size_t n = alloc_size(r);
      CUresult res = r.one_in(2) ? API(cuMemAllocHost_v2, maybe(r, &p, 32), n)
                                 : API(cuMemHostAlloc, maybe(r, &p, 32), n, r.flags(7));
      if (!fail(res)) new_alloc(reinterpret_cast<uintptr_t>(p), n, Mem::kHost, g_pool.current_ctx_index());
      break;
    }
    case 4: {
      CUdeviceptr p = 0;
      size_t n = alloc_size(r);
      unsigned f = static_cast<unsigned>(r.enum_of({CU_MEM_ATTACH_GLOBAL, CU_MEM_ATTACH_HOST, CU_MEM_ATTACH_SINGLE}));
      if (!fail(API(cuMemAllocManaged, maybe(r, &p, 32), n, f)))
        new_alloc(p, n, Mem::kManaged, g_pool.current_ctx_index());
      break;
    }
    case 5: {
      // Registers part of a host buffer; a size beyond any user address
      // space must be refused.
      unsigned k = r.below(kHostBufs);
      size_t off = r.one_in(2) ? 0 : r.u16() % kHostBufSize;
      void* p = me().hostbuf[k] + off;
      size_t room = kHostBufSize - off;
      size_t n;
      switch (r.below(8)) {
        case 0: n = 0; break;
        case 1: n = room; break;
        case 2: n = avoid("hostreg_huge") ? room : (uint64_t{1} << 47) + r.u8(); break;
        case 3: n = avoid("hostreg_huge") ? room : UINT64_MAX - r.u8(); break;
        case 4: n = avoid("hostreg_huge") ? room : (uint64_t{1} << 63) + r.u8(); break;
        default: n = 1 + r.u16() % room; break;
      }
      if (r.one_in(16)) p = nullptr;
      if (avoid("hostreg_overlap")) {
        // Only ranges that overlap no live registration.
        std::lock_guard<std::mutex> g(g_pool.mu);
        auto lo = reinterpret_cast<uintptr_t>(p);
        for (const Alloc& a : g_pool.allocs)
          if (a.st == St::kLive && a.kind == Mem::kRegistered && lo < a.p + a.size && a.p < lo + (n ? n : 1)) return;
      }
      unsigned f = r.flags(0xf);
      CUresult res = r.one_in(2) ? API(cuMemHostRegister, p, n, f) : API(cuMemHostRegister_v2, p, n, f);
      if (fail(res)) break;
      if (n > room)
        violated("cuMemHostRegister accepted a range beyond the user address space", "%p + %zu bytes", p, n);
      new_alloc(reinterpret_cast<uintptr_t>(p), n, Mem::kRegistered, g_pool.current_ctx_index(), false,
                static_cast<int>(k));
      break;
    }
    case 6: case 7: {
      int si = -1;
      CUstream s = g_pool.pick_stream(r, &si);
      // With two threads, only this thread's per-thread stream: whether a
      // shared stream captures may change between the look and the call.
      if (g_pool.two_threads) {
        s = CU_STREAM_PER_THREAD;
        si = -1;
      }
      CUdeviceptr p = 0;
      size_t n = alloc_size(r);
      // Made during a capture, the memory is the captured graph's (an
      // allocation node's): it goes with that graph, which the input may
      // discard, so it is not recorded as the input's own.
      const bool graph_memory = capture_status(s, pt) != 0;
      CUresult res;
      if (r.one_in(2)) {
        res = pt ? API(cuMemAllocAsync_ptsz, maybe(r, &p, 32), n, s) : API(cuMemAllocAsync, maybe(r, &p, 32), n, s);
      } else {
        CUmemoryPool mp = static_cast<CUmemoryPool>(g_pool.pick(r, T::kMemPool));
        res = pt ? API(cuMemAllocFromPoolAsync_ptsz, maybe(r, &p, 32), n, mp, s)
                 : API(cuMemAllocFromPoolAsync, maybe(r, &p, 32), n, mp, s);
      }
      if (!fail(res) && p && !graph_memory) new_alloc(p, n, Mem::kAsync, ctx_of_stream(si));
      break;
    }
    default: {
      // Pitch allocations of the common shapes.
      CUdeviceptr p = 0;
      size_t pitch = 0;
      size_t w = 1 + r.u16() % 2048, h = 1 + r.u8() % 16;
      if (fail(API(cuMemAllocPitch_v2, &p, &pitch, w, h, 4u))) break;
      new_alloc(p, pitch * h, Mem::kPitch, g_pool.current_ctx_index());
      break;
    }
  }
}

void fam_free(Reader& r) {
  const bool pt = r.one_in(2);
  int idx;
  switch (r.below(5)) {
    case 0: case 1: {
      uintptr_t p = free_target(r, {Mem::kDevice, Mem::kPitch, Mem::kManaged, Mem::kAsync}, &idx);
      sem_release_all();  // cuMemFree synchronizes
      const bool marked = freeing(idx);
      freed(idx, p, API(cuMemFree_v2, static_cast<CUdeviceptr>(p)), "cuMemFree", true, marked);
      break;
    }
    case 2: {
      uintptr_t p = free_target(r, {Mem::kHost}, &idx);
      sem_release_all();
      const bool marked = freeing(idx);
      freed(idx, p, API(cuMemFreeHost, reinterpret_cast<void*>(p)), "cuMemFreeHost", false, marked);
      break;
    }
    case 3: {
      uintptr_t p = free_target(r, {Mem::kRegistered}, &idx);
      const bool marked = freeing(idx);
      freed(idx, p, API(cuMemHostUnregister, reinterpret_cast<void*>(p)), "cuMemHostUnregister", false, marked);
      break;
    }
    default: {
      uintptr_t p = free_target(r, {Mem::kAsync, Mem::kDevice}, &idx);
      CUstream s = g_pool.pick_stream(r);
      const bool marked = freeing(idx);
      CUresult res = pt ? API(cuMemFreeAsync_ptsz, static_cast<CUdeviceptr>(p), s)
                        : API(cuMemFreeAsync, static_cast<CUdeviceptr>(p), s);
      freed(idx, p, res, "cuMemFreeAsync", true, marked);
      break;
    }
  }
}

void fam_memquery(Reader& r) {
  MemRef m = pick_mem(r, Use::kValidated);
  const CUdeviceptr p = m.p;
  switch (r.below(7)) {
    case 0: {
      CUdeviceptr d;
      API(cuMemHostGetDevicePointer_v2, maybe(r, &d), reinterpret_cast<void*>(p), r.one_in(8) ? r.u32() : 0u);
      break;
    }
    case 1: {
      unsigned f;
      API(cuMemHostGetFlags, maybe(r, &f), reinterpret_cast<void*>(p));
      break;
    }
    case 2: {
      CUdeviceptr base = 0;
      size_t size = 0;
      CUresult res = API(cuMemGetAddressRange_v2, maybe(r, &base, 4), maybe(r, &size, 4), p);
      if (res == CUDA_SUCCESS && m.src == MemRef::kAlloc && base && size) {
        std::lock_guard<std::mutex> g(g_pool.mu);
        int i = g_pool.find_alloc(p);
        if (i >= 0 && g_pool.allocs[i].kind != Mem::kRegistered && g_pool.allocs[i].kind != Mem::kPitch &&
            (g_pool.allocs[i].p != base || g_pool.allocs[i].size != size))
          violated("cuMemGetAddressRange reports another range than was allocated",
                   "%#llx in a%d [%#llx, +%zu): got [%#llx, +%zu)", static_cast<unsigned long long>(p), i,
                   static_cast<unsigned long long>(g_pool.allocs[i].p), g_pool.allocs[i].size,
                   static_cast<unsigned long long>(base), size);
      }
      break;
    }
    case 3: {
      size_t f, t;
      API(cuMemGetInfo_v2, maybe(r, &f, 4), maybe(r, &t, 4));
      break;
    }
    case 4: {
      uint64_t data[2];
      API(cuPointerGetAttribute, maybe(r, static_cast<void*>(data)),
          as_enum<CUpointer_attribute>(r.enum_range(1, CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID + 1)), p);
      break;
    }
    case 5: {
      unsigned n = r.count(8);
      std::vector<CUpointer_attribute> attrs(n);
      std::vector<uint64_t> slots(2 * n + 2);
      std::vector<void*> data(n);
      for (unsigned i = 0; i < n; ++i) {
        set_enum(&attrs[i], r.enum_range(1, CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID + 1));
        data[i] = r.one_in(16) ? nullptr : &slots[2 * i];
      }
      API(cuPointerGetAttributes, n, n && !r.one_in(16) ? attrs.data() : nullptr,
          n && !r.one_in(16) ? data.data() : nullptr, p);
      break;
    }
    default: {
      unsigned v = r.u8() % 2;
      API(cuPointerSetAttribute, static_cast<const void*>(maybe(r, &v)),
          as_enum<CUpointer_attribute>(r.enum_range(1, CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID + 1)), p);
      break;
    }
  }
}

// ------------------------------------------------------------------ arrays

void fam_array(Reader& r) {
  switch (r.below(6)) {
    case 0: case 1: case 2: {
      const bool three = r.u8() % 3 != 0;
      CUDA_ARRAY3D_DESCRIPTOR d{};
      auto dim = [&] { return r.one_in(4) ? r.size() : static_cast<uint64_t>(r.u8() % 64); };
      d.Width = dim();
      d.Height = dim();
      d.Depth = three ? (r.one_in(2) ? 0 : dim()) : 0;
      int fmt = r.enum_of({CU_AD_FORMAT_UNSIGNED_INT8, CU_AD_FORMAT_UNSIGNED_INT16, CU_AD_FORMAT_UNSIGNED_INT32,
                           CU_AD_FORMAT_SIGNED_INT8, CU_AD_FORMAT_SIGNED_INT16, CU_AD_FORMAT_SIGNED_INT32,
                           CU_AD_FORMAT_HALF, CU_AD_FORMAT_FLOAT, CU_AD_FORMAT_UNORM_INT8X1, CU_AD_FORMAT_NV12,
                           CU_AD_FORMAT_BC1_UNORM});
      set_enum(&d.Format, fmt);
      d.NumChannels = static_cast<unsigned>(r.enum_of({1, 2, 4, 3, 0}));
      d.Flags = three ? r.flags(0x2f) : 0;
      const size_t elem = fmt_bytes(fmt) * d.NumChannels;
      // The library allocates width x height x depth elements: keep real
      // arrays small, but let through sizes whose product wraps to a small one.
      auto exact = [&] {
        u128 e = u128{d.Width} * elem;
        u128 rows = d.Height ? d.Height : 1, layers = d.Depth ? d.Depth : 1;
        if (e && rows > (~u128{0}) / e) return ~u128{0};
        e *= rows;
        if (e && layers > (~u128{0}) / e) return ~u128{0};
        return e * layers;
      };
      auto wrapped = [&] {
        return static_cast<uint64_t>(d.Width) * elem * (d.Height ? d.Height : 1) * (d.Depth ? d.Depth : 1);
      };
      const u128 limit = 16u << 20;
      if (exact() > limit && (avoid("array_wrap") || !(exact() >> 64 && wrapped() <= limit))) {
        d.Width = 1 + d.Width % 512;
        d.Height %= 64;
        d.Depth %= 16;
      }
      CUarray a = nullptr;
      CUresult res;
      if (three) {
        res = API(cuArray3DCreate_v2, maybe(r, &a, 32), maybe(r, &d, 32));
      } else {
        CUDA_ARRAY_DESCRIPTOR d2{d.Width, d.Height, {}, d.NumChannels};
        std::memcpy(&d2.Format, &d.Format, sizeof(int));
        res = API(cuArrayCreate_v2, maybe(r, &a, 32), maybe(r, &d2, 32));
      }
      if (fail(res)) break;
      if (exact() >> 64)
        violated("a CUDA array was created whose size does not fit in size_t",
                 "%zu x %zu x %zu elements of %zu bytes", d.Width, d.Height, d.Depth, elem);
      int i = g_pool.add(T::kArray, a, g_pool.current_ctx_index());
      {
        std::lock_guard<std::mutex> g(g_pool.mu);
        Obj& o = g_pool.of(T::kArray)[i];
        o.row_bytes = d.Width * elem;
        o.rows = d.Height ? d.Height : 1;
        o.layers = d.Depth ? d.Depth : 1;
        o.elem = elem;
      }
      CUDA_ARRAY3D_DESCRIPTOR back{};
      if (!fail(API(cuArray3DGetDescriptor_v2, &back, a)) &&
          (back.Width != d.Width || back.Height != d.Height || back.Depth != (three ? d.Depth : 0) ||
           back.NumChannels != d.NumChannels))
        violated("cuArray3DGetDescriptor does not return what the array was created with");
      break;
    }
    case 3: {
      int i = g_pool.pick_live(r, T::kArray, true);
      CUarray a = i >= 0 && !r.one_in(8) ? static_cast<CUarray>(g_pool.h(T::kArray, i))
                                          : static_cast<CUarray>(g_pool.pick(r, T::kArray, &i));
      sem_release_all();  // synchronizes its context
      bool marked = g_pool.dying(T::kArray, i);
      g_pool.destroyed(T::kArray, i, API(cuArrayDestroy, a) == CUDA_SUCCESS, marked);
      break;
    }
    default: {
      CUarray a = static_cast<CUarray>(g_pool.pick(r, T::kArray));
      if (r.one_in(2)) {
        CUDA_ARRAY_DESCRIPTOR d;
        API(cuArrayGetDescriptor_v2, maybe(r, &d), a);
      } else {
        CUDA_ARRAY3D_DESCRIPTOR d;
        API(cuArray3DGetDescriptor_v2, maybe(r, &d), a);
      }
      break;
    }
  }
}

}  // namespace fz
