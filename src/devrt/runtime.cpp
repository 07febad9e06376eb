// Runtime services called by compiled kernels (abi.h): device printf,
// assert, faults, timers, device malloc, and the arithmetic helpers that
// LLVM has no direct form for (fp8, half atomics). Directed rounding is in
// directed_rounding.cpp.
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "devrt/abi.h"
#include "devrt/block_runner.h"
#include "devrt/check_rt.h"
#include "base/half_bits.h"

namespace cucpu::devrt {

namespace {

std::mutex g_print_mu;

// Formats one printf argument list the way the device's printf lays it
// out: each argument aligned to its size; floats are passed as doubles.
std::string format(const char* fmt, const uint8_t* args) {
  std::string out;
  size_t off = 0;
  auto take = [&](size_t n) {
    off = (off + n - 1) / n * n;
    const uint8_t* p = args + off;
    off += n;
    return p;
  };
  for (const char* c = fmt; *c;) {
    if (*c != '%') {
      out += *c++;
      continue;
    }
    if (c[1] == '%') {
      out += '%';
      c += 2;
      continue;
    }
    const char* start = c++;
    while (*c && std::strchr("-+ #0", *c)) ++c;
    while (*c && (std::isdigit(static_cast<unsigned char>(*c)) || *c == '.' || *c == '*')) ++c;
    int longs = 0;
    bool h = false;
    while (*c == 'l' || *c == 'h' || *c == 'z' || *c == 'j' || *c == 't' || *c == 'L') {
      if (*c == 'h') h = true;
      else ++longs;
      ++c;
    }
    if (!*c) break;
    const char conv = *c++;
    std::string spec(start, static_cast<size_t>(c - start));
    // Rebuild the spec without length modifiers, then add the host's.
    std::string base;
    for (char ch : spec)
      if (!std::strchr("lhzjtL", ch)) base += ch;
    char buf[512];
    int n = 0;
    if (!args) break;
    switch (conv) {
      case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': case 'c': {
        base.insert(base.size() - 1, "ll");
        long long v;
        if (longs) {
          int64_t x;
          std::memcpy(&x, take(8), 8);
          v = x;
        } else {
          int32_t x;
          std::memcpy(&x, take(4), 4);
          v = (conv == 'd' || conv == 'i') ? x : static_cast<long long>(static_cast<uint32_t>(x));
          if (h) v = (conv == 'd' || conv == 'i') ? static_cast<int16_t>(x) : static_cast<uint16_t>(x);
        }
        if (conv == 'c') n = std::snprintf(buf, sizeof buf, "%c", static_cast<int>(v));
        else n = std::snprintf(buf, sizeof buf, base.c_str(), v);
        break;
      }
      case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A': {
        double v;
        std::memcpy(&v, take(8), 8);
        n = std::snprintf(buf, sizeof buf, base.c_str(), v);
        break;
      }
      case 'p': {
        uint64_t v;
        std::memcpy(&v, take(8), 8);
        n = std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
        break;
      }
      case 's': {
        uint64_t v;
        std::memcpy(&v, take(8), 8);
        const char* s = reinterpret_cast<const char*>(v);
        n = std::snprintf(buf, sizeof buf, base.c_str(), s ? s : "(null)");
        break;
      }
      default:
        n = std::snprintf(buf, sizeof buf, "%s", spec.c_str());
        break;
    }
    if (n > 0) out.append(buf, static_cast<size_t>(std::min(n, static_cast<int>(sizeof buf) - 1)));
  }
  return out;
}

float half_to_float(uint16_t h) { return half_bits_to_float(h); }
uint16_t float_to_half(float f) { return float_to_half_bits(f); }
float bf16_to_float(uint16_t h) { return bf16_bits_to_float(h); }
uint16_t float_to_bf16(float f) { return float_to_bf16_bits(f); }

