// Image intake (src/ptx/image.h) on nvcc 13.0's own output: the samples in
// tests/kernels/images (regen.sh rebuilds them), then the same samples
// truncated, corrupted and mutated, which must be refused, never crash.
#include "ptx/image.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#ifndef CUCPU_IMAGE_SAMPLES_DIR
#error "CUCPU_IMAGE_SAMPLES_DIR must name tests/kernels/images"
#endif

namespace cucpu::ptx {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes sample(const std::string& name) {
  std::ifstream file(std::string(CUCPU_IMAGE_SAMPLES_DIR) + "/" + name, std::ios::binary);
  EXPECT_TRUE(file) << "missing sample " << name;
  return Bytes(std::istreambuf_iterator<char>(file), {});
}

std::string sample_text(const std::string& name) {
  Bytes b = sample(name);
  return std::string(b.begin(), b.end());
}

// nvcc embeds PTX without comments and indentation: compare the lines
// that carry code, with each run of blanks made one space.
std::vector<std::string> code_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (size_t c = line.find("//"); c != std::string::npos) line.resize(c);
    std::string squeezed;
    for (char ch : line) {
      bool blank = ch == ' ' || ch == '\t' || ch == '\r';
      if (!blank) squeezed += ch;
      else if (!squeezed.empty() && squeezed.back() != ' ') squeezed += ' ';
    }
    while (!squeezed.empty() && squeezed.back() == ' ') squeezed.pop_back();
    if (!squeezed.empty()) lines.push_back(squeezed);
    start = end + 1;
  }
  return lines;
}

// Reads `bytes[0, length)` from a heap block of exactly that length, so
// that the sanitizers see any read past it; `size` is what read_image is
// told (0: unknown).
ImageContents read_exact(const Bytes& bytes, size_t length, size_t size) {
  std::unique_ptr<uint8_t[]> block(new uint8_t[length ? length : 1]);
  std::memcpy(block.get(), bytes.data(), length);
  return read_image(block.get(), size);
}
ImageContents read_known(const Bytes& bytes) { return read_exact(bytes, bytes.size(), bytes.size()); }
ImageContents read_unknown(const Bytes& bytes) { return read_exact(bytes, bytes.size(), 0); }

// The __fatBinC_Wrapper_t that cudart registers.
struct Wrapper {
  uint32_t magic = 0x466243B1;
  uint32_t version = 1;
  const void* data = nullptr;
  const void* filename_or_fatbins = nullptr;
};

template <class T>
void put(Bytes& b, size_t offset, T value) {
  std::memcpy(b.data() + offset, &value, sizeof value);
}
template <class T>
T get(const Bytes& b, size_t offset) {
  T v;
  std::memcpy(&v, b.data() + offset, sizeof v);
  return v;
}

const char* const kPtxFatbins[] = {
    "add_one.compute_75.fatbin",       "add_one.compute_75.size.fatbin",  "add_one.compute_75.speed.fatbin",
    "add_one.compute_75.none.fatbin",  "add_one.compute_75.zlib.fatbin",  "add_one.compute_75.lz4frame.fatbin",
    "add_one.compute_75_90.fatbin",    "add_one.order.fatbin",            "add_one.arch_sm_75.fatbin",
    "add_one.rdc.relfatbin",
};

// -- PTX text -------------------------------------------------------------

TEST(ImagePtxText, PassesThroughAsIs) {
  const std::string ptx = sample_text("add_one.compute_75.ptx");
  ImageContents r = read_image(ptx.c_str(), 0);
  ASSERT_EQ(r.status, ImageStatus::kOk) << r.log;
  ASSERT_EQ(r.ptx.size(), 1u);
  EXPECT_EQ(r.ptx[0], ptx);
  // With the size known the text needs no NUL (a file read as is).
  Bytes bytes(ptx.begin(), ptx.end());
  r = read_known(bytes);
  ASSERT_EQ(r.status, ImageStatus::kOk) << r.log;
  EXPECT_EQ(r.ptx[0], ptx);
  r = read_image(ptx.c_str(), ptx.size() + 1);
  ASSERT_EQ(r.status, ImageStatus::kOk) << r.log;
  EXPECT_EQ(r.ptx[0], ptx);
}

