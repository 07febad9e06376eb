// Resolution of the driver's copy and memset descriptors against the
// allocation registry (core/copy_resolve.h).
#include "core/copy_resolve.h"

#include <cstring>

#include "base/checked_math.h"
#include "base/raw_enum.h"
#include "core/allocation.h"
#include "core/array.h"
#include "core/runtime.h"
#include "core/vmm.h"

namespace cucpu {

namespace {
// Whether a span grants what an access needs: every allocation but a
// mapping (core/vmm.h) grants reads and writes.
bool grants(const Registry::Span& s, bool writes) {
  return s.access == vmm::kAccessReadWrite || (!writes && s.access == vmm::kAccessRead);
}

// check_device_range() of N ranges of n bytes, through one lookup: the
// checks share one removals() count. Bit k of `writes`: range k is written.
template <size_t N>
CUresult check_device_ranges_of(const uintptr_t (&ps)[N], size_t n, unsigned writes, MemCheck* out) {
  for (uintptr_t p : ps)
    if (p == 0) return CUDA_ERROR_INVALID_VALUE;
  std::optional<Registry::Span> spans[N];
  uint64_t epoch;
  Registry::instance().find_spans(ps, N, spans, &epoch);
  for (size_t k = 0; k < N; ++k) {
    if (!spans[k]) return CUDA_ERROR_INVALID_VALUE;
    const bool w = writes >> k & 1;
    if (!grants(*spans[k], w)) [[unlikely]]
      return CUDA_ERROR_INVALID_VALUE;
    if (!spans[k]->contains(ps[k], n)) {
      // Mappings side by side in one reservation form one range, as on the
      // driver. Such a range is checked once, here; when it runs, the fault
      // trap answers for a part unmapped since (alloc_id 0: no registry check).
      if (!spans[k]->vmm || !vmm::covers(ps[k], n, w ? vmm::kAccessReadWrite : vmm::kAccessRead))
        return CUDA_ERROR_INVALID_VALUE;
      out[k] = {ps[k], n, 0, epoch};
      continue;
    }
    out[k] = {ps[k], n, spans[k]->id, epoch};
  }
  return CUDA_SUCCESS;
}
}  // namespace

CUresult check_device_range(CUdeviceptr p, size_t n, MemCheck* check, bool writes) {
  const uintptr_t ps[1] = {static_cast<uintptr_t>(p)};
  return check_device_ranges_of(ps, n, writes ? 1u : 0u, check);
}

CUresult check_device_ranges(CUdeviceptr src, CUdeviceptr dst, size_t n, MemCheck checks[2]) {
  const uintptr_t ps[2] = {static_cast<uintptr_t>(src), static_cast<uintptr_t>(dst)};
  return check_device_ranges_of(ps, n, 2u, checks);
}

CUresult resolve_memset2d(CUdeviceptr dst, size_t pitch, unsigned elem, uint32_t value, size_t width, size_t height,
                          Memset2D* out, MemCheck* check) {
  if (dst % elem != 0) return CUDA_ERROR_INVALID_VALUE;
  size_t row, span;  // bytes per row; from the first byte to one past the last
  if (!checked_mul(width, elem, &row)) return CUDA_ERROR_INVALID_VALUE;
  if (height == 1) pitch = row;
  else if (pitch < row || pitch % elem != 0) return CUDA_ERROR_INVALID_VALUE;
  if (!checked_pitched_span(0, row, height, 1, pitch, 0, &span)) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = check_device_range(dst, span, check, true)) return r;
  *out = {reinterpret_cast<unsigned char*>(dst), pitch, elem, value, width, height};
  return CUDA_SUCCESS;
}

CUDA_MEMCPY3D widen(const CUDA_MEMCPY2D& p) {
  CUDA_MEMCPY3D q{};
  q.srcXInBytes = p.srcXInBytes;
  q.srcY = p.srcY;
  copy_enum(q.srcMemoryType, p.srcMemoryType);
  q.srcHost = p.srcHost;
  q.srcDevice = p.srcDevice;
  q.srcArray = p.srcArray;
  q.srcPitch = p.srcPitch;
  q.dstXInBytes = p.dstXInBytes;
  q.dstY = p.dstY;
  copy_enum(q.dstMemoryType, p.dstMemoryType);
  q.dstHost = p.dstHost;
  q.dstDevice = p.dstDevice;
  q.dstArray = p.dstArray;
  q.dstPitch = p.dstPitch;
  q.WidthInBytes = p.WidthInBytes;
  q.Height = p.Height;
  q.Depth = 1;
  return q;
}

