// The PTX corpus tool: finds every fatbin in the files it is given (shared
// libraries, executables, fatbins, PTX files), takes the PTX a driver would
// pick from each (the newest), and parses and compiles every entry with
// cucpu's kernel compiler. Prints, per file: fatbins, PTX texts, entries
// that compiled, failures grouped by reason (the instruction that blocks
// them), and compile time. Not part of CI; see docs/conformance.md.
// --lower-only stops each entry after lowering (no LLVM optimization or
// code generation): what the compiler refuses, in a fraction of the time.
// --dump DIR writes each PTX text found to DIR/<file>.<n>.ptx and compiles nothing.
//
//   build/dev/tools/ptx_corpus/cucpu_ptx_corpus [--lower-only] [--max-entries N] [--jobs N] FILE...
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ptx/ast.h"
#include "ptx/image.h"
#include "ptx/lower.h"
#include "ptx/program.h"

namespace {

using Clock = std::chrono::steady_clock;

// The reason of a compile or parse log, without its position: "line L,
// column C: unsupported instruction 'x.y' (in 'k')" -> "unsupported instruction 'x.y'".
std::string reason_of(const std::string& log) {
  std::string r = log.substr(0, log.find('\n'));
  if (r.rfind("line ", 0) == 0) {
    const size_t colon = r.find(": ");
    if (colon != std::string::npos) r = r.substr(colon + 2);
  }
  const size_t in = r.rfind(" (in '");
  if (in != std::string::npos) r = r.substr(0, in);
  // Name the instruction without its types and sizes: "mma.sync.aligned..." keeps its first two parts.
  const size_t q = r.find('\'');
  if (q != std::string::npos) {
    const size_t end = r.find('\'', q + 1);
    if (end != std::string::npos) {
      std::string name = r.substr(q + 1, end - q - 1);
      size_t dots = 0, cut = name.size();
      for (size_t i = 0; i < name.size(); ++i)
        if (name[i] == '.' && ++dots == 2) cut = i;
      r = r.substr(0, q + 1) + name.substr(0, cut) + r.substr(end);
    }
  }
  return r;
}

struct Stats {
  size_t fatbins = 0, texts = 0, parse_failures = 0, entries = 0, compiled = 0, failed = 0;
  double parse_s = 0, compile_s = 0, slowest_s = 0;
  std::string slowest;
  std::map<std::string, size_t> reasons;  // reason -> entries (or texts, for parse failures)
  std::map<int, size_t> versions;         // PTX ISA version -> texts
  std::map<int, size_t> targets;          // .target sm -> texts

