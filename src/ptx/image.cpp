// Image intake (the contract is in image.h). The fatbin layout below is
// what nvcc 13.0 writes, checked on the samples in tests/kernels/images
// (regen.sh there rebuilds them).
//
// Container header, 16 bytes:
//   u32 magic 0xBA55ED50, u16 version 1, u16 header size (16),
//   u64 bytes of entries that follow the header.
// Entry header (its own size at +4: 64 for SASS, 80 or more for PTX, which
// appends its option string and, in debug builds, its source file name):
//   +0  u16 kind (1 PTX, 2 ELF with SASS, 8 LTO IR)   +2  u16 version 0x0101
//   +4  u32 header size                               +8  u64 payload size
//   +16 u32 compressed size (0: stored)               +20 u32 offset of the
//       option-string descriptor in the header        +24 u32 version:
//       major << 16 | minor (the PTX ISA for PTX)     +28 u32 arch (75 = sm_75)
//   +32 u32, +36 u32 source file name offset, length  +40 u64 flags
//   +48 u64 (unused here)                             +56 u64 uncompressed size
// The payload follows the header, padded to 8 bytes; the next entry follows
// the payload. PTX payloads are NUL-terminated text (nvcc strips comments
// and indentation), NUL-padded when stored.
// Flags: 0x1 64-bit, 0x2 debug, 0x10 Linux, 0x100000 arch-specific
// (sm_90a), 0x200000 family (sm_100f); the compression, at most one of:
// 0x1000 zlib stream, 0x2000 LZ4 block, 0x4000 LZ4 frame, 0x8000 zstd.
#include "ptx/image.h"

#include <lz4.h>
#include <lz4frame.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <utility>

namespace cucpu::ptx {
namespace {

static_assert(std::endian::native == std::endian::little, "fatbin headers are read in place");

constexpr uint32_t kWrapperMagic = 0x466243B1;
constexpr uint32_t kWrapperVersionFatbin = 1;     // data: the fatbin
constexpr uint32_t kWrapperVersionPrelinked = 2;  // data plus an array of prelinked fatbins
constexpr size_t kWrapperSize = 8 + 2 * sizeof(void*);

constexpr uint32_t kContainerMagic = 0xBA55ED50;
constexpr uint16_t kContainerVersion = 1;
constexpr size_t kContainerHeaderMin = 16;

constexpr size_t kEntryHeaderMin = 64;
constexpr uint16_t kEntryVersion = 0x0101;
constexpr uint16_t kKindPtx = 1;
constexpr uint16_t kKindElf = 2;
constexpr uint16_t kKindLtoIr = 8;

constexpr uint64_t kFlagZlib = 0x1000;
constexpr uint64_t kFlagLz4Block = 0x2000;
constexpr uint64_t kFlagLz4Frame = 0x4000;
constexpr uint64_t kFlagZstd = 0x8000;
constexpr uint64_t kCompressionFlags = kFlagZlib | kFlagLz4Block | kFlagLz4Frame | kFlagZstd;

// Limits on what a hostile image can make us read or allocate.
constexpr size_t kMaxHeaderSize = 4096;             // container and entry headers (nvcc: 16; 64..128)
constexpr size_t kMaxDecompressed = size_t{256} << 20;  // all entries of one image together
constexpr size_t kMaxPrelinked = 4096;              // fatbins in a version-2 wrapper's array

template <class T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// One PTX text found, with what orders it among the others.
struct FoundPtx {
  uint32_t arch = 0;  // virtual architecture: 90 for compute_90
  uint32_t isa = 0;   // PTX ISA version, major << 16 | minor
  size_t unit = 0;    // which fatbin of a version-2 wrapper (0: its linked one)
  std::string text;
};

// What one read_image call has found so far. Reading stops at the first
// malformed piece: fail() records why and the whole image is refused.
struct Intake {
  std::vector<FoundPtx> ptx;
  std::vector<std::string> skipped;  // entries that carry no PTX, described
  uint32_t newest_sass_arch = 0;     // for the hint when no PTX is found
  size_t unit = 0;                   // stamped on the PTX found next
  size_t decompress_budget = kMaxDecompressed;
  std::string log;

