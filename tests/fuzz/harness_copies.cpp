// The harness's copy legalization: copy shapes reduced to what stays inside the memory picked.
#include "harness.h"

#include <cstdarg>
#include <cstdlib>
#include <cstring>

namespace fz {

// ------------------------------------------------------------ copies

static u128 mul(u128 a, u128 b) {
  const u128 max = ~u128{0};
  if (a && b > max / a) return max;
  return a * b;
}
static u128 add(u128 a, u128 b) {
  const u128 max = ~u128{0};
  return a > max - b ? max : a + b;
}

void gen_side(Reader& r, CopySide* s, bool allow_host) {
  uint8_t b = r.u8() % 16;
  Use use = Use::kValidated;
  if (b < 4 || b >= 14) {
    s->mtype = CU_MEMORYTYPE_DEVICE;
  } else if (b < 7) {
    s->mtype = CU_MEMORYTYPE_UNIFIED;
    use = Use::kUnified;
  } else if (b < 10) {
    s->mtype = allow_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    use = allow_host ? Use::kHost : Use::kValidated;
  } else if (b < 13) {
    s->mtype = CU_MEMORYTYPE_ARRAY;
  } else {
    static const int bad[] = {0, 5, 7, 8, -1, 0x7fffffff, 0x100};
    s->mtype = bad[r.below(7)];
  }
  if (s->mtype == CU_MEMORYTYPE_ARRAY) {
    s->arr = static_cast<CUarray>(g_pool.pick(r, T::kArray, &s->array));
  } else {
    s->m = pick_mem(r, use);
  }
  auto coord = [&] {
    switch (r.u8() % 8) {
      case 0: case 1: case 2: case 3: case 4: return uint64_t{0};
      case 5: case 6: return static_cast<uint64_t>(r.u8() % 64);
      default: return r.size();
    }
  };
  s->x = coord();
  s->y = coord();
  s->z = coord();
  switch (r.u8() % 8) {
    case 0: case 1: case 2: s->pitch = 0; break;
    case 3: case 4: s->pitch = 64u << (r.u8() % 6); break;
    case 5: s->pitch = r.u16(); break;
    default: s->pitch = r.size(); break;
  }
  switch (r.u8() % 8) {
    case 0: case 1: case 2: case 3: s->height = 0; break;
    case 4: case 5: s->height = r.u8() % 64; break;
    default: s->height = r.size(); break;
  }
}

enum class Cls { kOk, kBad, kUnknown, kHostOOB };

// Whether [lo, hi) lies in one of the harness's host buffers.
static bool in_host_buffer(u128 lo, u128 hi) {
  for (const Thread& t : g_threads)
    for (uint8_t* b : t.hostbuf) {
      auto base = reinterpret_cast<uintptr_t>(b);
      if (b && lo >= base && hi <= u128{base} + kHostBufSize) return true;
    }
  return false;
}

// Classifies one side by the bytes it reaches, [first, end), wherever they
// are (the library looks up `first`, not the pointer it was given).
static Cls classify(const CopySide& s, size_t W, size_t H, size_t D) {
  if (s.mtype == CU_MEMORYTYPE_ARRAY) {
    std::lock_guard<std::mutex> g(g_pool.mu);
    if (s.array < 0) return Cls::kBad;  // forged or NULL
    const Obj& a = g_pool.of(T::kArray)[s.array];
    if (a.st == St::kDead) return Cls::kBad;
    if (a.st == St::kOrphan) return Cls::kUnknown;
    bool in = add(s.x, W) <= a.row_bytes && add(s.y, H) <= a.rows && add(s.z, D) <= a.layers;
    return in ? Cls::kOk : Cls::kBad;
  }
  if (s.mtype != CU_MEMORYTYPE_HOST && s.mtype != CU_MEMORYTYPE_DEVICE && s.mtype != CU_MEMORYTYPE_UNIFIED)
    return Cls::kBad;
  if (s.m.src == MemRef::kNull) return Cls::kBad;  // every kind refuses a NULL pointer
  const u128 P = s.pitch ? u128{s.pitch} : add(s.x, W);
  const u128 Hh = s.height ? u128{s.height} : add(s.y, H);
  const u128 slice = mul(P, Hh);
  const u128 first = add(s.m.p, add(add(mul(s.z, slice), mul(s.y, P)), s.x));
  const u128 end = add(add(add(first, mul(D - 1, slice)), mul(H - 1, P)), W);
  if (s.mtype == CU_MEMORYTYPE_HOST) return in_host_buffer(first, end) ? Cls::kOk : Cls::kHostOOB;
  // Device and unified sides: the allocation that holds `first`, if any.
  int a = -1;
  uintptr_t ab = 0;
  size_t as = 0;
  if (!(first >> 64)) {
    std::lock_guard<std::mutex> g(g_pool.mu);
    a = g_pool.find_alloc(static_cast<uintptr_t>(first));
    if (a >= 0) {
      ab = g_pool.allocs[a].p;
      as = g_pool.allocs[a].size;
    }
  }
  const uintptr_t sem = sem_base();
  const bool in_sem = !(first >> 64) && first >= sem && first < u128{sem} + kSemWords * 8;
  if (a >= 0) return end <= u128{ab} + as ? Cls::kOk : Cls::kBad;
  if (s.mtype == CU_MEMORYTYPE_DEVICE) return first >> 64 ? Cls::kBad : in_sem ? Cls::kUnknown : Cls::kBad;
  // Unified, untracked: host memory that the library does not check.
  return in_host_buffer(first, end) ? Cls::kOk : Cls::kHostOOB;
}

// Whether any side's exact extent (or the copy's size) needs more than 64 bits.
static bool side_wraps(const CopySide& s, u128 W, u128 H, u128 D) {
  if (s.mtype == CU_MEMORYTYPE_ARRAY) return add(s.x, W) >> 64 || add(s.y, H) >> 64 || add(s.z, D) >> 64;
  const u128 P = s.pitch ? u128{s.pitch} : add(s.x, W);
  const u128 Hh = s.height ? u128{s.height} : add(s.y, H);
  const u128 slice = mul(P, Hh);
  const u128 start = add(add(mul(s.z, slice), mul(s.y, P)), s.x);
  return add(add(add(start, mul(D - 1, slice)), mul(H - 1, P)), W) >> 64 || mul(mul(W, H), D) >> 64;
}

bool copy_wraps(const CopySide& s, const CopySide& d, size_t W, size_t H, size_t D) {
  if (W == 0 || H == 0 || D == 0) return false;
  return side_wraps(s, W, H, D) || side_wraps(d, W, H, D);
}

void tame_copy(CopySide* s, CopySide* d, size_t* W, size_t* H, size_t* D) {
  *W = 1 + *W % 2048;
  *H = 1 + *H % 8;
  *D = 1 + *D % 4;
  for (CopySide* x : {s, d}) {
    x->x %= 64;
    x->y %= 64;
    x->z %= 64;
    x->pitch %= 8192;
    x->height %= 64;
  }
}

bool copy_legal(const CopySide& s, const CopySide& d, size_t W, size_t H, size_t D) {
  if (W == 0 || H == 0 || D == 0) return true;
  Cls cs = classify(s, W, H, D), cd = classify(d, W, H, D);
  if (cs != Cls::kHostOOB && cd != Cls::kHostOOB) return true;
  return cs == Cls::kBad || cd == Cls::kBad;
}

void legalize_copy(CopySide* src, CopySide* dst, size_t W, size_t H, size_t D) {
  if (W == 0 || H == 0 || D == 0) return;  // a no-op for the library
  Cls cs = classify(*src, W, H, D), cd = classify(*dst, W, H, D);
  if (tracing()) trace_line("  legalize: src %d (src kind %d avail %zu) dst %d (kind %d avail %zu)", static_cast<int>(cs),
                            src->m.src, src->m.avail, static_cast<int>(cd), dst->m.src, dst->m.avail);
  if (cs != Cls::kHostOOB && cd != Cls::kHostOOB) return;
  if (cs == Cls::kBad || cd == Cls::kBad) return;  // a correct library refuses it
  if (cs == Cls::kHostOOB) src->mtype = CU_MEMORYTYPE_DEVICE;
  if (cd == Cls::kHostOOB) dst->mtype = CU_MEMORYTYPE_DEVICE;
}

void fill_memcpy3d(const CopySide& s, const CopySide& d, size_t W, size_t H, size_t D, CUDA_MEMCPY3D* q) {
  std::memset(q, 0, sizeof *q);
  q->srcXInBytes = s.x;
  q->srcY = s.y;
  q->srcZ = s.z;
  set_enum(&q->srcMemoryType, s.mtype);
  q->srcHost = reinterpret_cast<const void*>(s.m.p);
  q->srcDevice = s.m.p;
  q->srcArray = s.arr;
  q->srcPitch = s.pitch;
  q->srcHeight = s.height;
  q->dstXInBytes = d.x;
  q->dstY = d.y;
  q->dstZ = d.z;
  set_enum(&q->dstMemoryType, d.mtype);
  q->dstHost = reinterpret_cast<void*>(d.m.p);
  q->dstDevice = d.m.p;
  q->dstArray = d.arr;
  q->dstPitch = d.pitch;
  q->dstHeight = d.height;
  q->WidthInBytes = W;
  q->Height = H;
  q->Depth = D;
}

static size_t extent(Reader& r) {
  switch (r.u8() % 8) {
    case 0: case 1: case 2: case 3: return 1;
    case 4: case 5: return 1 + r.u8() % 16;
    case 6: return 0;
    default: return r.size();
  }
}

void gen_memcpy3d(Reader& r, CUDA_MEMCPY3D* q) {
  size_t W = r.one_in(4) ? r.size() : 1 + r.u16() % 2048;
  size_t H = extent(r), D = extent(r);
  CopySide s, d;
  gen_side(r, &s, true);
  gen_side(r, &d, true);
  if (avoid("copy_wrap") && copy_wraps(s, d, W, H, D)) tame_copy(&s, &d, &W, &H, &D);
  legalize_copy(&s, &d, W, H, D);
  fill_memcpy3d(s, d, W, H, D, q);
  if (r.one_in(16)) q->srcLOD = r.u8();
  if (r.one_in(16)) q->dstLOD = r.u8();
  if (r.one_in(16)) q->reserved0 = reinterpret_cast<void*>(uintptr_t{r.u8()});
}

}  // namespace fz