// fp8 (e4m3: bias 7, no infinity, max 448; e5m2: bias 15, IEEE-like),
// round to nearest even, saturating to the largest finite (satfinite).
uint8_t float_to_fp8(float f, int kind) {
  const int mbits = kind == 0 ? 3 : 2, ebits = kind == 0 ? 4 : 5, bias = kind == 0 ? 7 : 15;
  const float maxf = kind == 0 ? 448.0f : 57344.0f;
  uint8_t sign = std::signbit(f) ? 0x80 : 0;
  if (std::isnan(f)) return kind == 0 ? 0x7f : 0x7f;
  float a = std::fabs(f);
  if (a >= maxf) return sign | (kind == 0 ? 0x7e : 0x7b);
  if (a == 0) return sign;
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int exp = e - 1 + bias;
  float scale;
  if (exp <= 0) {  // subnormal
    scale = std::ldexp(1.0f, 1 - bias - mbits);
    exp = 0;
  } else {
    scale = std::ldexp(1.0f, e - 1 - mbits);
  }
  float q = std::nearbyint(a / scale);  // nearest even (default rounding)
  uint32_t mant = static_cast<uint32_t>(q);
  if (exp == 0) {
    if (mant >= (1u << mbits)) {
      exp = 1;
      mant -= 1u << mbits;
    }
  } else {
    mant -= 1u << mbits;
    if (mant >= (1u << mbits)) {
      mant = 0;
      ++exp;
    }
  }
  if (exp >= (1 << ebits) - (kind == 0 ? 0 : 1) && kind == 1) return sign | 0x7b;
  uint8_t r = static_cast<uint8_t>(sign | (exp << mbits) | mant);
  if (kind == 0 && (r & 0x7f) == 0x7f) r = sign | 0x7e;
  return r;
}


}  // namespace

}  // namespace cucpu::devrt

using namespace cucpu::devrt;

