// Kahn's topological order of a graph given as successor lists.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cucpu {

// The nodes 0..n-1, each after every node with an edge to it;
// `successors(i)` is a range of what node i has edges to, and `index(x)`
// the node an element of it names. Nodes on a cycle (and those after
// them) are left out: the order is shorter than n exactly when the edges
// form a cycle.
template <class Successors, class Index>
std::vector<uint32_t> kahn_order(size_t n, Successors successors, Index index) {
  std::vector<uint32_t> left(n, 0), order;
  order.reserve(n);
  for (size_t i = 0; i < n; ++i)
    for (const auto& d : successors(i)) ++left[index(d)];
  for (uint32_t i = 0; i < n; ++i)
    if (left[i] == 0) order.push_back(i);
  for (size_t k = 0; k < order.size(); ++k)
    for (const auto& d : successors(order[k]))
      if (--left[index(d)] == 0) order.push_back(index(d));
  return order;
}

}  // namespace cucpu