namespace {

// NULL, or a small offset from it: no process maps the first 64 KiB
// (Linux's default mmap_min_addr), so such a pointer is never memory.
bool in_null_page(uintptr_t p) { return p < (uintptr_t{1} << 16); }

// Resolves one side of a copy to a base pointer, pitch and slice stride.
// Every sum and product on the caller's offsets, pitches and extents is
// checked (base/checked_math.h): one that overflows names memory outside
// any region and gives CUDA_ERROR_INVALID_VALUE, as driver 580 does for an
// array operand out of range. Once this returns success, every offset the
// walk forms lies in [first, first + span), which does not wrap.
CUresult resolve_side(const CopySide& s, const CopyBox& p, bool writes, unsigned char** base, size_t* pitch,
                      size_t* slice, MemCheck* check) {
  const size_t rows = p.height ? p.height : 1;
  const size_t layers = p.depth ? p.depth : 1;
  size_t ptch = s.pitch, hgt = s.height;
  uintptr_t origin = 0;
  size_t x_end, y_end, z_end;  // one past the box along each axis
  if (!checked_add(s.x, p.width_bytes, &x_end) || !checked_add(s.y, rows, &y_end) ||
      !checked_add(s.z, layers, &z_end))
    return CUDA_ERROR_INVALID_VALUE;
  switch (s.type) {
    case CU_MEMORYTYPE_ARRAY: {
      Array* a = rt().arrays.live(s.array);
      if (!a) return CUDA_ERROR_INVALID_VALUE;
      ptch = a->row_bytes();
      hgt = a->rows();
      if (x_end > ptch || y_end > a->rows() || z_end > a->layers()) return CUDA_ERROR_INVALID_VALUE;
      origin = reinterpret_cast<uintptr_t>(a->data.get());
      break;
    }
    case CU_MEMORYTYPE_HOST:
      if (in_null_page(reinterpret_cast<uintptr_t>(s.host))) return CUDA_ERROR_INVALID_VALUE;
      origin = reinterpret_cast<uintptr_t>(s.host);
      break;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED:
      if (in_null_page(static_cast<uintptr_t>(s.dev))) return CUDA_ERROR_INVALID_VALUE;
      origin = static_cast<uintptr_t>(s.dev);
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  if (s.type != CU_MEMORYTYPE_ARRAY) {
    if (ptch == 0) ptch = x_end;
    if (rows > 1 && ptch < x_end) return CUDA_ERROR_INVALID_VALUE;
    if (hgt == 0) hgt = y_end;
    if (layers > 1 && hgt < y_end) return CUDA_ERROR_INVALID_VALUE;
  }
  // The slice stride is used only by a box of several layers or one that
  // starts past the first; otherwise the height may hold anything.
  size_t slc;
  if (!checked_mul(ptch, hgt, &slc)) {
    if (layers > 1 || s.z > 0) return CUDA_ERROR_INVALID_VALUE;
    slc = 0;
  }
  size_t offset, end;  // of the box's first byte, and one past its last
  if (!checked_pitched_offset(s.x, s.y, s.z, ptch, slc, &offset) ||
      !checked_pitched_span(offset, p.width_bytes, rows, layers, ptch, slc, &end))
    return CUDA_ERROR_INVALID_VALUE;
  const size_t span = end - offset;
  uintptr_t first;
  if (!checked_add(origin, offset, &first) || !range_fits(first, span)) return CUDA_ERROR_INVALID_VALUE;
  if (s.type == CU_MEMORYTYPE_DEVICE) {
    if (CUresult r = check_device_range(static_cast<CUdeviceptr>(first), span, check, writes)) return r;
  } else if (s.type != CU_MEMORYTYPE_ARRAY) {
    // A host or unified pointer into memory the runtime allocated (every
    // device pointer is a host address here) must stay inside that
    // allocation. Registered ranges are the caller's own memory, which may
    // go on past the registration.
    uint64_t epoch = Registry::instance().removals();
    auto a = Registry::instance().find_span(first);
    if (a && (s.type == CU_MEMORYTYPE_UNIFIED || a->kind != MemKind::kRegistered)) {
      if (a->vmm) [[unlikely]] {  // a mapping: as device memory
        if (CUresult r = check_device_range(static_cast<CUdeviceptr>(first), span, check, writes)) return r;
      } else {
        if (!a->contains(first, span)) return CUDA_ERROR_INVALID_VALUE;
        *check = {first, span, a->id, epoch};
      }
    }
  }
  *base = reinterpret_cast<unsigned char*>(first);
  *pitch = ptch;
  *slice = slc;
  return CUDA_SUCCESS;
}

}  // namespace

CUresult resolve_copy(const CopySide& src, const CopySide& dst, const CopyBox& box, Copy3D* out, MemCheck checks[2]) {
  if (box.width_bytes == 0 || box.height == 0 || box.depth == 0) {
    *out = Copy3D{};
    out->width = 0;
    return CUDA_SUCCESS;  // an empty copy is a no-op
  }
  unsigned char* s;
  unsigned char* d;
  if (CUresult r = resolve_side(src, box, false, &s, &out->src_pitch, &out->src_slice, &checks[0])) return r;
  if (CUresult r = resolve_side(dst, box, true, &d, &out->dst_pitch, &out->dst_slice, &checks[1])) return r;
  out->src = s;
  out->dst = d;
  out->width = box.width_bytes;
  out->height = box.height;
  out->depth = box.depth;
  return CUDA_SUCCESS;
}

CUresult resolve_copy3d(const CUDA_MEMCPY3D& p, Copy3D* out, MemCheck checks[2]) {
  const CopySide src{raw_enum(p.srcMemoryType), p.srcHost, p.srcDevice, p.srcArray,
                     p.srcXInBytes, p.srcY, p.srcZ, p.srcPitch, p.srcHeight};
  const CopySide dst{raw_enum(p.dstMemoryType), p.dstHost, p.dstDevice, p.dstArray,
                     p.dstXInBytes, p.dstY, p.dstZ, p.dstPitch, p.dstHeight};
  return resolve_copy(src, dst, CopyBox{p.WidthInBytes, p.Height, p.Depth}, out, checks);
}

}  // namespace cucpu