extern "C" {

void cucpu_rt_fault(BlockEnv* env, uint32_t kind, uint64_t address) {
  (void)env;
  raise_fault(static_cast<FaultKind>(kind), address, std::string());
}

void cucpu_rt_assert(BlockEnv* env, const char* message, const char* file, uint32_t line, const char* function) {
  Dim3 b, t;
  current_indices(env, &b, &t);
  char buf[1024];
  std::snprintf(buf, sizeof buf, "%s:%u: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.",
                file ? file : "?", line, function ? function : "?", b.x, b.y, b.z, t.x, t.y, t.z,
                message ? message : "?");
  {
    std::lock_guard<std::mutex> g(g_print_mu);
    std::fprintf(stderr, "%s\n", buf);
    std::fflush(stderr);
  }
  raise_fault(cucpu::devrt::FaultKind::kAssert, 0, buf);
}

int32_t cucpu_rt_vprintf(BlockEnv*, const char* fmt, const uint8_t* args) {
  if (!fmt) return -1;
  std::string s = format(fmt, args);
  std::lock_guard<std::mutex> g(g_print_mu);
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fflush(stdout);
  return static_cast<int32_t>(s.size());
}

uint64_t cucpu_rt_globaltimer() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t cucpu_rt_mbarrier(uint64_t* object, uint32_t op, uint64_t value) {
  std::atomic_ref<uint64_t> word(*object);
  constexpr uint64_t kPhase = uint64_t{1} << 63;
  switch (static_cast<MbarrierOp>(op)) {
    case MbarrierOp::kInit: {
      const uint64_t count = value & kMbarrierCountMask;
      word.store(count << 32 | count, std::memory_order_release);
      return 0;
    }
    case MbarrierOp::kInval:
      word.store(0, std::memory_order_release);
      return 0;
    case MbarrierOp::kArrive:
    case MbarrierOp::kArriveDrop: {
      // Release: what this thread wrote before arriving is seen by the
      // threads whose test sees the phase complete (acquire below).
      uint64_t old = word.load(std::memory_order_relaxed);
      for (;;) {
        const uint64_t phase = old & kPhase;
        uint64_t expected = old >> 32 & kMbarrierCountMask, pending = old & kMbarrierCountMask;
        if (static_cast<MbarrierOp>(op) == MbarrierOp::kArriveDrop) expected -= std::min(value, expected);
        pending -= std::min(value, pending);
        // The last arrival completes the phase: the next starts with the full count.
        const uint64_t next = pending ? phase | expected << 32 | pending : (phase ^ kPhase) | expected << 32 | expected;
        if (!word.compare_exchange_weak(old, next, std::memory_order_acq_rel, std::memory_order_relaxed)) continue;
        // A completed phase orders its arrivals' accesses before its
        // waiters' to racecheck, as a block barrier does (a block's threads
        // run on the calling thread).
        if (!pending && instrument_accesses()) check_barrier_passed();
        return phase | expected << 32 | pending;
      }
    }
    case MbarrierOp::kTestState:
      return (word.load(std::memory_order_acquire) & kPhase) != (value & kPhase);
    case MbarrierOp::kTestParity:
      return (word.load(std::memory_order_acquire) >> 63) != (value & 1);
  }
  return 0;
}

void cucpu_rt_nanosleep(uint32_t ns) {
  // The ISA lets a sleep last anything in [0, 2 ns]. Short ones (back-off
  // in spin loops: CUB's look-back sleeps about a microsecond before it
  // reads a predecessor's state) return at once: a GPU sleeps to leave
  // its memory system to others, where a worker spinning on its own clock
  // only delays the block it runs. A warp's lanes sleep together on a GPU,
  // where here they run one after another: a longer sleep that begins
  // within 2 ns of the last one this worker began is taken to be that one
  // (its lanes, or the same loop's next turn), and returns at once.
  constexpr uint32_t kShortestSleep = 10000;
  if (ns < kShortestSleep) return;
  thread_local uint64_t last_start = 0;
  ns = std::min<uint32_t>(ns, 1000000);  // bounded as on the GPU (about a millisecond)
  const uint64_t now = cucpu_rt_globaltimer();
  if (now - last_start < 2 * uint64_t{ns}) return;
  last_start = now;
  if (ns > 200000) {
    timespec ts{0, static_cast<long>(ns)};
    nanosleep(&ts, nullptr);
    return;
  }
  // A short wait spins: the kernel timer's slack would make it tens of
  // microseconds longer (the H200 slept 25.5 us for 20 us).
  const uint64_t end = now + ns;
  while (cucpu_rt_globaltimer() < end) __builtin_ia32_pause();
}

void* cucpu_rt_malloc(uint64_t size) { return std::malloc(size ? size : 1); }
void cucpu_rt_free(void* p) { std::free(p); }

uint16_t cucpu_rt_d2h(double d) {
  // Round to odd into f32, then to nearest into f16: one correct rounding.
  float f = static_cast<float>(d);
  if (std::isfinite(f) && static_cast<double>(f) != d) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (std::fabs(static_cast<double>(f)) > std::fabs(d)) bits -= 1;  // truncate toward zero
    bits |= 1;
    std::memcpy(&f, &bits, 4);
  }
  return float_to_half(f);
}