TEST(ImagePtxText, BlanksAndCommentsBeforeTheDirectivesAreAccepted) {
  const std::string ptx = "\n  /* a block\n comment */\t// a line comment\n.version 9.0\n.target sm_75\n";
  ImageContents r = read_image(ptx.c_str(), 0);
  ASSERT_EQ(r.status, ImageStatus::kOk) << r.log;
  EXPECT_EQ(r.ptx.at(0), ptx);
}

TEST(ImagePtxText, TextThatIsNotPtxIsRefused) {
  for (const char* text : {"", "   \n\t", "hello", "// only a comment", "/* unterminated .version", "version 9.0"}) {
    EXPECT_EQ(read_image(text, 0).status, ImageStatus::kInvalidImage) << text;
    Bytes bytes(text, text + std::strlen(text));
    if (!bytes.empty()) {
      EXPECT_EQ(read_known(bytes).status, ImageStatus::kInvalidImage) << text;
    }
  }
}

// -- fatbins ----------------------------------------------------------------

// One compute_75 PTX entry, in each compression nvcc and fatbinary write.
TEST(ImageFatbin, EachCompressionYieldsThePtx) {
  const auto expected = code_lines(sample_text("add_one.compute_75.ptx"));
  for (const char* name : {"add_one.compute_75.fatbin", "add_one.compute_75.size.fatbin",
                           "add_one.compute_75.speed.fatbin", "add_one.compute_75.none.fatbin",
                           "add_one.compute_75.zlib.fatbin", "add_one.compute_75.lz4frame.fatbin"}) {
    SCOPED_TRACE(name);
    const Bytes fatbin = sample(name);
    for (ImageContents r : {read_known(fatbin), read_unknown(fatbin)}) {
      ASSERT_EQ(r.status, ImageStatus::kOk) << r.log;
      ASSERT_EQ(r.ptx.size(), 1u);
      EXPECT_EQ(r.ptx[0].find('\0'), std::string::npos);
      EXPECT_EQ(code_lines(r.ptx[0]), expected);
    }
  }
}

TEST(ImageFatbin, TwoArchitecturesNewestFirst) {
  ImageContents r = read_known(sample("add_one.compute_75_90.fatbin"));
  ASSERT_EQ(r.status, ImageStatus::kOk) << r.log;
  ASSERT_EQ(r.ptx.size(), 2u);
  EXPECT_EQ(code_lines(r.ptx[0]), code_lines(sample_text("add_one.compute_90.ptx")));
  EXPECT_EQ(code_lines(r.ptx[1]), code_lines(sample_text("add_one.compute_75.ptx")));
}

// Listed as compute_75 (ISA 9.0), compute_90, compute_75 (ISA 8.5).
TEST(ImageFatbin, OrderedByArchitectureThenIsaVersion) {
  ImageContents r = read_known(sample("add_one.order.fatbin"));
  ASSERT_EQ(r.status, ImageStatus::kOk) << r.log;
  ASSERT_EQ(r.ptx.size(), 3u);
  EXPECT_EQ(code_lines(r.ptx[0]), code_lines(sample_text("add_one.compute_90.ptx")));
  EXPECT_EQ(code_lines(r.ptx[1]), code_lines(sample_text("add_one.compute_75.ptx")));
  EXPECT_EQ(code_lines(r.ptx[2]), code_lines(sample_text("add_one.compute_75.isa85.ptx")));
}

