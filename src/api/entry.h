// The C boundary. Every exported cuXxx is a thin function of the form
//
//   CUresult cuXxx(args) { return api::call("cuXxx", gate, [&] { ...impl... }, args...); }
//
// call() (1) checks library state (not initialized / torn down), (2) refuses
// calls made from inside a host function unless the gate allows them,
// (3) applies the capture rule for potentially unsafe calls, (4) runs the
// body, mapping any escaping exception to a CUresult, and (5) traces name,
// arguments and result when CUCPU_LOG=api.
// Nothing here takes a lock; the fast path is a few loads and branches.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

#include "cuda.h"
#include "core/capture.h"
#include "core/context.h"
#include "core/runtime.h"
#include "exec/trace.h"

namespace cucpu::api {

#include "api/enum_names.inc"

// An entry's gate: the table's gate column (src/api/entry_points.inc),
// bits joined by |. The last three are its capture rule: what the call does
// while a stream capture runs somewhere in the process.
enum Gate : unsigned {
  kDefault = 0,          // needs cuInit; refused inside host functions
  kNoInit = 1u << 0,     // works before cuInit (cuInit, version, error strings)
  kInHostFn = 1u << 1,   // permitted inside a host function
  // A "potentially unsafe" call (allocation, free, query and synchronize of
  // streams, events and contexts): with a current context, call() applies
  // the calling thread's capture mode before the body checks any argument,
  // as driver 580 does (it may invalidate captures and answer
  // STREAM_CAPTURE_UNSUPPORTED).
  kUnsafeInCapture = 1u << 2,
  // Stream work that joins the stream's capture as a graph node (the body
  // routes it with capture_route_lazy).
  kCaptured = 1u << 3,
  // Stream work refused on a capturing stream (the body asks
  // refuse_during_capture, or capture_forbid_on_stream for a synchronous call).
  kRefusedInCapture = 1u << 4,
};

#ifndef NDEBUG
// The gate of the entry this thread is running (~0u outside any): debug
// builds check that a body's capture routing is the rule its row declares.
inline thread_local unsigned t_entry_gate = ~0u;
inline thread_local const char* t_entry_name = nullptr;
#endif
// Debug builds: aborts when the running entry's row does not declare
// `rule` (one of the capture-rule bits); release builds: nothing.
inline void expect_capture_rule([[maybe_unused]] unsigned rule, [[maybe_unused]] const char* what) {
#ifndef NDEBUG
  if (t_entry_gate != ~0u && !(t_entry_gate & rule)) {
    std::fprintf(stderr, "cucpu: %s routes capture by %s, which its row in entry_points.inc does not declare\n",
                 t_entry_name, what);
    std::abort();
  }
#endif
}

// Reads n bytes at addr into out without faulting on a bad address (the
// tracer reads caller memory the call itself may have refused to touch).
bool trace_peek(const void* addr, void* out, size_t n);

// An enum argument as its bits: a caller may pass any bit pattern, and
// copying one as its enum type is undefined. What the traced path copies.
template <class E>
struct EnumBits {
  using type = E;
  std::underlying_type_t<E> raw;
};
template <class T>
inline auto bits_of(const T& v) {
  if constexpr (std::is_enum_v<T>) {
    EnumBits<T> b;
    std::memcpy(&b.raw, &v, sizeof b.raw);
    return b;
  } else {
    return v;
  }
}
template <class T>
inline constexpr bool is_enum_bits = false;
template <class E>
inline constexpr bool is_enum_bits<EnumBits<E>> = true;

template <class T>
void trace_arg(char*& p, char* end, const T& v) {
  int n;
  if constexpr (is_enum_bits<T>) {
    const char* name = nullptr;
    using E = typename T::type;
    if constexpr (requires { enum_name(static_cast<const E*>(nullptr), 0LL); })
      name = enum_name(static_cast<const E*>(nullptr), static_cast<long long>(v.raw));
    if (name) n = std::snprintf(p, static_cast<size_t>(end - p), "%s", name);
    else n = std::snprintf(p, static_cast<size_t>(end - p), "%lld", static_cast<long long>(v.raw));
  } else if constexpr (std::is_same_v<T, const char*>) {
    // A name (symbol, kernel, file): printed as text.
    char text[65] = {};
    size_t got = 0;
    while (v && got < 64 && trace_peek(v + got, text + got, 1) && text[got]) ++got;
    text[got] = 0;
    if (v && got == 0 && !trace_peek(v, text, 1)) n = std::snprintf(p, static_cast<size_t>(end - p), "%p", static_cast<const void*>(v));
    else if (v) n = std::snprintf(p, static_cast<size_t>(end - p), "\"%s%s\"", text, got == 64 ? "..." : "");
    else n = std::snprintf(p, static_cast<size_t>(end - p), "(nil)");
  } else if constexpr (std::is_pointer_v<T> || std::is_null_pointer_v<T>) {
    n = std::snprintf(p, static_cast<size_t>(end - p), "%p", reinterpret_cast<const void*>(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    n = std::snprintf(p, static_cast<size_t>(end - p), "%g", static_cast<double>(v));
  } else if constexpr (std::is_enum_v<T>) {
    // A caller may pass any bit pattern; read it without loading the enum.
    std::underlying_type_t<T> raw;
    std::memcpy(&raw, &v, sizeof raw);
    const char* name = nullptr;
    if constexpr (requires { enum_name(static_cast<const T*>(nullptr), 0LL); })
      name = enum_name(static_cast<const T*>(nullptr), static_cast<long long>(raw));
    if (name) n = std::snprintf(p, static_cast<size_t>(end - p), "%s", name);
    else n = std::snprintf(p, static_cast<size_t>(end - p), "%lld", static_cast<long long>(raw));
  } else if constexpr (std::is_integral_v<T>) {
    n = std::snprintf(p, static_cast<size_t>(end - p), "%lld", static_cast<long long>(v));
  } else {
    n = std::snprintf(p, static_cast<size_t>(end - p), "{...}");
  }
  if (n > 0) p += n < end - p ? n : end - p - 1;
}

// Out-parameters: a handle or a number written through a pointer, printed
// after a successful call as "-> value".
template <class T>
void trace_out(char*& p, char* end, const T& v) {
  if constexpr (std::is_pointer_v<T> && !std::is_const_v<std::remove_pointer_t<T>> &&
                (std::is_pointer_v<std::remove_pointer_t<T>> || std::is_integral_v<std::remove_pointer_t<T>>) &&
                !std::is_same_v<std::remove_pointer_t<T>, char>) {
    using V = std::remove_pointer_t<T>;
    V out{};
    if (!v || !trace_peek(v, &out, sizeof out)) return;
    int n;
    if constexpr (std::is_pointer_v<V>)
      n = std::snprintf(p, static_cast<size_t>(end - p), " -> %p", reinterpret_cast<const void*>(out));
    else
      n = std::snprintf(p, static_cast<size_t>(end - p), " -> %lld", static_cast<long long>(out));
    if (n > 0) p += n < end - p ? n : end - p - 1;
  }
}

// The flag set argument `index` of entry point `name` takes, if it is one
// of the common flag arguments (trace_flags.cpp): its bits' names.
struct FlagName {
  unsigned long long bit;
  const char* name;
};
const FlagName* trace_flag_names(const char* name, unsigned index, size_t* count);
// Writes "NAME|NAME|0x..." for the bits of v (0: "0").
void trace_flags(char*& p, char* end, unsigned long long v, const FlagName* names, size_t count);

template <class... A>
void trace_call(const char* name, CUresult r, const A&... args) {
  char buf[512];
  char* p = buf;
  char* end = buf + sizeof buf;
  bool first = true;
  unsigned index = 0;
  [[maybe_unused]] auto one = [&](const auto& a) {
    if (!first && p < end - 2) { *p++ = ','; *p++ = ' '; }
    first = false;
    using T = std::decay_t<decltype(a)>;
    const unsigned at = index++;
    if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
      size_t count = 0;
      if (const FlagName* names = trace_flag_names(name, at, &count)) {
        trace_flags(p, end, static_cast<unsigned long long>(a), names, count);
        return;
      }
    }
    trace_arg(p, end, a);
  };
  (one(args), ...);
  *p = 0;
  char outs[256];
  char* q = outs;
  *q = 0;
  if (r == CUDA_SUCCESS) {
    (trace_out(q, outs + sizeof outs, args), ...);
    *q = 0;
  }
  const char* rn = nullptr;
  cuGetErrorName(r, &rn);
  log_line("%s(%s) = %s%s", name, buf, rn ? rn : "?", outs);
}

CUresult state_error();  // NOT_INITIALIZED or DEINITIALIZED

// The checks every entry makes before its body, and the body, with any
// escaping exception mapped to a CUresult.
template <class F>
inline CUresult checked_body(const char* name, unsigned gate, F& body) noexcept {
  if (!(gate & kNoInit) && lib_state() != LibState::kReady) [[unlikely]] return state_error();
  if (!(gate & kInHostFn) && in_host_function()) [[unlikely]] return CUDA_ERROR_NOT_PERMITTED;
  if ((gate & kUnsafeInCapture) && g_capture_sequences.load(std::memory_order_acquire) != 0 &&
      current_context()) [[unlikely]] {
    // The capture rule may refuse the call; the code is its answer.
    if (CUresult r = capture_check_unsafe_call_slow()) return r;
  }
#ifndef NDEBUG
  struct Restore {
    unsigned gate;
    const char* name;
    ~Restore() { t_entry_gate = gate, t_entry_name = name; }
  } restore{t_entry_gate, t_entry_name};
  t_entry_gate = gate;
  t_entry_name = name;
#else
  (void)name;
#endif
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  } catch (...) {
    return CUDA_ERROR_UNKNOWN;
  }
}

// An entry while CUCPU_LOG=api or a trace is on: the body between the
// trace's records. Cold and out of line, the body and `args` by value: the
// entry makes them in memory only on its way here (the generated bodies
// capture their scalar arguments by value for this; enums travel as
// EnumBits).
template <class F, class... A>
[[gnu::noinline, gnu::cold]] CUresult traced_call(const char* name, unsigned gate, F body, const A... args) noexcept {
  const bool timed = trace::on();
  trace::Call traced{};
  if (timed) traced = trace::call_begin();
  const CUresult r = checked_body(name, gate, body);
  if (trace_enabled()) trace_call(name, r, args...);
  if (timed && traced.id) trace::call_end(name, traced, r);
  return r;
}

template <class F, class... A>
inline CUresult call(const char* name, unsigned gate, F&& body, const A&... args) noexcept {
  if (trace::on() || trace_enabled()) [[unlikely]] return traced_call(name, gate, body, bits_of(args)...);
  return checked_body(name, gate, body);
}

}  // namespace cucpu::api
