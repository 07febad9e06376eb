// The JIT linker (cuLinkCreate, AddData, AddFile, Complete, Destroy) for
// PTX inputs, and the PTX in fatbins, cubins, host objects and archives of
// them. Each input is parsed when added; cuLinkComplete checks that
// every .extern variable is defined by some input and hands out an image
// that cuModuleLoadData and cuLibraryLoadData accept (module_load.h). A
// function declared .extern in one input and defined in another is left to
// the compiler, which refuses what it cannot resolve.
#include <cstdlib>
#include <cstring>

#include "api/common.h"
#include "api/module_load.h"
#include "core/handle_pool.h"
#include "ptx/image.h"

using namespace cucpu;
using api::raw_enum;

namespace {

struct LinkState {
  // The log buffers given at creation; each step appends its messages.
  char* info_log = nullptr;
  size_t info_size = 0;
  char* error_log = nullptr;
  size_t error_size = 0;
  std::string info, error;
  std::vector<std::string> texts;
  std::vector<std::shared_ptr<ptx::Program>> programs;
  std::vector<char> image;  // cuLinkComplete's output, owned until cuLinkDestroy
};

HandlePool<LinkState>& pool() {
  static auto* p = new HandlePool<LinkState>(1 << 14);  // never destroyed: see core/handle_pool.h
  return *p;
}

void flush_logs(LinkState* st) {
  auto put = [](char* buf, size_t cap, const std::string& text) {
    if (!buf || cap == 0) return;
    const size_t n = std::min(text.size(), cap - 1);
    std::memcpy(buf, text.data(), n);
    buf[n] = 0;
  };
  put(st->info_log, st->info_size, st->info);
  put(st->error_log, st->error_size, st->error);
}

CUresult create(unsigned n, CUjit_option* options, void** values, CUlinkState* out) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  api::JitOptions jit;
  if (CUresult r = api::read_jit_options(n, options, values, &jit)) return r;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  LinkState* st = pool().create();
  st->info_log = jit.info_log;
  st->info_size = jit.info_size;
  st->error_log = jit.error_log;
  st->error_size = jit.error_size;
  flush_logs(st);
  *out = reinterpret_cast<CUlinkState>(st);
  return CUDA_SUCCESS;
}

// A host object's device code (CU_JIT_INPUT_OBJECT): the fatbin containers
// in it, each adding its newest PTX, bar libcudadevrt's (cucpu's device
// runtime stands in for it). An object without device code adds nothing.
CUresult add_host_code(LinkState* st, const char* bytes, size_t size, const std::string& label) {
  constexpr unsigned char kMagic[4] = {0x50, 0xed, 0x55, 0xba};  // fatbin container, little-endian 0xBA55ED50
  for (size_t at = 0; at + 16 <= size; ++at) {
    if (std::memcmp(bytes + at, kMagic, 4) != 0) continue;
    uint16_t header;
    uint64_t body;
    std::memcpy(&header, bytes + at + 6, 2);
    std::memcpy(&body, bytes + at + 8, 8);
    if (header < 16 || body > size - at - 16 || header > size - at - body) continue;
    const size_t n = header + body;
    const ptx::ImageContents found = ptx::read_image(bytes + at, n);
    const bool runtime = !found.ptx.empty() && ptx::is_device_runtime_unit(found.ptx.front());
    if (found.status == ptx::ImageStatus::kOk && !runtime) {
      std::string why;
      if (CUresult r = api::programs_of_image(bytes + at, n, &st->programs, &st->info, &why, &st->texts)) {
        st->error += label + ": " + why;
        return r;
      }
    }
    at += n - 1;
  }
  return CUDA_SUCCESS;
}

// An archive of host objects (CU_JIT_INPUT_LIBRARY, an `ar` file such as
// libcudadevrt.a): each member's device code, as add_host_code takes it.
CUresult add_archive(LinkState* st, const char* bytes, size_t size, const std::string& label) {
  constexpr char kMagic[] = "!<arch>\n";
  if (size < 8 || std::memcmp(bytes, kMagic, 8) != 0) {
    st->error += label + ": not an archive\n";
    return CUDA_ERROR_INVALID_IMAGE;
  }
  for (size_t at = 8; at < size;) {
    // A member: a 60-byte header whose bytes 48..57 give its size in decimal
    // and whose last two are "`\n".
    const bool whole = size - at >= 60 && bytes[at + 58] == '`' && bytes[at + 59] == '\n';
    const std::string field(whole ? bytes + at + 48 : "", whole ? 10 : 0);
    char* end = nullptr;
    const unsigned long long n = std::strtoull(field.c_str(), &end, 10);
    if (!whole || end == field.c_str() || n > size - at - 60) {
      st->error += label + ": a malformed archive member\n";
      return CUDA_ERROR_INVALID_IMAGE;
    }
    if (CUresult r = add_host_code(st, bytes + at + 60, n, label)) return r;
    at += 60 + n + (n & 1);  // members start at even offsets
  }
  return CUDA_SUCCESS;
}

