#include "base/memory_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

namespace cucpu {

int make_memory_file(const char* name, size_t bytes) {
  const int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return -1;
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int open_peer_file(int32_t pid, int32_t fd, uint64_t dev, uint64_t ino, size_t min_bytes) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, fd);
  const int own = open(path, O_RDWR | O_CLOEXEC);
  if (own < 0) return -1;
  struct stat st {};
  if (fstat(own, &st) != 0 || st.st_dev != dev || st.st_ino != ino || static_cast<size_t>(st.st_size) < min_bytes) {
    close(own);
    return -1;
  }
  return own;
}

}  // namespace cucpu
