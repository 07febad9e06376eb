#include "api/module_load.h"

#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>

#include "base/raw_enum.h"
#include "core/device_arch.h"
#include "core/runtime.h"
#include "ptx/image.h"
#include "ptx/lexer.h"
#include "ptx/link_units.h"

namespace cucpu::api {

namespace {

// The newest PTX ISA this driver accepts. Driver 580 stops at 9.0 (CUDA
// 13.0); cucpu takes what CUDA 13.x's compilers emit up to 9.5, since
// libraries built with them (CuPy's) ship PTX alone for a CPU to run. A
// construct of a newer ISA the parser lacks is refused by name.
constexpr int kMaxPtxVersion = 95;

constexpr char kLinkMagic[16] = "cucpu-link-v1";

// Whether PTX for `sm` (with its suffix) compiles for the device, as the
// driver decides: plain PTX for this architecture or an older one;
// architecture-specific PTX (sm_90a) for this one alone; family PTX
// (sm_100f) for this major at its minor or a later one.
bool target_runs_here(int sm, char variant) {
  const DeviceArch& d = device_arch();
  if (variant == 'a') return sm == d.sm;
  if (variant == 'f') return sm / 10 == d.major && sm % 10 <= d.minor;
  return sm <= d.sm;
}

}  // namespace

CUresult read_jit_options(unsigned n, const CUjit_option* options, void* const* values, JitOptions* out) {
  if (n == 0) return CUDA_SUCCESS;
  if (!options || !values) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < n; ++i) {
    const int opt = raw_enum(options[i]);
    if (opt < 0 || opt >= CU_JIT_NUM_OPTIONS) return CUDA_ERROR_INVALID_VALUE;
    const auto v = reinterpret_cast<uintptr_t>(values[i]);
    switch (opt) {
      case CU_JIT_INFO_LOG_BUFFER: out->info_log = static_cast<char*>(values[i]); break;
      case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
        out->info_size = static_cast<unsigned>(v);
        out->info_size_slot = static_cast<int>(i);
        break;
      case CU_JIT_ERROR_LOG_BUFFER: out->error_log = static_cast<char*>(values[i]); break;
      case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
        out->error_size = static_cast<unsigned>(v);
        out->error_size_slot = static_cast<int>(i);
        break;
      case CU_JIT_WALL_TIME: out->wall_time_slot = static_cast<int>(i); break;
      default: break;  // optimization, target, caching and debug choices: nothing to tune
    }
  }
  return CUDA_SUCCESS;
}

namespace {
void put_log(char* buf, size_t cap, int slot, void** values, const std::string& text) {
  if (!buf || cap == 0) return;
  const size_t n = std::min(text.size(), cap - 1);
  std::memcpy(buf, text.data(), n);
  buf[n] = 0;
  if (slot >= 0) values[slot] = reinterpret_cast<void*>(static_cast<uintptr_t>(n + 1));
}
}  // namespace

void write_jit_logs(const JitOptions& o, void** values, const std::string& info, const std::string& error,
                    float ms) {
  put_log(o.info_log, o.info_size, o.info_size_slot, values, info);
  put_log(o.error_log, o.error_size, o.error_size_slot, values, error);
  if (o.wall_time_slot >= 0) {
    void* slot = nullptr;
    std::memcpy(&slot, &ms, sizeof ms);  // the float travels in the pointer's bytes
    values[o.wall_time_slot] = slot;
  }
}

CUresult parse_ptx(const std::string& text, std::shared_ptr<ptx::Program>* out, std::string* error,
                   bool* other_target) {
  if (other_target) *other_target = false;
  std::string log;
  std::shared_ptr<ptx::Program> p = ptx::Program::parse(text, &log);
  if (!p) {
    *error += log;
    if (!log.empty() && log.back() != '\n') *error += '\n';
    return CUDA_ERROR_INVALID_PTX;
  }
  if (p->ptx_version() > kMaxPtxVersion) {
    char m[128];
    std::snprintf(m, sizeof m, "PTX ISA %d.%d is newer than this driver's (%d.%d)\n", p->ptx_version() / 10,
                  p->ptx_version() % 10, kMaxPtxVersion / 10, kMaxPtxVersion % 10);
    *error += m;
    return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
  }
  if (!target_runs_here(p->target_sm(), p->target_variant())) {
    char m[200];
    const char suffix[2] = {p->target_variant(), 0};
    std::snprintf(m, sizeof m, ".target sm_%d%s does not run on the device (sm_%d; CUCPU_ARCH chooses it)\n",
                  p->target_sm(), suffix, device_arch().sm);
    *error += m;
    if (other_target) *other_target = true;
    return CUDA_ERROR_INVALID_PTX;
  }
  *out = std::move(p);
  return CUDA_SUCCESS;
}

