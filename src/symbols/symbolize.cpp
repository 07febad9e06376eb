#include "symbols/symbolize.h"

#include <dlfcn.h>
#include <link.h>
#include <llvm/DebugInfo/Symbolize/Symbolize.h>
#include <llvm/Demangle/Demangle.h>
#include <unistd.h>

#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace cucpu::symbols {

namespace {

std::string hex(uint64_t v) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%" PRIx64, v);
  return text;
}

const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

// The main program's link map entry has no name: its file is /proc/self/exe.
std::string module_path(const link_map* lm) {
  if (lm->l_name && *lm->l_name) return lm->l_name;
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
}

// A function's qualified name without its parameters (a line of a report,
// not a signature): "ns::Class::method", "main".
std::string readable_name(const std::string& linkage) {
  llvm::ItaniumPartialDemangler d;
  if (d.partialDemangle(linkage.c_str())) return linkage;  // not a C++ name
  size_t n = 0;
  char* name = d.getFunctionName(nullptr, &n);
  if (!name) return llvm::demangle(linkage);
  std::string out(name);
  std::free(name);
  return out;
}

// One symbolizer for the process: it caches each module it has read. Made
// on first use and never destroyed, as reports may come while the process
// exits.
llvm::symbolize::LLVMSymbolizer& symbolizer() {
  static auto* s = [] {
    llvm::symbolize::LLVMSymbolizer::Options opts;
    opts.Demangle = false;  // readable_name does it
    opts.UseSymbolTable = true;
    return new llvm::symbolize::LLVMSymbolizer(opts);
  }();
  return *s;
}
std::mutex g_symbolizer_mu;  // the symbolizer's caches are not thread-safe

}  // namespace

std::string describe_return_address(const void* pc) {
  const uint64_t at = reinterpret_cast<uintptr_t>(pc);
  Dl_info info{};
  link_map* lm = nullptr;
  if (!dladdr1(pc, &info, reinterpret_cast<void**>(&lm), RTLD_DL_LINKMAP) || !lm) return hex(at);
  const std::string path = module_path(lm);
  const char* module = base_name(path.empty() ? (info.dli_fname ? info.dli_fname : "?") : path.c_str());
  // The call instruction, one byte before where the frame returns to.
  const uint64_t address = at - lm->l_addr - 1;
  llvm::DILineInfo line;
  if (!path.empty()) {
    std::lock_guard<std::mutex> g(g_symbolizer_mu);
    auto found = symbolizer().symbolizeCode(path, {address, llvm::object::SectionedAddress::UndefSection});
    if (found) line = *found;
    else llvm::consumeError(found.takeError());
  }
  const bool named = line.FunctionName != llvm::DILineInfo::BadString && !line.FunctionName.empty();
  if (named) line.FunctionName = readable_name(line.FunctionName);
  if (named && line.Line != 0 && line.FileName != llvm::DILineInfo::BadString)
    return line.FunctionName + " at " + line.FileName + ":" + std::to_string(line.Line) + " (" + module + ")";
  if (info.dli_sname)
    return readable_name(info.dli_sname) + "+" + hex(at - reinterpret_cast<uintptr_t>(info.dli_saddr)) + " (" + module + ")";
  if (named && line.StartAddress) return line.FunctionName + "+" + hex(address + 1 - *line.StartAddress) + " (" + module + ")";
  if (named) return line.FunctionName + " (" + module + ")";
  return std::string(module) + "+" + hex(at - lm->l_addr);
}

}  // namespace cucpu::symbols
