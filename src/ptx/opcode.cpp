#include "ptx/opcode.h"

#include <algorithm>
#include <iterator>

namespace cucpu::ptx {
namespace {

constexpr OpInfo kOps[] = {
#define PTX_OP(id, name, family, facts) {name, Family::family, facts},
#include "ptx/opcodes.inc"
#undef PTX_OP
};
static_assert(std::size(kOps) == static_cast<size_t>(Op::kCount));

constexpr bool sorted_by_name() {
  for (size_t i = 1; i < std::size(kOps); ++i)
    if (!(std::string_view(kOps[i - 1].name) < std::string_view(kOps[i].name))) return false;
  return true;
}
static_assert(sorted_by_name(), "opcodes.inc rows must stay sorted by name");

}  // namespace

const OpInfo& op_info(Op op) {
  static constexpr OpInfo kUnset = {"?", Family::kMissing, 0};
  return op < Op::kCount ? kOps[static_cast<size_t>(op)] : kUnset;
}

bool op_from_name(std::string_view name, Op* out) {
  const OpInfo* it = std::lower_bound(std::begin(kOps), std::end(kOps), name,
                                      [](const OpInfo& row, std::string_view n) { return std::string_view(row.name) < n; });
  if (it == std::end(kOps) || name != it->name) return false;
  *out = static_cast<Op>(it - std::begin(kOps));
  return true;
}

}  // namespace cucpu::ptx