  bool fail(const std::string& why) {
    log += why;
    log += '\n';
    return false;
  }
};

std::string size_mismatch(const char* codec, size_t got, size_t declared) {
  return std::string(codec) + ": " + std::to_string(got) + " bytes, not the declared " + std::to_string(declared);
}

// Decompresses `src` into exactly `out_size` bytes at `dst`; false with
// `why` when the data is corrupt or does not decompress to that size.
bool decompress(uint64_t codec, const uint8_t* src, size_t src_size, char* dst, size_t out_size, std::string& why) {
  switch (codec) {
    case kFlagZstd: {
      size_t n = ZSTD_decompress(dst, out_size, src, src_size);
      if (ZSTD_isError(n)) return why = std::string("zstd: ") + ZSTD_getErrorName(n), false;
      if (n != out_size) return why = size_mismatch("zstd", n, out_size), false;
      return true;
    }
    case kFlagLz4Block: {
      if (src_size > INT_MAX || out_size > INT_MAX) return why = "lz4: too large", false;
      int n = LZ4_decompress_safe(reinterpret_cast<const char*>(src), dst, static_cast<int>(src_size),
                                  static_cast<int>(out_size));
      if (n < 0) return why = "lz4: corrupt block", false;
      if (static_cast<size_t>(n) != out_size) return why = size_mismatch("lz4", n, out_size), false;
      return true;
    }
    case kFlagLz4Frame: {
      LZ4F_dctx* dctx = nullptr;
      if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)))
        return why = "lz4 frame: no context", false;
      size_t in_done = 0, out_done = 0;
      bool ok = true;
      while (in_done < src_size) {
        size_t in_step = src_size - in_done, out_step = out_size - out_done;
        size_t hint = LZ4F_decompress(dctx, dst + out_done, &out_step, src + in_done, &in_step, nullptr);
        if (LZ4F_isError(hint)) {
          why = std::string("lz4 frame: ") + LZ4F_getErrorName(hint);
          ok = false;
          break;
        }
        in_done += in_step;
        out_done += out_step;
        if (in_step == 0 && out_step == 0) {  // output full, or input exhausted mid-frame
          why = "lz4 frame: more data than the declared " + std::to_string(out_size) + " bytes, or truncated";
          ok = false;
          break;
        }
      }
      LZ4F_freeDecompressionContext(dctx);
      if (ok && out_done != out_size) {
        why = size_mismatch("lz4 frame", out_done, out_size);
        ok = false;
      }
      return ok;
    }
    case kFlagZlib: {
      uLongf n = out_size;
      uLong in = src_size;
      int rc = uncompress2(reinterpret_cast<Bytef*>(dst), &n, src, &in);
      if (rc != Z_OK) return why = "zlib: error " + std::to_string(rc), false;
      if (n != out_size) return why = size_mismatch("zlib", n, out_size), false;
      return true;
    }
  }
  why = "unknown compression";
  return false;
}