// -arch=sm_75 embeds SASS and PTX: the SASS is skipped, and said so.
TEST(ImageFatbin, SassBesidePtxIsSkipped) {
  ImageContents r = read_known(sample("add_one.arch_sm_75.fatbin"));
  ASSERT_EQ(r.status, ImageStatus::kOk) << r.log;
  ASSERT_EQ(r.ptx.size(), 1u);
  EXPECT_EQ(code_lines(r.ptx[0]), code_lines(sample_text("add_one.compute_75.ptx")));
  EXPECT_NE(r.log.find("SASS for sm_75"), std::string::npos) << r.log;
}

// A program's .nv_fatbin holds its translation units back to back.
TEST(ImageFatbin, BackToBackContainersAreReadInTurn) {
  const Bytes section = sample("two_units.nv_fatbin");
  ImageContents r = read_known(section);
  ASSERT_EQ(r.status, ImageStatus::kOk) << r.log;
  ASSERT_EQ(r.ptx.size(), 2u);
  EXPECT_EQ(code_lines(r.ptx[0]), code_lines(sample_text("add_one.compute_75.ptx")));
  EXPECT_EQ(code_lines(r.ptx[1]), code_lines(sample_text("scale.compute_75.ptx")));
  // Size unknown: the first container only (what follows is another unit's).
  r = read_unknown(section);
  ASSERT_EQ(r.status, ImageStatus::kOk) << r.log;
  ASSERT_EQ(r.ptx.size(), 1u);
  EXPECT_EQ(code_lines(r.ptx[0]), code_lines(sample_text("add_one.compute_75.ptx")));
  // Zero padding after the last container is accepted; anything else is not.
  Bytes padded = section;
  padded.resize(section.size() + 13, 0);
  EXPECT_EQ(read_known(padded).status, ImageStatus::kOk);
  padded.back() = 1;
  EXPECT_EQ(read_known(padded).status, ImageStatus::kInvalidImage);
}

// -- the registration wrapper -------------------------------------------------

TEST(ImageWrapper, Version1PointsAtTheFatbin) {
  const Bytes fatbin = sample("add_one.compute_75_90.fatbin");
  Wrapper w{.version = 1, .data = fatbin.data()};
  ImageContents r = read_image(&w, 0);
  ASSERT_EQ(r.status, ImageStatus::kOk) << r.log;
  ASSERT_EQ(r.ptx.size(), 2u);
  EXPECT_EQ(code_lines(r.ptx[0]), code_lines(sample_text("add_one.compute_90.ptx")));
  EXPECT_EQ(read_image(&w, sizeof w).status, ImageStatus::kOk);
  EXPECT_EQ(read_image(&w, sizeof w - 1).status, ImageStatus::kInvalidImage);
}

// -rdc: the linked fatbin has SASS only; each unit's prelinked fatbin has
// its PTX. Every unit's PTX is part of the program, to be linked.
TEST(ImageWrapper, Version2TakesThePtxOfItsPrelinkedFatbins) {
  const Bytes linked = sample("rdc.linked.fatbin");
  const Bytes add_one = sample("add_one.rdc.relfatbin");
  const Bytes scale = sample("scale.rdc.relfatbin");
  const void* one[] = {add_one.data(), nullptr};
  Wrapper w{.version = 2, .data = linked.data(), .filename_or_fatbins = one};
  ImageContents r = read_image(&w, 0);
  ASSERT_EQ(r.status, ImageStatus::kOk) << r.log;
  ASSERT_EQ(r.ptx.size(), 1u);
  EXPECT_TRUE(r.link_units.empty());
  EXPECT_EQ(code_lines(r.ptx[0]), code_lines(sample_text("add_one.compute_75.ptx")));

  const void* two[] = {add_one.data(), scale.data(), nullptr};
  w.filename_or_fatbins = two;
  r = read_image(&w, 0);
  ASSERT_EQ(r.status, ImageStatus::kOk) << r.log;
  EXPECT_TRUE(r.ptx.empty());
  ASSERT_EQ(r.link_units.size(), 2u);
  EXPECT_EQ(code_lines(r.link_units[0]), code_lines(sample_text("add_one.compute_75.ptx")));

  w.filename_or_fatbins = nullptr;
  r = read_image(&w, 0);
  EXPECT_EQ(r.status, ImageStatus::kNoBinaryForGpu);
  EXPECT_NE(r.log.find("-gencode arch=compute_75,code=compute_75"), std::string::npos) << r.log;
}

