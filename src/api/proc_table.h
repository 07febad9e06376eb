// The table cuGetProcAddress serves: every entry point of entry_points.inc
// with the versions it answers for. Defined in stubs.cpp, where taking each
// address binds to the strong definition when one exists.
#pragma once

namespace cucpu {

struct RawProcEntry {
  const char* base;  // the name without _v2 or _ptsz/_ptds suffixes
  void* fn;
  int since[3];      // CUDA version: default, legacy stream, per-thread default stream
};
extern const RawProcEntry kProcEntries[];
extern const unsigned kProcEntryCount;

}  // namespace cucpu