// Reads one entry: `p` holds its `header_size`-byte header and then its
// `payload_size`-byte payload, both already checked to lie in the image.
bool read_entry(const uint8_t* p, size_t header_size, size_t payload_size, size_t index, Intake& in) {
  const std::string where = "fatbin entry " + std::to_string(index) + ": ";
  const uint16_t kind = load<uint16_t>(p + 0);
  const uint16_t version = load<uint16_t>(p + 2);
  const uint32_t arch = load<uint32_t>(p + 28);
  if (version != kEntryVersion) return in.fail(where + "unknown entry version " + std::to_string(version));
  if (kind != kKindPtx) {
    std::string what = kind == kKindElf     ? "SASS for sm_" + std::to_string(arch)
                       : kind == kKindLtoIr ? "LTO IR for sm_" + std::to_string(arch)
                                            : "kind " + std::to_string(kind) + " for sm_" + std::to_string(arch);
    if (kind == kKindElf) in.newest_sass_arch = std::max(in.newest_sass_arch, arch);
    in.log += where + what + ": skipped (cucpu compiles PTX)\n";
    in.skipped.push_back(std::move(what));
    return true;
  }

  const uint64_t flags = load<uint64_t>(p + 40);
  const uint8_t* payload = p + header_size;
  FoundPtx found{arch, load<uint32_t>(p + 24), in.unit, {}};
  if (const uint64_t codec = flags & kCompressionFlags; codec == 0) {
    const char* text = reinterpret_cast<const char*>(payload);
    found.text.assign(text, strnlen(text, payload_size));
  } else {
    const uint32_t compressed_size = load<uint32_t>(p + 16);
    const uint64_t uncompressed_size = load<uint64_t>(p + 56);
    if (std::popcount(codec) != 1) return in.fail(where + "several compression flags at once");
    if (compressed_size == 0 || compressed_size > payload_size)
      return in.fail(where + "compressed size " + std::to_string(compressed_size) + " does not fit the payload of " +
                     std::to_string(payload_size) + " bytes");
    if (uncompressed_size == 0 || uncompressed_size > in.decompress_budget)
      return in.fail(where + "uncompressed size " + std::to_string(uncompressed_size) + " is 0 or over the " +
                     std::to_string(kMaxDecompressed >> 20) + " MiB the image may decompress to");
    in.decompress_budget -= uncompressed_size;
    // Left uninitialised: the pages a failed decompression never reaches
    // are never touched.
    std::unique_ptr<char[]> buffer(new (std::nothrow) char[uncompressed_size]);
    if (!buffer) return in.fail(where + "out of memory for " + std::to_string(uncompressed_size) + " bytes");
    std::string why;
    if (!decompress(codec, payload, compressed_size, buffer.get(), uncompressed_size, why))
      return in.fail(where + why);
    found.text.assign(buffer.get(), strnlen(buffer.get(), uncompressed_size));
  }
  if (found.text.empty()) {
    in.log += where + "empty PTX for compute_" + std::to_string(arch) + ": skipped\n";
    return true;
  }
  in.ptx.push_back(std::move(found));
  return true;
}

// Reads the container at `p`. `avail` bounds it when the image's size is
// known; 0 means unknown, and then the container's own header is the bound.
// On success `*used` is the container's size.
bool read_container(const uint8_t* p, size_t avail, size_t* used, Intake& in) {
  if (avail != 0 && avail < kContainerHeaderMin) return in.fail("fatbin: truncated container header");
  const uint16_t version = load<uint16_t>(p + 4);
  const size_t header_size = load<uint16_t>(p + 6);
  const uint64_t files_size = load<uint64_t>(p + 8);
  if (version != kContainerVersion) return in.fail("fatbin: unknown container version " + std::to_string(version));
  if (header_size < kContainerHeaderMin || header_size > kMaxHeaderSize)
    return in.fail("fatbin: container header size " + std::to_string(header_size));
  if (files_size > kMaxImageSize) return in.fail("fatbin: container claims " + std::to_string(files_size) + " bytes");
  const size_t total = header_size + files_size;
  if (avail != 0 && total > avail)
    return in.fail("fatbin: container claims " + std::to_string(total) + " bytes, the image has " +
                   std::to_string(avail));
  size_t off = header_size, index = 0;
  while (off < total) {
    const size_t left = total - off;
    if (left < kEntryHeaderMin) return in.fail("fatbin: truncated entry header at offset " + std::to_string(off));
    const size_t entry_header = load<uint32_t>(p + off + 4);
    const uint64_t payload = load<uint64_t>(p + off + 8);
    if (entry_header < kEntryHeaderMin || entry_header > kMaxHeaderSize || entry_header > left)
      return in.fail("fatbin: entry header size " + std::to_string(entry_header) + " at offset " +
                     std::to_string(off));
    if (payload > left - entry_header)
      return in.fail("fatbin: entry payload of " + std::to_string(payload) + " bytes at offset " + std::to_string(off) +
                     " overruns the container");
    if (!read_entry(p + off, entry_header, payload, index++, in)) return false;
    off += entry_header + payload;
  }
  *used = total;
  return true;
}

// Reads a fatbin at `p` (its container magic already seen). With the size
// known, it holds containers back to back (8-byte aligned, as the linker
// lays out .nv_fatbin), then nothing but zero padding. With the size
// unknown (0) only the first container is read: whatever follows it is not
// vouched for, and in a program it is another translation unit's fatbin.
bool read_fatbin(const uint8_t* p, size_t size, Intake& in) {
  auto zero = [](uint8_t b) { return b == 0; };
  size_t off = 0;
  while (true) {
    size_t used = 0;
    if (!read_container(p + off, size == 0 ? 0 : size - off, &used, in)) return false;
    off += used;
    if (size == 0 || std::all_of(p + off, p + size, zero)) return true;
    const size_t next = (off + 7) & ~size_t{7};
    if (next > size || size - next < 4 || !std::all_of(p + off, p + next, zero) ||
        load<uint32_t>(p + next) != kContainerMagic)
      return in.fail("fatbin: the " + std::to_string(size - off) + " bytes after the container ending at offset " +
                     std::to_string(off) + " are neither padding nor a container");
    off = next;
  }
}

