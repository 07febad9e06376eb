// Memory files (memfd): memory that another mapping, or another process,
// can map too.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cucpu {

// A new memory file of `bytes` zero bytes (close-on-exec), or -1.
int make_memory_file(const char* name, size_t bytes);

// Another process's descriptor `fd` opened read-write through
// /proc/PID/fd, if it is still the file of device `dev` and inode `ino`
// with at least `min_bytes`; else -1 (the process is gone, or closed it).
int open_peer_file(int32_t pid, int32_t fd, uint64_t dev, uint64_t ino, size_t min_bytes);

}  // namespace cucpu
