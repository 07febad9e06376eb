// The code cache's keys and its on-disk format.
//
// File: <dir>/<key>.kernel = magic, format version, the tier (1: full), the layout (sizes,
// names, cut sites), the object's size, the object. Written to a temporary
// name and renamed, so a reader never sees half a file; anything that does
// not parse is ignored (and recompiled).
#include "ptx/code_cache.h"

#include "devrt/check_rt.h"

#include "base/kernel_timeout.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "ptx/jit.h"
#include "ptx/lower.h"

namespace cucpu::ptx {

namespace {

constexpr char kMagic[8] = {'c', 'u', 'c', 'p', 'u', 'k', 'n', 'l'};
constexpr uint32_t kFormat = 9;
std::atomic<uint64_t> g_hits{0};

uint64_t fnv1a(std::string_view s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Identifies this build of the compiler: the library file's size and
// modification time (any rebuild changes them).
const std::string& build_id() {
  static const std::string id = [] {
    Dl_info info;
    std::string s = "unknown";
    if (dladdr(reinterpret_cast<void*>(&build_id), &info) && info.dli_fname) {
      struct stat st;
      if (stat(info.dli_fname, &st) == 0)
        s = std::string(info.dli_fname) + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
            std::to_string(st.st_mtim.tv_nsec);
    }
    return s + "|" + jit_target_id() + (instrument_accesses() ? "|instrumented" : "") +
           (kernel_timeout_ns() > 0 ? "|stop-polls" : "") + (loop_rounds_enabled() ? "" : "|no-rounds");
  }();
  return id;
}

std::string cache_dir() {
  const char* off = std::getenv("CUCPU_CACHE");
  if (off && std::strcmp(off, "0") == 0) return {};
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/cucpu";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/cucpu";
  return {};
}

template <class T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put_str(std::string& out, const std::string& s) {
  put<uint32_t>(out, static_cast<uint32_t>(s.size()));
  out += s;
}

struct Reader {
  const std::string& s;
  size_t at = 0;
  bool ok = true;
  template <class T>
  T get() {
    T v{};
    if (at + sizeof v > s.size()) {
      ok = false;
      return v;
    }
    std::memcpy(&v, s.data() + at, sizeof v);
    at += sizeof v;
    return v;
  }
  std::string get_str(size_t limit) {
    const uint32_t n = get<uint32_t>();
    if (!ok || n > limit || at + n > s.size()) {
      ok = false;
      return {};
    }
    std::string r = s.substr(at, n);
    at += n;
    return r;
  }
};

}  // namespace

std::string code_key(std::string_view ptx, std::string_view entry) {
  const std::string& id = build_id();
  const uint64_t a = fnv1a(id, fnv1a(entry, fnv1a(ptx)));
  const uint64_t b = std::hash<std::string_view>{}(ptx) ^ (std::hash<std::string_view>{}(entry) * 31) ^
                     (std::hash<std::string>{}(id) * 1000003);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a), static_cast<unsigned long long>(b));
  return buf;
}

bool disk_cache_load(const std::string& key, KernelLayout* layout, std::string* object, bool* full) {
  const std::string dir = cache_dir();
  if (dir.empty()) return false;
  std::ifstream f(dir + "/" + key + ".kernel", std::ios::binary);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string data = ss.str();
  if (data.size() < sizeof kMagic + 4 || std::memcmp(data.data(), kMagic, sizeof kMagic) != 0) return false;
  Reader r{data, sizeof kMagic};
  if (r.get<uint32_t>() != kFormat) return false;
  const bool full_tier = r.get<uint8_t>() != 0;
  KernelLayout l;
  l.frame_bytes = r.get<uint32_t>();
  l.frame_units = r.get<uint32_t>();
  l.local_stride = r.get<uint32_t>();
  l.local_bytes = r.get<uint32_t>();
  l.static_shared = r.get<uint32_t>();
  l.num_regs = r.get<int32_t>();
  l.step_name = r.get_str(256);
  l.range_name = r.get_str(256);
  const uint32_t nsites = r.get<uint32_t>();
  if (!r.ok || nsites > (1u << 20)) return false;
  for (uint32_t i = 0; i < nsites && r.ok; ++i) {
    CutSite c;
    c.kind = static_cast<CutKind>(r.get<uint8_t>());
    c.mode = r.get<uint8_t>();
    c.is_signed = r.get<uint8_t>() != 0;
    c.wide = r.get<uint8_t>() != 0;
    c.line = r.get<int32_t>();
    c.pred_unused = r.get<uint8_t>() != 0;
    c.konst_mask = r.get<uint8_t>();
    for (uint64_t& k : c.konst) k = r.get<uint64_t>();
    c.mma_types = r.get<uint8_t>();
    if (static_cast<uint8_t>(c.kind) > static_cast<uint8_t>(kLastCutKind)) return false;
    l.sites.push_back(c);
  }
  std::string obj = r.get_str(1u << 30);
  if (!r.ok || r.at != data.size() || obj.empty()) return false;
  *layout = std::move(l);
  *object = std::move(obj);
  *full = full_tier;
  g_hits.fetch_add(1, std::memory_order_relaxed);
  return true;
}

uint64_t disk_cache_hits() { return g_hits.load(std::memory_order_relaxed); }

void disk_cache_store(const std::string& key, const KernelLayout& l, const std::string& object, bool full) {
  const std::string dir = cache_dir();
  if (dir.empty()) return;
  // mkdir -p (best effort: a cache that cannot be written is just off).
  for (size_t i = 1; i <= dir.size(); ++i)
    if (i == dir.size() || dir[i] == '/') mkdir(dir.substr(0, i).c_str(), 0700);
  std::string out(kMagic, sizeof kMagic);
  put<uint32_t>(out, kFormat);
  put<uint8_t>(out, full ? 1 : 0);
  put<uint32_t>(out, l.frame_bytes);
  put<uint32_t>(out, l.frame_units);
  put<uint32_t>(out, l.local_stride);
  put<uint32_t>(out, l.local_bytes);
  put<uint32_t>(out, l.static_shared);
  put<int32_t>(out, l.num_regs);
  put_str(out, l.step_name);
  put_str(out, l.range_name);
  put<uint32_t>(out, static_cast<uint32_t>(l.sites.size()));
  for (const CutSite& c : l.sites) {
    put<uint8_t>(out, static_cast<uint8_t>(c.kind));
    put<uint8_t>(out, c.mode);
    put<uint8_t>(out, c.is_signed);
    put<uint8_t>(out, c.wide);
    put<int32_t>(out, c.line);
    put<uint8_t>(out, c.pred_unused);
    put<uint8_t>(out, c.konst_mask);
    for (uint64_t k : c.konst) put<uint64_t>(out, k);
    put<uint8_t>(out, c.mma_types);
  }
  put_str(out, object);
  const std::string final_name = dir + "/" + key + ".kernel";
  // Per process and thread: a kernel's quick and full objects may be stored at once.
  const std::string tmp = final_name + ".tmp" + std::to_string(getpid()) + "." + std::to_string(gettid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return;
    f.write(out.data(), static_cast<std::streamsize>(out.size()));
    if (!f) {
      std::remove(tmp.c_str());
      return;
    }
  }
  if (std::rename(tmp.c_str(), final_name.c_str()) != 0) std::remove(tmp.c_str());
}

}  // namespace cucpu::ptx