// How to build an image this driver can run, for sm_`arch` (0: unknown).
std::string embed_ptx_hint(uint32_t arch) {
  const std::string xx = arch ? std::to_string(arch) : "XX";
  return "cucpu compiles PTX, so embed it: -gencode arch=compute_" + xx + ",code=compute_" + xx +
         " (or -arch=sm_" + xx + ", which embeds PTX as well as SASS)\n";
}

// The PTX texts, newest first; or, with none, the hint on embedding PTX.
ImageContents finish(Intake& in) {
  ImageContents out;
  // A version-2 wrapper's units are separate translation units, not
  // alternatives. The linked fatbin (unit 0) wins when it has PTX; else
  // every unit's newest PTX is part of the program.
  auto newer = [](const FoundPtx& a, const FoundPtx& b) {
    return a.arch != b.arch ? a.arch > b.arch : a.isa > b.isa;
  };
  bool has_linked = std::any_of(in.ptx.begin(), in.ptx.end(), [](const FoundPtx& f) { return f.unit == 0; });
  if (has_linked) {
    std::erase_if(in.ptx, [](const FoundPtx& f) { return f.unit != 0; });
  } else if (!in.ptx.empty() &&
             std::any_of(in.ptx.begin(), in.ptx.end(), [&](const FoundPtx& f) { return f.unit != in.ptx[0].unit; })) {
    std::stable_sort(in.ptx.begin(), in.ptx.end(), [&](const FoundPtx& a, const FoundPtx& b) {
      return a.unit != b.unit ? a.unit < b.unit : newer(a, b);
    });
    out.status = ImageStatus::kOk;
    out.log = std::move(in.log);
    for (size_t i = 0; i < in.ptx.size(); ++i)
      if ((i == 0 || in.ptx[i].unit != in.ptx[i - 1].unit) && !is_device_runtime_unit(in.ptx[i].text))
        out.link_units.push_back(std::move(in.ptx[i].text));
    return out;
  }
  if (in.ptx.empty()) {
    std::string found = "nothing";
    if (!in.skipped.empty()) {
      found.clear();
      for (const std::string& s : in.skipped) found += (found.empty() ? "" : ", ") + s;
    }
    out.status = ImageStatus::kNoBinaryForGpu;
    out.log = in.log + "the image carries no PTX (found: " + found + "); " + embed_ptx_hint(in.newest_sass_arch);
    return out;
  }
  std::stable_sort(in.ptx.begin(), in.ptx.end(), newer);
  out.status = ImageStatus::kOk;
  out.log = std::move(in.log);
  for (FoundPtx& f : in.ptx) out.ptx.push_back(std::move(f.text));
  return out;
}

ImageContents refuse(std::string why) {
  ImageContents out;
  out.status = ImageStatus::kInvalidImage;
  out.log = std::move(why);
  out.log += '\n';
  return out;
}

// True when the text's first token, past whitespace and comments, is a
// directive ('.version', '.target', ...).
bool looks_like_ptx(const char* s, size_t n) {
  size_t i = 0;
  while (i < n) {
    const char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      i += 2;
      while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/')) ++i;
      if (i + 1 >= n) return false;
      i += 2;
    } else {
      return c == '.';
    }
  }
  return false;
}