TEST(ImageWrapper, MalformedWrappersAreRefused) {
  const Bytes fatbin = sample("add_one.compute_75.fatbin");
  const Bytes text = {'.', 'v', 'e', 'r', 's', 'i', 'o', 'n', 0};
  Wrapper w{.version = 1};
  EXPECT_EQ(read_image(&w, 0).status, ImageStatus::kInvalidImage);  // no data
  w.data = fatbin.data();
  for (uint32_t version : {0u, 3u, 0xFFFFFFFFu}) {
    w.version = version;
    EXPECT_EQ(read_image(&w, 0).status, ImageStatus::kInvalidImage) << version;
  }
  w.version = 1;
  w.data = text.data();  // not a fatbin
  EXPECT_EQ(read_image(&w, 0).status, ImageStatus::kInvalidImage);
  w.version = 2;
  w.data = nullptr;
  EXPECT_EQ(read_image(&w, 0).status, ImageStatus::kInvalidImage);
}

// -- images without PTX ---------------------------------------------------------

TEST(ImageNoPtx, CubinSaysHowToEmbedPtx) {
  const Bytes cubin = sample("add_one.sm_75.cubin");
  for (ImageContents r : {read_known(cubin), read_unknown(cubin)}) {
    EXPECT_EQ(r.status, ImageStatus::kNoBinaryForGpu);
    EXPECT_TRUE(r.ptx.empty());
    EXPECT_NE(r.log.find("-gencode arch=compute_75,code=compute_75"), std::string::npos) << r.log;
  }
}

TEST(ImageNoPtx, SassOnlyFatbinSaysHowToEmbedPtx) {
  for (const char* name : {"add_one.sm_75.fatbin", "rdc.linked.fatbin"}) {
    ImageContents r = read_known(sample(name));
    EXPECT_EQ(r.status, ImageStatus::kNoBinaryForGpu) << name;
    EXPECT_TRUE(r.ptx.empty());
    EXPECT_NE(r.log.find("-gencode arch=compute_75,code=compute_75"), std::string::npos) << r.log;
    EXPECT_NE(r.log.find("-arch=sm_75"), std::string::npos) << r.log;
  }
}

// -- bad input ----------------------------------------------------------------------

TEST(ImageBadInput, NullEmptyAndHugeImagesAreRefused) {
  EXPECT_EQ(read_image(nullptr, 0).status, ImageStatus::kInvalidImage);
  EXPECT_EQ(read_image(nullptr, 100).status, ImageStatus::kInvalidImage);
  // Refused on the size alone: the block is 16 bytes, so any read past it
  // would show under the sanitizers.
  Bytes small = sample("add_one.compute_75.fatbin");
  small.resize(16);
  for (size_t size : {(size_t{1} << 30) + 1, size_t{1} << 40, SIZE_MAX})
    EXPECT_EQ(read_exact(small, small.size(), size).status, ImageStatus::kInvalidImage) << size;
  const uint8_t zero = 0;
  EXPECT_EQ(read_image(&zero, 1).status, ImageStatus::kInvalidImage);
}

TEST(ImageBadInput, TruncationAtAnyOffsetIsRefused) {
  std::vector<std::string> names(std::begin(kPtxFatbins), std::end(kPtxFatbins));
  names.push_back("add_one.sm_75.fatbin");
  for (const std::string& name : names) {
    const Bytes fatbin = sample(name);
    for (size_t length = 1; length < fatbin.size(); ++length)
      ASSERT_EQ(read_exact(fatbin, length, length).status, ImageStatus::kInvalidImage) << name << " at " << length;
  }
  // Two containers: cut exactly between them, the first alone is whole.
  const Bytes section = sample("two_units.nv_fatbin");
  const size_t first = 16 + get<uint64_t>(section, 8);
  for (size_t length = 1; length < section.size(); ++length)
    ASSERT_EQ(read_exact(section, length, length).status,
              length == first ? ImageStatus::kOk : ImageStatus::kInvalidImage)
        << length;
}