// x rounded to f16 (bf = 0) or bf16 (bf = 1) with mode 0 rn, 1 rz, 2 rm, 3 rp.
uint16_t cucpu_rt_to_half(double x, int32_t mode, int32_t bf) {
  if (std::isnan(x)) return bf ? 0x7fc0 : 0x7e00;
  // Nearest: round to odd into f32, then to nearest (one correct rounding).
  float f = static_cast<float>(x);
  if (std::isfinite(f) && static_cast<double>(f) != x) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (std::fabs(static_cast<double>(f)) > std::fabs(x)) bits -= 1;
    bits |= 1;
    std::memcpy(&f, &bits, 4);
  }
  uint16_t h = bf ? float_to_bf16(f) : float_to_half(f);
  if (mode == 0) return h;
  auto value = [&](uint16_t v) { return bf ? static_cast<double>(bf16_to_float(v)) : static_cast<double>(half_to_float(v)); };
  const bool neg = h & 0x8000;
  const double v = value(h);
  // Steps of one unit in the last place, on sign-magnitude bits.
  auto toward_zero = [&] { return static_cast<uint16_t>(h - 1); };
  auto away = [&] { return static_cast<uint16_t>(h + 1); };
  if ((h & 0x7fff) == 0) {  // a zero: only a directed step away from it can be needed
    if (mode == 3 && x > 0) return static_cast<uint16_t>(0x0001);
    if (mode == 2 && x < 0) return static_cast<uint16_t>(0x8001);
    return h;
  }
  if (mode == 1 && std::fabs(v) > std::fabs(x)) return toward_zero();
  if (mode == 2 && v > x) return neg ? away() : toward_zero();
  if (mode == 3 && v < x) return neg ? toward_zero() : away();
  return h;
}

uint16_t cucpu_rt_f32x2_to_fp8x2(float hi, float lo, int32_t kind) {
  return static_cast<uint16_t>(float_to_fp8(hi, kind) << 8 | float_to_fp8(lo, kind));
}
uint32_t cucpu_rt_fp8x2_to_f16x2(uint16_t v, int32_t kind) {
  const uint16_t lo = float_to_half(cucpu::fp8_to_float(static_cast<uint8_t>(v & 0xff), kind));
  const uint16_t hi = float_to_half(cucpu::fp8_to_float(static_cast<uint8_t>(v >> 8), kind));
  return uint32_t{hi} << 16 | lo;
}

// code: bit 0 bf16, bit 1 packed x2, bits 2-3: 0 add, 1 min, 2 max.
static uint16_t half_op(uint16_t old, uint16_t v, uint32_t code) {
  const bool bf = code & 1;
  const float a = bf ? bf16_to_float(old) : half_to_float(old);
  const float b = bf ? bf16_to_float(v) : half_to_float(v);
  const uint32_t op = code >> 2 & 3;
  const float r = op == 0 ? a + b : op == 1 ? std::fmin(a, b) : std::fmax(a, b);
  return bf ? float_to_bf16(r) : float_to_half(r);
}
uint16_t cucpu_rt_atomic_half(void* p, uint16_t v, uint32_t code) {
  auto* a = static_cast<std::atomic<uint16_t>*>(p);
  uint16_t old = a->load(std::memory_order_relaxed);
  while (!a->compare_exchange_weak(old, half_op(old, v, code))) {
  }
  return old;
}
uint32_t cucpu_rt_atomic_half2(void* p, uint32_t v, uint32_t code) {
  auto* a = static_cast<std::atomic<uint32_t>*>(p);
  uint32_t old = a->load(std::memory_order_relaxed);
  for (;;) {
    const uint32_t nv = uint32_t{half_op(static_cast<uint16_t>(old >> 16), static_cast<uint16_t>(v >> 16), code)} << 16 |
                        half_op(static_cast<uint16_t>(old), static_cast<uint16_t>(v), code);
    if (a->compare_exchange_weak(old, nv)) return old;
  }
}

uint32_t cucpu_rt_fns(uint32_t mask, uint32_t base, int32_t offset) {
  // The position of the |offset|-th set bit at or after base (offset > 0),
  // at or before it (offset < 0); offset 0: base itself if set. 0xffffffff: none.
  if (base > 31) return 0xffffffffu;
  if (offset == 0) return (mask >> base & 1) ? base : 0xffffffffu;
  int32_t count = offset > 0 ? offset : -offset;
  for (int32_t i = static_cast<int32_t>(base); i >= 0 && i < 32; i += offset > 0 ? 1 : -1)
    if (mask >> i & 1 && --count == 0) return static_cast<uint32_t>(i);
  return 0xffffffffu;
}

}  // extern "C"
