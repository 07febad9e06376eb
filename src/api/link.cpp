// The JIT linker (cuLinkCreate, AddData, AddFile, Complete, Destroy) for
// PTX inputs. Each input is parsed when added; cuLinkComplete checks that
// every .extern variable is defined by some input and hands out an image
// that cuModuleLoadData and cuLibraryLoadData accept (module_load.h). A
// function declared .extern in one input and defined in another is left to
// the compiler, which refuses what it cannot resolve.
#include <cstring>

#include "api/common.h"
#include "api/module_load.h"
#include "core/handle_pool.h"

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
    case CU_JIT_INPUT_LIBRARY:
    case CU_JIT_INPUT_NVVM:
      st->error += label + ": host objects, archives and NVVM IR are not supported; add their PTX\n";
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
  return add_data(h, type, bytes.data(), bytes.size(), path, n, options, values);
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
