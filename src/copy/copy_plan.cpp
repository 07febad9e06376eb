#include "copy/copy_plan.h"

#include <algorithm>
#include <utility>

#include "base/checked_math.h"

namespace cucpu {
namespace {

constexpr size_t kMinPart = size_t{256} << 10;  // no part smaller than this

bool contiguous(const Copy3D& c) {
  return c.src_pitch == c.width && c.dst_pitch == c.width &&
         (c.depth == 1 || (c.src_slice == c.width * c.height && c.dst_slice == c.width * c.height));
}

}  // namespace

// Its span was checked where the copy was resolved, but the layers of a box
// one row high may overlap (its pitch may be under its width), so the
// product can exceed the span: it saturates rather than wraps, and only
// steers planning.
size_t bytes_of(const Copy3D& c) {
  size_t n;
  return checked_product(&n, c.width, c.height, c.depth) ? n : SIZE_MAX;
}

bool pack_source(Copy3D& c, unsigned char* out) {
  Copy3D snap = c;
  snap.dst = out;
  snap.dst_pitch = c.width;
  snap.dst_slice = c.width * c.height;
  run_copy(snap);
  c.src = out;
  c.src_pitch = c.width;
  c.src_slice = c.width * c.height;
  return true;
}

std::vector<std::vector<CopyPiece>> plan_copies(CopyList tasks, size_t parts) {
  size_t total = 0;
  for (size_t i = 0; i < tasks.size(); ++i) total = saturating_add(total, bytes_of(tasks[i]));
  parts = std::max<size_t>(1, std::min(parts, total / kMinPart));
  const size_t target = std::max<size_t>(1, total / parts + (total % parts != 0));  // rounded up, no wrap

  std::vector<std::vector<CopyPiece>> out(1);
  size_t room = target;
  auto need_room = [&] {
    if (room == 0) {
      out.emplace_back();
      room = target;
    }
  };
  for (size_t i = 0; i < tasks.size(); ++i) {
    Copy3D c = tasks[i];
    if (bytes_of(c) == 0) continue;
    if (contiguous(c)) {  // one long row
      c.width = bytes_of(c);
      c.height = c.depth = 1;
    }
    for (size_t z = 0; z < c.depth; ++z) {
      size_t y = 0;
      while (y < c.height) {
        need_room();
        Copy3D piece = c;
        piece.src = c.src + z * c.src_slice + y * c.src_pitch;
        piece.dst = c.dst + z * c.dst_slice + y * c.dst_pitch;
        piece.depth = 1;
        size_t rows = room / c.width;
        if (rows > 0) {  // whole rows
          piece.height = std::min(rows, c.height - y);
          out.back().push_back({piece, i});
          room -= piece.height * c.width;
          y += piece.height;
          continue;
        }
        piece.height = 1;  // a row larger than the room left: cut it
        for (size_t x = 0; x < c.width;) {
          need_room();
          Copy3D cut = piece;
          cut.src = piece.src + x;
          cut.dst = piece.dst + x;
          cut.width = std::min(room, c.width - x);
          out.back().push_back({cut, i});
          room -= cut.width;
          x += cut.width;
        }
        ++y;
      }
    }
  }
  if (out.back().empty()) out.pop_back();
  return out;
}

std::vector<std::pair<size_t, size_t>> find_dependent_copies(CopyList tasks) {
  struct Span {
    uintptr_t lo, hi;
    size_t task;
    bool write;
  };
  // resolve_copy3d checked that these spans do not wrap; were one to, it
  // would reach the top of memory and so be judged dependent (run in order).
  auto span = [](const unsigned char* base, size_t pitch, size_t slice, const Copy3D& c) {
    auto lo = reinterpret_cast<uintptr_t>(base);
    uintptr_t hi;
    if (!checked_pitched_span(lo, c.width, c.height, c.depth, pitch, slice, &hi)) hi = UINTPTR_MAX;
    return std::make_pair(lo, hi);
  };
  // Sources and destinations are each usually in address order already (a
  // batch walks its buffers): each list is sorted only when it is not, and
  // the two are merged.
  std::vector<Span> reads, writes;
  reads.reserve(tasks.size());
  writes.reserve(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    const Copy3D& c = tasks[i];
    if (bytes_of(c) == 0) continue;
    auto [slo, shi] = span(c.src, c.src_pitch, c.src_slice, c);
    auto [dlo, dhi] = span(c.dst, c.dst_pitch, c.dst_slice, c);
    reads.push_back({slo, shi, i, false});
    writes.push_back({dlo, dhi, i, true});
  }
  auto by_start = [](const Span& a, const Span& b) { return a.lo < b.lo; };
  if (!std::is_sorted(reads.begin(), reads.end(), by_start)) std::sort(reads.begin(), reads.end(), by_start);
  if (!std::is_sorted(writes.begin(), writes.end(), by_start)) std::sort(writes.begin(), writes.end(), by_start);
  std::vector<Span> spans(reads.size() + writes.size());
  std::merge(reads.begin(), reads.end(), writes.begin(), writes.end(), spans.begin(), by_start);
  std::vector<std::pair<size_t, size_t>> out;
  // Sweep: every span still open when another starts overlaps it.
  std::vector<const Span*> open;
  for (const Span& s : spans) {
    open.erase(std::remove_if(open.begin(), open.end(), [&](const Span* o) { return o->hi <= s.lo; }), open.end());
    for (const Span* o : open)
      if (o->task != s.task && (o->write || s.write))
        out.emplace_back(std::min(o->task, s.task), std::max(o->task, s.task));
    open.push_back(&s);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace cucpu
