#include "devrt/red_table.h"

#include <atomic>
#include <bit>
#include <cstring>

#include "base/thread_heap.h"

namespace cucpu::devrt {

namespace {

// The entries of one worker thread. Few targets are live at once in the
// kernels that gain (one sum, a few counters); when the table is full it
// is applied and starts again.
constexpr int kEntries = 8;
struct Entry {
  uint64_t address;
  uint32_t code;
  uint64_t bits;  // the combined operand
};
struct Table {
  Entry e[kEntries];
  int n = 0;
};
// On the heap (base/thread_heap.h), behind a pointer that is initial-exec:
// a plain %fs-relative load, where every run of blocks looks at the table.
__attribute__((tls_model("initial-exec"))) thread_local ThreadHeap<Table> t_table;

template <class T>
T as(uint64_t bits) {
  if constexpr (sizeof(T) == 4) return std::bit_cast<T>(static_cast<uint32_t>(bits));
  else return std::bit_cast<T>(bits);
}
template <class T>
uint64_t bits_of(T v) {
  if constexpr (sizeof(T) == 4) return std::bit_cast<uint32_t>(v);
  else return std::bit_cast<uint64_t>(v);
}

template <class T>
T combine(CombineOp op, T a, T b) {
  switch (op) {
    case kCombineAdd: return static_cast<T>(a + b);
    case kCombineMin: return std::min(a, b);
    case kCombineMax: return std::max(a, b);
    default: break;
  }
  if constexpr (std::is_integral_v<T>) {
    if (op == kCombineAnd) return a & b;
    if (op == kCombineOr) return a | b;
    return a ^ b;
  }
  return a;
}

template <class T>
uint64_t combine_bits(CombineOp op, uint64_t a, uint64_t b) {
  return bits_of<T>(combine<T>(op, as<T>(a), as<T>(b)));
}

uint64_t combine_code(uint32_t code, uint64_t a, uint64_t b) {
  const CombineOp op = static_cast<CombineOp>(code & 0xff);
  switch (static_cast<CombineType>(code >> 8)) {
    case kCombineF32: return combine_bits<float>(op, a, b);
    case kCombineF64: return combine_bits<double>(op, a, b);
    case kCombineU32: return combine_bits<uint32_t>(op, a, b);
    case kCombineS32: return combine_bits<int32_t>(op, a, b);
    case kCombineU64: return combine_bits<uint64_t>(op, a, b);
    default: return combine_bits<int64_t>(op, a, b);
  }
}

// One atomic update of memory by the combined operand.
template <class T>
void update(void* p, CombineOp op, uint64_t bits) {
  std::atomic_ref<T> ref(*static_cast<T*>(p));
  const T v = as<T>(bits);
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case kCombineAdd: ref.fetch_add(v, std::memory_order_relaxed); return;
      case kCombineAnd: ref.fetch_and(v, std::memory_order_relaxed); return;
      case kCombineOr: ref.fetch_or(v, std::memory_order_relaxed); return;
      case kCombineXor: ref.fetch_xor(v, std::memory_order_relaxed); return;
      default: break;
    }
  }
  T cur = ref.load(std::memory_order_relaxed);
  while (!ref.compare_exchange_weak(cur, combine<T>(op, cur, v), std::memory_order_relaxed)) {
  }
}

void apply(const Entry& x) {
  void* p = reinterpret_cast<void*>(x.address);
  const CombineOp op = static_cast<CombineOp>(x.code & 0xff);
  switch (static_cast<CombineType>(x.code >> 8)) {
    case kCombineF32: update<float>(p, op, x.bits); break;
    case kCombineF64: update<double>(p, op, x.bits); break;
    case kCombineU32: update<uint32_t>(p, op, x.bits); break;
    case kCombineS32: update<int32_t>(p, op, x.bits); break;
    case kCombineU64: update<uint64_t>(p, op, x.bits); break;
    default: update<int64_t>(p, op, x.bits); break;
  }
}

}  // namespace

void apply_reductions() {
  Table* table = t_table.peek();
  if (!table) return;  // this thread combined nothing yet
  Table& t = *table;
  const int n = t.n;
  if (n == 0) return;
  t.n = 0;  // first: a fault while applying (the runner calls again) does not repeat it
  for (int i = 0; i < n; ++i) apply(t.e[i]);
}

}  // namespace cucpu::devrt


using namespace cucpu::devrt;

void cucpu_rt_red(BlockEnv*, void* address, uint64_t bits, uint32_t code) {
  Table& t = t_table.get();
  const uint64_t a = reinterpret_cast<uint64_t>(address);
  for (int i = 0; i < t.n; ++i) {
    Entry& x = t.e[i];
    if (x.address != a) continue;
    if (x.code == code) {
      x.bits = combine_code(code, x.bits, bits);
      return;
    }
    apply_reductions();  // another operation on the same target: in order
    break;
  }
  if (t.n == kEntries) apply_reductions();
  // A target the table has not seen is read now, so that a wild address
  // faults in the kernel, at the thread that named it.
  (void)__atomic_load_n(static_cast<const uint8_t*>(address), __ATOMIC_RELAXED);  // atomic: other workers update it
  t.e[t.n++] = Entry{a, code, bits};
}

void cucpu_rt_red_apply(BlockEnv*) { apply_reductions(); }