// Each field of the compute_75 sample's container and entry headers set to
// values that do not fit. `unknown_ok`: the container's own size is intact,
// so the image may also be read with its size unknown.
TEST(ImageBadInput, CorruptedHeaderFieldsAreRefused) {
  const Bytes good = sample("add_one.compute_75.fatbin");
  ASSERT_EQ(read_known(good).status, ImageStatus::kOk);
  constexpr size_t e = 16;  // the entry header
  const uint64_t files = get<uint64_t>(good, 8);
  const uint32_t payload = get<uint32_t>(good, e + 8);
  const uint32_t compressed = get<uint32_t>(good, e + 16);
  const uint64_t uncompressed = get<uint64_t>(good, e + 56);
  const uint64_t flags = get<uint64_t>(good, e + 40);
  ASSERT_EQ(flags & 0xF000, 0x8000u) << "the sample is expected to be zstd";
  const uint64_t codec_cleared = flags & ~uint64_t{0xF000};
  struct Case {
    const char* what;
    std::function<void(Bytes&)> apply;
    bool unknown_ok;
  };
  const Case cases[] = {
      {"container version 2", [](Bytes& b) { put<uint16_t>(b, 4, 2); }, true},
      {"container header 0", [](Bytes& b) { put<uint16_t>(b, 6, 0); }, true},
      {"container header 8", [](Bytes& b) { put<uint16_t>(b, 6, 8); }, true},
      {"container header 0xFFFF", [](Bytes& b) { put<uint16_t>(b, 6, 0xFFFF); }, true},
      {"files size +8", [&](Bytes& b) { put<uint64_t>(b, 8, files + 8); }, false},
      {"files size -8", [&](Bytes& b) { put<uint64_t>(b, 8, files - 8); }, true},
      {"files size 1", [](Bytes& b) { put<uint64_t>(b, 8, 1); }, true},
      {"files size 2^40", [](Bytes& b) { put<uint64_t>(b, 8, uint64_t{1} << 40); }, true},
      {"files size max", [](Bytes& b) { put<uint64_t>(b, 8, UINT64_MAX); }, true},
      {"entry version", [](Bytes& b) { put<uint16_t>(b, e + 2, 0x0102); }, true},
      {"entry header 0", [](Bytes& b) { put<uint32_t>(b, e + 4, 0); }, true},
      {"entry header 63", [](Bytes& b) { put<uint32_t>(b, e + 4, 63); }, true},
      {"entry header max", [](Bytes& b) { put<uint32_t>(b, e + 4, UINT32_MAX); }, true},
      {"payload +8", [&](Bytes& b) { put<uint32_t>(b, e + 8, payload + 8); }, true},
      {"payload 2^63", [](Bytes& b) { put<uint64_t>(b, e + 8, uint64_t{1} << 63); }, true},
      {"compressed 0", [](Bytes& b) { put<uint32_t>(b, e + 16, 0); }, true},
      {"compressed > payload", [&](Bytes& b) { put<uint32_t>(b, e + 16, payload + 1); }, true},
      {"compressed -1", [&](Bytes& b) { put<uint32_t>(b, e + 16, compressed - 1); }, true},
      {"uncompressed 0", [](Bytes& b) { put<uint64_t>(b, e + 56, 0); }, true},
      {"uncompressed -1", [&](Bytes& b) { put<uint64_t>(b, e + 56, uncompressed - 1); }, true},
      {"uncompressed +1", [&](Bytes& b) { put<uint64_t>(b, e + 56, uncompressed + 1); }, true},
      {"uncompressed 2^40", [](Bytes& b) { put<uint64_t>(b, e + 56, uint64_t{1} << 40); }, true},
      {"zstd and lz4", [&](Bytes& b) { put<uint64_t>(b, e + 40, flags | 0x2000); }, true},
      {"lz4 for zstd", [&](Bytes& b) { put<uint64_t>(b, e + 40, codec_cleared | 0x2000); }, true},
      {"zlib for zstd", [&](Bytes& b) { put<uint64_t>(b, e + 40, codec_cleared | 0x1000); }, true},
      {"lz4 frame for zstd", [&](Bytes& b) { put<uint64_t>(b, e + 40, codec_cleared | 0x4000); }, true},
      {"zstd magic", [](Bytes& b) { b[e + 80] ^= 0xFF; }, true},
  };
  for (const Case& c : cases) {
    Bytes bad = good;
    c.apply(bad);
    EXPECT_EQ(read_known(bad).status, ImageStatus::kInvalidImage) << c.what;
    if (c.unknown_ok) {
      EXPECT_EQ(read_unknown(bad).status, ImageStatus::kInvalidImage) << c.what;
    }
  }
}

