// Compiled kernels cached by content: in the process (each kernel is
// linked into the JIT once) and on disk under $XDG_CACHE_HOME/cucpu
// (~/.cache/cucpu), so that a second run of a program pays no compile.
// CUCPU_CACHE=0 turns the disk cache off. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace cucpu::ptx {
struct KernelLayout;
}

namespace cucpu::ptx {

// A key for one entry of one PTX text, for this build of cucpu and this CPU.
std::string code_key(std::string_view ptx, std::string_view entry);

// The layout and object of a kernel compiled in an earlier run, if the
// disk cache holds them intact, and whether the object is the full tier's
// (jit.h; else the quick tier's, which the full tier's replaces when made).
bool disk_cache_load(const std::string& key, KernelLayout* layout, std::string* object, bool* full);
void disk_cache_store(const std::string& key, const KernelLayout& layout, const std::string& object, bool full);

// How many kernels this process took from the disk cache (diagnostics, tests).
uint64_t disk_cache_hits();

}  // namespace cucpu::ptx
