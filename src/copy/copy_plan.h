// The copy engine's planning: how a list of copies is cut into parts of
// about equal bytes (whole rows where possible, byte ranges of a row
// otherwise), one list of pieces per worker, and which copies of a list
// touch the same bytes. A leaf: core/copy_ops.h turns the plans into stream
// work.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "copy/copy3d.h"

namespace cucpu {

// A view of n copies `stride` bytes apart (the copies of a list of larger
// records, without copying them out).
struct CopyList {
  const unsigned char* first = nullptr;
  size_t stride = sizeof(Copy3D);
  size_t n = 0;
  size_t size() const { return n; }
  const Copy3D& operator[](size_t i) const { return *reinterpret_cast<const Copy3D*>(first + i * stride); }
};

// The bytes a copy moves (saturating).
size_t bytes_of(const Copy3D& c);

// Copies c's source, packed, to `out` (bytes_of(c) bytes) and points c's
// source at it.
bool pack_source(Copy3D& c, unsigned char* out);

// Pairs of copies (i < j) where one writes bytes the other reads or writes,
// judged by each operand's first-to-last byte span.
std::vector<std::pair<size_t, size_t>> find_dependent_copies(CopyList copies);

// Splits the copies into at most `parts` lists of pieces of about equal
// bytes. Each piece keeps the index of its copy.
struct CopyPiece {
  Copy3D copy;
  size_t task;
};
std::vector<std::vector<CopyPiece>> plan_copies(CopyList copies, size_t parts);

}  // namespace cucpu