namespace {

// Says on stderr, once per distinct reason, why an image was refused: the
// program usually reports only the code, and the JIT log it could ask for
// is seldom read.
void say_refused(CUresult r, const std::string& error) {
  if (r == CUDA_SUCCESS || r == CUDA_ERROR_NO_BINARY_FOR_GPU || error.empty()) return;  // that one says it itself
  static std::mutex mu;
  static std::set<std::string> said;
  std::string first = error.substr(0, error.find('\n'));
  {
    std::lock_guard<std::mutex> g(mu);
    if (said.size() >= 64 || !said.insert(first).second) return;
  }
  const char* name = "?";
  cuGetErrorName(r, &name);
  log_line("module refused (%s): %s", name, first.c_str());
}

CUresult read_programs(const void* image, size_t size, std::vector<std::shared_ptr<ptx::Program>>* out,
                       std::string* info, std::string* error, std::vector<std::string>* texts) {
  const auto* bytes = static_cast<const char*>(image);
  // strncmp stops at the magic's own NUL: safe on a short text too.
  if ((size == 0 || size >= sizeof kLinkMagic + 8) && std::strncmp(bytes, kLinkMagic, sizeof kLinkMagic) == 0) {
    // A link image: [magic][u32 count][u32 0] then [u64 size][text] each.
    uint32_t count;
    std::memcpy(&count, bytes + sizeof kLinkMagic, 4);
    size_t at = sizeof kLinkMagic + 8;
    std::vector<std::string> units;
    for (uint32_t i = 0; i < count; ++i) {
      uint64_t n;
      if (size && size - at < 8) return CUDA_ERROR_INVALID_IMAGE;
      std::memcpy(&n, bytes + at, 8);
      at += 8;
      if (size && size - at < n) return CUDA_ERROR_INVALID_IMAGE;
      units.emplace_back(bytes + at, strnlen(bytes + at, n));
      at += n;
    }
    if (units.empty()) return CUDA_ERROR_INVALID_IMAGE;
    // The units become one program, as the linker makes one image: a
    // function one unit declares .extern and another defines is called
    // across them, like a variable.
    std::string text;
    if (units.size() == 1) {
      text = std::move(units[0]);
    } else {
      try {
        text = ptx::join_units(units);
      } catch (const ptx::ParseError& e) {
        *error += "line " + std::to_string(e.line) + ", column " + std::to_string(e.col) + ": " + e.what + "\n";
        return CUDA_ERROR_INVALID_PTX;
      }
    }
    std::shared_ptr<ptx::Program> p;
    if (CUresult r = parse_ptx(text, &p, error)) return r;
    out->push_back(std::move(p));
    if (texts) texts->push_back(std::move(text));
    *info += "cucpu: linked image of " + std::to_string(units.size()) + " PTX units\n";
    return CUDA_SUCCESS;
  }
  ptx::ImageContents c = ptx::read_image(image, size);
  if (c.status == ptx::ImageStatus::kInvalidImage) {
    *error += c.log;
    return CUDA_ERROR_INVALID_IMAGE;
  }
  if (c.status == ptx::ImageStatus::kNoBinaryForGpu) {
    *error += c.log;
    // The program usually reports only "no kernel image is available":
    // say once, unasked, what is missing and how to rebuild.
    static std::atomic<bool> said{false};
    if (!said.exchange(true, std::memory_order_relaxed)) {
      std::string line = c.log;
      while (!line.empty() && line.back() == '\n') line.pop_back();
      for (char& ch : line)
        if (ch == '\n') ch = ' ';
      log_line("cannot run this image: %s", line.c_str());
    }
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  }
  *info += c.log;
  if (!c.link_units.empty()) {
    std::string text;
    try {
      text = ptx::join_units(c.link_units);
    } catch (const ptx::ParseError& e) {
      *error += "line " + std::to_string(e.line) + ", column " + std::to_string(e.col) + ": " + e.what + "\n";
      return CUDA_ERROR_INVALID_PTX;
    }
    std::shared_ptr<ptx::Program> p;
    if (CUresult r = parse_ptx(text, &p, error)) return r;
    *info += "cucpu: separately compiled image of " + std::to_string(c.link_units.size()) +
             " PTX units, joined into one program\n";
    out->push_back(std::move(p));
    if (texts) texts->push_back(std::move(text));
    return CUDA_SUCCESS;
  }
  // A fatbin whose every PTX text targets another architecture has no
  // image for this device: the driver's NO_BINARY_FOR_GPU (probed on driver
  // 580 with compute_100 PTX alone, and with sm_90 SASS beside compute_120
  // PTX, which the driver runs as SASS), not INVALID_PTX.
  CUresult first = CUDA_ERROR_INVALID_PTX;
  bool all_other_targets = !c.plain_text && !c.ptx.empty();
  for (size_t i = 0; i < c.ptx.size(); ++i) {
    std::shared_ptr<ptx::Program> p;
    bool other_target = false;
    CUresult r = parse_ptx(c.ptx[i], &p, error, &other_target);
    all_other_targets &= other_target;
    if (r == CUDA_SUCCESS) {
      char m[160];
      std::snprintf(m, sizeof m, "cucpu: PTX ISA %d.%d for sm_%d: %zu entries, %zu variables\n",
                    p->ptx_version() / 10, p->ptx_version() % 10, p->target_sm(), p->entries().size(),
                    p->globals().size());
      *info += m;
      out->push_back(std::move(p));
      if (texts) texts->push_back(std::move(c.ptx[i]));
      return CUDA_SUCCESS;
    }
    if (i == 0) first = r;
  }
  return all_other_targets ? CUDA_ERROR_NO_BINARY_FOR_GPU : first;
}

}  // namespace