  // One entry's outcome: its compile (or lowering) time, and why it failed ("" when it did not).
  void record(const std::string& name, double seconds, bool ok, const std::string& why) {
    ++entries;
    compile_s += seconds;
    if (seconds > slowest_s) {
      slowest_s = seconds;
      slowest = name;
    }
    if (ok) {
      ++compiled;
    } else {
      ++failed;
      ++reasons[reason_of(why)];
    }
  }
};

// Every PTX text of the file: the file itself when it is PTX, else the
// newest PTX of each fatbin container found in it.
std::vector<std::string> texts_of(const uint8_t* data, size_t size, Stats& st) {
  std::vector<std::string> out;
  size_t lead = 0;
  while (lead < size && std::isspace(data[lead])) ++lead;
  if (size > lead + 8 && (std::memcmp(data + lead, "//", 2) == 0 || std::memcmp(data + lead, ".version", 8) == 0)) {
    out.emplace_back(reinterpret_cast<const char*>(data), size);
    return out;
  }
  static const uint8_t kMagic[4] = {0x50, 0xed, 0x55, 0xba};
  for (size_t at = 0; at + 16 <= size;) {
    const void* hit = memmem(data + at, size - at, kMagic, 4);
    if (!hit) break;
    const size_t off = static_cast<const uint8_t*>(hit) - data;
    uint64_t body = 0;
    uint16_t header = 0;
    std::memcpy(&header, data + off + 6, 2);
    std::memcpy(&body, data + off + 8, 8);
    const size_t len = header + body;
    if (header < 16 || body > size || off + len > size) {
      at = off + 4;
      continue;
    }
    ++st.fatbins;
    cucpu::ptx::ImageContents c = cucpu::ptx::read_image(data + off, len);
    if (!c.ptx.empty()) out.push_back(std::move(c.ptx[0]));
    at = off + len;
  }
  return out;
}

// Lowers every entry of `text` (up to max_entries): nullptr-free, each
// refusal's log in `why` ("" when it lowered).
void lower_text(const std::string& text, Stats& st, std::mutex& mu, size_t max_entries) {
  cucpu::ptx::Module m;
  std::string err;
  if (!cucpu::ptx::parse_module(text, &m, &err)) return;  // counted by compile_text's parse
  size_t done = 0;
  for (size_t fi = 0; fi < m.funcs.size() && done < max_entries; ++fi) {
    if (!m.funcs[fi].is_entry) continue;
    ++done;
    std::string why;
    const auto k0 = Clock::now();
    try {
      llvm::LLVMContext ctx;
      cucpu::ptx::KernelLayout layout;
      cucpu::ptx::lower_kernel(m, static_cast<int>(fi), "corpus", ctx, &layout, false);
    } catch (const cucpu::ptx::LowerError& e) {
      why = "line " + std::to_string(e.line) + ", column " + std::to_string(e.col) + ": " + e.what;
    }
    const double s = std::chrono::duration<double>(Clock::now() - k0).count();
    std::lock_guard<std::mutex> g(mu);
    st.record(m.funcs[fi].name, s, why.empty(), why);
  }
}

void compile_text(const std::string& text, Stats& st, std::mutex& mu, size_t max_entries, bool lower_only) {
  std::string log;
  const auto t0 = Clock::now();
  std::shared_ptr<cucpu::ptx::Program> p = cucpu::ptx::Program::parse(text, &log);
  const double parse_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::unique_lock<std::mutex> lock(mu);
  st.parse_s += parse_s;
  if (!p) {
    ++st.parse_failures;
    ++st.reasons["parse: " + reason_of(log)];
    return;
  }
  ++st.versions[p->ptx_version()];
  ++st.targets[p->target_sm()];
  const size_t n = std::min(p->entries().size(), max_entries);
  lock.unlock();
  if (lower_only) return lower_text(text, st, mu, max_entries);
  for (size_t i = 0; i < n; ++i) {
    std::string why;
    const auto k0 = Clock::now();
    std::shared_ptr<const cucpu::ptx::Kernel> k = p->kernel(static_cast<int>(i), &why);
    const double s = std::chrono::duration<double>(Clock::now() - k0).count();
    std::lock_guard<std::mutex> g(mu);
    st.record(p->entries()[i].name, s, k != nullptr, why);
  }
}

void report(const std::string& name, const Stats& st) {
  std::printf("## %s\n", name.c_str());
  std::printf("fatbins %zu, PTX texts %zu (%zu refused by the parser), entries %zu: %zu compile, %zu fail\n", st.fatbins,
              st.texts, st.parse_failures, st.entries, st.compiled, st.failed);
  std::printf("PTX ISA:");
  for (auto& [v, n] : st.versions) std::printf(" %d.%d x%zu", v / 10, v % 10, n);
  std::printf("; targets:");
  for (auto& [t, n] : st.targets) std::printf(" sm_%d x%zu", t, n);
  std::printf("\nparse %.1f s, compile %.1f s (%.1f ms an entry; slowest %.0f ms, %s)\n", st.parse_s, st.compile_s,
              st.entries ? 1e3 * st.compile_s / static_cast<double>(st.entries) : 0.0, 1e3 * st.slowest_s,
              st.slowest.c_str());
  std::vector<std::pair<size_t, std::string>> rs;
  for (auto& [r, n] : st.reasons) rs.emplace_back(n, r);
  std::sort(rs.rbegin(), rs.rend());
  for (size_t i = 0; i < rs.size() && i < 25; ++i) std::printf("  %6zu  %s\n", rs[i].first, rs[i].second.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  size_t max_entries = SIZE_MAX, max_texts = SIZE_MAX;
  bool lower_only = false;
  std::string dump;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--lower-only") lower_only = true;
    else if (a == "--dump" && i + 1 < argc) dump = argv[++i];
    else if (a == "--max-entries" && i + 1 < argc) max_entries = std::stoul(argv[++i]);
    else if (a == "--max-texts" && i + 1 < argc) max_texts = std::stoul(argv[++i]);
    else if (a == "--jobs" && i + 1 < argc) jobs = static_cast<unsigned>(std::stoul(argv[++i]));
    else files.push_back(a);
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: %s [--lower-only] [--dump DIR] [--max-texts N] [--max-entries N] [--jobs N] FILE...\n", argv[0]);
    return 2;
  }
  Stats all;
  for (const std::string& path : files) {
    const int fd = open(path.c_str(), O_RDONLY);
    struct stat sb {};
    if (fd < 0 || fstat(fd, &sb) != 0 || sb.st_size == 0) {
      std::printf("## %s\ncannot read\n", path.c_str());
      if (fd >= 0) close(fd);
      continue;
    }
    void* map = mmap(nullptr, static_cast<size_t>(sb.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) continue;
    Stats st;
    std::vector<std::string> texts = texts_of(static_cast<const uint8_t*>(map), static_cast<size_t>(sb.st_size), st);
    munmap(map, static_cast<size_t>(sb.st_size));
    if (texts.size() > max_texts) texts.resize(max_texts);
    st.texts = texts.size();
    if (!dump.empty()) {
      const std::string base = dump + "/" + path.substr(path.find_last_of('/') + 1);
      for (size_t i = 0; i < texts.size(); ++i)
        if (FILE* f = std::fopen((base + "." + std::to_string(i) + ".ptx").c_str(), "wb")) {
          std::fwrite(texts[i].data(), 1, texts[i].size(), f);
          std::fclose(f);
        }
      std::printf("## %s: %zu PTX texts written\n", path.c_str(), texts.size());
      continue;
    }
    std::mutex mu;
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    for (unsigned j = 0; j < jobs; ++j)
      pool.emplace_back([&] {
        for (size_t i; (i = next.fetch_add(1)) < texts.size();) compile_text(texts[i], st, mu, max_entries, lower_only);
      });
    for (std::thread& t : pool) t.join();
    report(path, st);
    all.fatbins += st.fatbins;
    all.texts += st.texts;
    all.parse_failures += st.parse_failures;
    all.entries += st.entries;
    all.compiled += st.compiled;
    all.failed += st.failed;
    all.parse_s += st.parse_s;
    all.compile_s += st.compile_s;
    if (st.slowest_s > all.slowest_s) {
      all.slowest_s = st.slowest_s;
      all.slowest = st.slowest;
    }
    for (auto& [r, n] : st.reasons) all.reasons[r] += n;
    for (auto& [v, n] : st.versions) all.versions[v] += n;
    for (auto& [t, n] : st.targets) all.targets[t] += n;
  }
  if (files.size() > 1) report("all files", all);
  return 0;
}
