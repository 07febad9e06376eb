// Image intake: what cuModuleLoadData, cuLibraryLoadData and cudart's
// registration hand the driver, reduced to the PTX texts it carries.
//
// Accepted: PTX text (NUL-terminated, or as long as the size given), a
// fatbin container (one or several back to back), the __fatBinC_Wrapper_t
// that points at one, and ELF cubins (which carry SASS only, so they yield
// no PTX). Compressed PTX entries (zstd, LZ4 block or frame, zlib) are
// decompressed. Nothing here trusts the image: every size and
// offset is checked before it is used.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cucpu::ptx {

enum class ImageStatus {
  kOk,               // `ptx` holds at least one text
  kInvalidImage,     // not an image, or a malformed one (CUDA_ERROR_INVALID_IMAGE)
  kNoBinaryForGpu,   // a valid image with no PTX (SASS only, or an ELF cubin)
};

struct ImageContents {
  ImageStatus status = ImageStatus::kInvalidImage;
  // The PTX texts, newest first (by the entry's virtual architecture, then
  // its PTX ISA version): the caller compiles the first one it can parse.
  std::vector<std::string> ptx;
  // The image is PTX text itself, not a fatbin or wrapper holding texts.
  bool plain_text = false;
  // Separately compiled code (-rdc) whose linked fatbin has no PTX: the
  // newest PTX of each translation unit, in unit order. The program is all of
  // them linked (as cuLinkComplete links its inputs); `ptx` is then empty.
  std::vector<std::string> link_units;
  // Why the image was refused, or what was skipped (for the JIT logs and
  // CUCPU_LOG): for kNoBinaryForGpu it says how to embed PTX.
  std::string log;
};

// `size` is the image's size when the caller knows it (cuLibraryLoadData
// from a file), or 0 when only the pointer is known (cuModuleLoadData):
// then the image's own headers bound every read, and of fatbin containers
// back to back only the first is read (in a program, the next one is
// another translation unit's). Images over 1 GiB, or whose compressed PTX
// would decompress to over 256 MiB in all, are refused.
//
// A version-2 wrapper (separate compilation, -rdc) holds the device-linked
// fatbin and each translation unit's prelinked one: the linked fatbin's PTX
// is taken when it has some, else each unit's (link_units).
ImageContents read_image(const void* image, size_t size);
// Whether a separately compiled unit's PTX is libcudadevrt's (the device
// runtime nvcc links into every -rdc program), which cucpu replaces with its
// own (devrt/device_calls.inc): such a unit is left out of programs.
bool is_device_runtime_unit(const std::string& text);
// The largest image read (bytes).
constexpr size_t kMaxImageSize = size_t{1} << 30;
// Whether `image` (not null) begins with a fatbin wrapper's magic, read byte
// by byte so that a shorter NUL-terminated text is never overrun.
bool is_fatbin_wrapper(const void* image);

}  // namespace cucpu::ptx