CUresult programs_of_image(const void* image, size_t size, std::vector<std::shared_ptr<ptx::Program>>* out,
                           std::string* info, std::string* error, std::vector<std::string>* texts) {
  const size_t had = error->size();
  const CUresult r = read_programs(image, size, out, info, error, texts);
  if (r != CUDA_SUCCESS) say_refused(r, error->substr(had));
  return r;
}

std::vector<char> make_link_image(const std::vector<std::string>& texts) {
  std::vector<char> out;
  if (texts.size() == 1) {
    out.assign(texts[0].begin(), texts[0].end());
    out.push_back(0);
    return out;
  }
  out.assign(kLinkMagic, kLinkMagic + sizeof kLinkMagic);
  const auto count = static_cast<uint32_t>(texts.size());
  const uint32_t zero = 0;
  out.insert(out.end(), reinterpret_cast<const char*>(&count), reinterpret_cast<const char*>(&count) + 4);
  out.insert(out.end(), reinterpret_cast<const char*>(&zero), reinterpret_cast<const char*>(&zero) + 4);
  for (const std::string& t : texts) {
    const uint64_t n = t.size() + 1;
    out.insert(out.end(), reinterpret_cast<const char*>(&n), reinterpret_cast<const char*>(&n) + 8);
    out.insert(out.end(), t.begin(), t.end());
    out.push_back(0);
  }
  return out;
}

CUresult read_file(const char* path, std::vector<char>* out) {
  struct stat st;
  // Driver 580 answers a directory with OUT_OF_MEMORY (it sizes the read by it).
  if (::stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return CUDA_ERROR_OUT_OF_MEMORY;
  std::FILE* f = std::fopen(path, "rb");
  if (!f) return CUDA_ERROR_FILE_NOT_FOUND;
  // Only a regular file of at most an image's size is read (driver 580
  // answers /dev/zero with INVALID_IMAGE at once); what it holds is read
  // up to its size then, so a file growing meanwhile cannot run on.
  struct stat opened;
  if (::fstat(::fileno(f), &opened) != 0 || !S_ISREG(opened.st_mode) ||
      static_cast<uint64_t>(opened.st_size) > ptx::kMaxImageSize) {
    std::fclose(f);
    log_line("cannot load %s: %s", path, S_ISREG(opened.st_mode) ? "larger than an image can be (1 GiB)" : "not a regular file");
    return CUDA_ERROR_INVALID_IMAGE;
  }
  out->resize(static_cast<size_t>(opened.st_size));
  const size_t got = std::fread(out->data(), 1, out->size(), f);
  const bool bad = std::ferror(f);
  std::fclose(f);
  if (bad) return CUDA_ERROR_FILE_NOT_FOUND;
  out->resize(got);
  out->push_back(0);  // a PTX file becomes a NUL-terminated text
  return CUDA_SUCCESS;
}

}  // namespace cucpu::api