TEST(ImageBadInput, GarbageBytesAreRefused) {
  std::mt19937 rng(7);
  for (size_t size : {1, 3, 4, 15, 16, 17, 64, 100, 4096}) {
    Bytes garbage(size);
    for (uint8_t& b : garbage) b = static_cast<uint8_t>(rng());
    garbage[0] = 0xFF;  // never a magic, a blank, a comment or a directive
    EXPECT_EQ(read_known(garbage).status, ImageStatus::kInvalidImage) << size;
    garbage.back() = 0;
    EXPECT_EQ(read_unknown(garbage).status, ImageStatus::kInvalidImage) << size;
    if (size > 16) {  // behind a container magic, version 1 and a header size of 16
      const uint8_t header[] = {0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0};
      std::memcpy(garbage.data(), header, sizeof header);
      put<uint64_t>(garbage, 8, size - 16);
      EXPECT_EQ(read_known(garbage).status, ImageStatus::kInvalidImage) << size;
      EXPECT_EQ(read_unknown(garbage).status, ImageStatus::kInvalidImage) << size;
    }
  }
}

// Random mutations of real fatbins: any status will do, a crash or a
// sanitizer report will not. Past the container header the mutated image
// is also read with its size unknown: the intact header bounds the reads.
TEST(ImageFuzz, MutatedFatbinsNeverCrash) {
  std::vector<Bytes> seeds;
  for (const char* name : kPtxFatbins) seeds.push_back(sample(name));
  seeds.push_back(sample("two_units.nv_fatbin"));
  std::mt19937_64 rng(20250101);
  const uint32_t edges[] = {0, 1, 7, 8, 63, 64, 80, 0x1000, 0x2000, 0x4000, 0x8000, 0x7FFFFFFF, 0xFFFFFFFF};
  int ok = 0;
  for (int iteration = 0; iteration < 4000; ++iteration) {
    const Bytes& seed = seeds[rng() % seeds.size()];
    Bytes image = seed;
    const bool keep_container_header = rng() % 2 == 0;
    const size_t lowest = keep_container_header ? 16 : 0;
    for (int n = 1 + rng() % 6; n > 0; --n) {
      const size_t at = lowest + rng() % (image.size() - lowest);
      switch (rng() % 3) {
        case 0: image[at] = static_cast<uint8_t>(rng()); break;
        case 1: image[at] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
        default:
          if (size_t word = at & ~size_t{3}; word >= lowest && word + 4 <= image.size())
            put<uint32_t>(image, word, edges[rng() % std::size(edges)]);
      }
    }
    ImageContents r = read_known(image);
    if (r.status == ImageStatus::kOk) {
      ++ok;
      EXPECT_FALSE(r.ptx.empty());
    }
    if (keep_container_header) read_unknown(image);
  }
  EXPECT_GT(ok, 0);  // some mutations land in payload padding or in the text
}

}  // namespace
}  // namespace cucpu::ptx