CUresult add_data(CUlinkState h, const CUjitInputType& type, const void* data, size_t size, const char* name,
                  unsigned n, CUjit_option* options, void** values) {
  LinkState* st = pool().live(h);
  if (!st) return CUDA_ERROR_INVALID_HANDLE;
  if (!data || size == 0) return CUDA_ERROR_INVALID_VALUE;
  api::JitOptions jit;  // per-input options tune the compiler only
  if (CUresult r = api::read_jit_options(n, options, values, &jit)) return r;
  const std::string label = name ? name : "(unnamed input)";
  CUresult r;
  switch (raw_enum(type)) {
    case CU_JIT_INPUT_PTX: {
      std::string text(static_cast<const char*>(data), strnlen(static_cast<const char*>(data), size));
      std::shared_ptr<ptx::Program> p;
      std::string why;
      r = api::parse_ptx(text, &p, &why);
      if (r == CUDA_SUCCESS) {
        st->programs.push_back(std::move(p));
        st->texts.push_back(std::move(text));
      } else {
        st->error += label + ": " + why;
      }
      break;
    }
    case CU_JIT_INPUT_CUBIN:
    case CU_JIT_INPUT_FATBINARY: {
      std::string why;
      r = api::programs_of_image(data, size, &st->programs, &st->info, &why, &st->texts);
      if (r != CUDA_SUCCESS) st->error += label + ": " + why;
      break;
    }
    case CU_JIT_INPUT_OBJECT:
      r = add_host_code(st, static_cast<const char*>(data), size, label);
      break;
    case CU_JIT_INPUT_LIBRARY:
      r = add_archive(st, static_cast<const char*>(data), size, label);
      break;
    case CU_JIT_INPUT_NVVM:
      st->error += label + ": NVVM IR is not supported; add its PTX\n";
      r = CUDA_ERROR_NOT_SUPPORTED;
      break;
    default:
      r = CUDA_ERROR_INVALID_VALUE;
  }
  flush_logs(st);
  return r;
}

CUresult add_file(CUlinkState h, const CUjitInputType& type, const char* path, unsigned n, CUjit_option* options,
                  void** values) {
  LinkState* st = pool().live(h);
  if (!st) return CUDA_ERROR_INVALID_HANDLE;
  if (!path) return CUDA_ERROR_INVALID_VALUE;
  std::vector<char> bytes;
  if (CUresult r = api::read_file(path, &bytes)) return r;
  // read_file ends the bytes with a NUL (for a PTX text); a binary input's size is the file's.
  const bool binary = raw_enum(type) == CU_JIT_INPUT_LIBRARY || raw_enum(type) == CU_JIT_INPUT_OBJECT;
  const size_t size = bytes.size() - (binary && bytes.size() > 1 ? 1 : 0);
  return add_data(h, type, bytes.data(), size, path, n, options, values);
}

CUresult complete(CUlinkState h, void** cubin_out, size_t* size_out) {
  LinkState* st = pool().live(h);
  if (!st) return CUDA_ERROR_INVALID_HANDLE;
  if (!cubin_out || !size_out) return CUDA_ERROR_INVALID_VALUE;
  // No input: driver 580 completes (an image with no code).
  if (st->texts.empty()) st->info += "cucpu: no input to link\n";
  // Every .extern variable must be defined by some input.
  for (const auto& p : st->programs)
    for (const ptx::GlobalDesc& g : p->globals()) {
      if (!g.is_extern) continue;
      bool found = false;
      for (const auto& q : st->programs)
        for (const ptx::GlobalDesc& d : q->globals()) found = found || (!d.is_extern && d.name == g.name);
      if (!found) {
        st->error += "undefined reference to variable '" + g.name + "'\n";
        flush_logs(st);
        return CUDA_ERROR_INVALID_SOURCE;  // as driver 580 answers
      }
    }
  st->image = api::make_link_image(st->texts);
  st->info += "cucpu: linked " + std::to_string(st->texts.size()) + " PTX inputs\n";
  flush_logs(st);
  *cubin_out = st->image.data();
  *size_out = st->image.size();
  return CUDA_SUCCESS;
}

CUresult destroy(CUlinkState h) {
  LinkState* st = pool().live(h);
  if (!st || !pool().try_kill(st)) return CUDA_ERROR_INVALID_HANDLE;
  pool().release(st);
  return CUDA_SUCCESS;
}

}  // namespace

#include "api/entries/link.inc"