ImageContents read_wrapper(const uint8_t* p, size_t size) {
  if (size != 0 && size < kWrapperSize) return refuse("fatbin wrapper: truncated");
  const uint32_t version = load<uint32_t>(p + 4);
  const auto* data = load<const uint8_t*>(p + 8);
  const auto* prelinked = load<const uint8_t* const*>(p + 8 + sizeof(void*));
  Intake in;
  auto read_unit = [&](const uint8_t* fatbin, const char* what) {
    if (load<uint32_t>(fatbin) != kContainerMagic)
      return in.fail(std::string("fatbin wrapper: ") + what + " is not a fatbin");
    return read_fatbin(fatbin, 0, in);
  };
  if (version == kWrapperVersionFatbin) {
    if (data == nullptr) return refuse("fatbin wrapper: no fatbin");
    if (!read_unit(data, "its data")) return refuse(std::move(in.log));
    return finish(in);
  }
  if (version != kWrapperVersionPrelinked) return refuse("fatbin wrapper: unknown version " + std::to_string(version));
  if (data == nullptr && prelinked == nullptr) return refuse("fatbin wrapper: no fatbin");
  if (data != nullptr && !read_unit(data, "its linked data")) return refuse(std::move(in.log));
  for (size_t i = 0; prelinked != nullptr && prelinked[i] != nullptr; ++i) {
    if (i == kMaxPrelinked)
      return refuse("fatbin wrapper: over " + std::to_string(kMaxPrelinked) + " prelinked fatbins");
    in.unit = i + 1;
    if (!read_unit(prelinked[i], "a prelinked fatbin")) return refuse(std::move(in.log));
  }
  return finish(in);
}

// An ELF cubin carries SASS only. Its 64-bit header (64 bytes, vouched for
// by the ELF magic) names the SM in bits 8..15 of e_flags when its OS ABI
// is CUDA's.
ImageContents read_cubin(const uint8_t* p, size_t size) {
  constexpr size_t kElf64HeaderSize = 64, kOsAbi = 7, kFlags = 0x30;
  constexpr uint8_t kElfClass64 = 2, kOsAbiCuda = 0x41;
  uint32_t arch = 0;
  if ((size == 0 || size >= kElf64HeaderSize) && p[4] == kElfClass64 && p[kOsAbi] == kOsAbiCuda)
    arch = (load<uint32_t>(p + kFlags) >> 8) & 0xFF;
  ImageContents out;
  out.status = ImageStatus::kNoBinaryForGpu;
  out.log = "the image is an ELF cubin" + (arch ? " for sm_" + std::to_string(arch) : std::string()) +
            ", which carries SASS and no PTX; " + embed_ptx_hint(arch);
  return out;
}

}  // namespace

bool is_fatbin_wrapper(const void* image) {
  const auto* p = static_cast<const uint8_t*>(image);
  uint32_t magic = 0;
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) return false;  // no byte of the magic is zero
    magic |= uint32_t{p[i]} << (8 * i);
  }
  return magic == kWrapperMagic;
}

ImageContents read_image(const void* image, size_t size) {
  if (image == nullptr) return refuse("no image (null pointer)");
  if (size > kMaxImageSize) return refuse("image of " + std::to_string(size) + " bytes: over the 1 GiB limit");
  const auto* p = static_cast<const uint8_t*>(image);
  // The first four bytes, read one by one so that a short NUL-terminated
  // text of unknown size is never overrun: no magic holds a zero byte.
  size_t lead = 0;
  while (lead < 4 && (size == 0 || lead < size) && p[lead] != 0) ++lead;
  if (lead == 4) {
    const uint32_t magic = load<uint32_t>(p);
    if (magic == kWrapperMagic) return read_wrapper(p, size);
    if (magic == kContainerMagic) {
      Intake in;
      if (!read_fatbin(p, size, in)) return refuse(std::move(in.log));
      return finish(in);
    }
    if (std::memcmp(p, "\x7f" "ELF", 4) == 0) return read_cubin(p, size);
  }
  const char* text = static_cast<const char*>(image);
  const size_t length = size != 0 ? strnlen(text, size) : strnlen(text, kMaxImageSize + 1);
  if (length > kMaxImageSize) return refuse("text image without a NUL in its first 1 GiB");
  if (!looks_like_ptx(text, length))
    return refuse("not an image: neither a fatbin, a fatbin wrapper, an ELF cubin, nor PTX text (which begins with "
                  "directives such as .version)");
  ImageContents out;
  out.status = ImageStatus::kOk;
  out.plain_text = true;
  out.ptx.emplace_back(text, length);
  return out;
}

// libcudadevrt's unit holds helper kernels for device-side 3D copies, as
// PTX for the newest target only; its internal names carry its source
// file's name.
bool is_device_runtime_unit(const std::string& text) {
  return text.find("_cuda_device_runtime_cu_") != std::string::npos;
}

}  // namespace cucpu::ptx
