// The kernel compiler on its own (no runtime around it): parsing, code
// generation and execution of nvcc's PTX, faults, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "ptx/code_cache.h"
#include "ptx/jit.h"
#include "ptx/program.h"

using namespace cucpu::ptx;

namespace {

std::string read_file(const std::string& name) {
  std::ifstream f(std::string(CUCPU_PTX_TEST_DIR) + "/" + name);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::shared_ptr<const Kernel> compile(const std::string& file, const char* entry) {
  std::string log;
  auto p = Program::parse(read_file(file), &log);
  EXPECT_TRUE(p) << log;
  if (!p) return nullptr;
  auto k = p->kernel(p->find_entry(entry), &log);
  EXPECT_TRUE(k) << log;
  return k;
}

// The first entry of a PTX text, compiled (tests that hold their PTX inline).
std::shared_ptr<const Kernel> compile_text(const std::string& text) {
  std::string log;
  auto p = Program::parse(text, &log);
  EXPECT_TRUE(p) << log;
  if (!p) return nullptr;
  auto k = p->kernel(0, &log);
  EXPECT_TRUE(k) << log;
  return k;
}

// Memory for a program's module variables, initialised as the runtime does.
struct Globals {
  explicit Globals(const Program& p) {
    for (auto& g : p.globals()) {
      storage.emplace_back(g.size + 16, 0);
      if (!g.init.empty()) std::memcpy(storage.back().data(), g.init.data(), g.init.size());
    }
    for (auto& s : storage) table.push_back(s.data());
  }
  std::vector<std::vector<uint8_t>> storage;
  std::vector<void*> table;
};

Fault launch(const Kernel& k, Dim3 grid, Dim3 block, const void* params, void* const* globals = nullptr, uint32_t dyn = 0) {
  LaunchConfig c;
  c.grid = grid;
  c.block = block;
  c.params = params;
  c.globals = globals;
  c.dynamic_shared_bytes = dyn;
  return k.run_blocks(c, 0, uint64_t{grid.x} * grid.y * grid.z);
}

}  // namespace

TEST(PtxCompiler, SaxpyMatchesTheHostLoop) {
  auto k = compile("basics.sm90.ptx", "saxpy");
  ASSERT_TRUE(k);
  const int n = 1000;
  std::vector<float> x(n), y(n), ref(n);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.25f * i;
    y[i] = 1.0f - i;
    ref[i] = std::fma(2.5f, x[i], y[i]);
  }
  struct {
    int n;
    float a;
    float* x;
    float* y;
  } p{n, 2.5f, x.data(), y.data()};
  ASSERT_FALSE(launch(*k, {4, 1, 1}, {256, 1, 1}, &p));
  EXPECT_EQ(0, std::memcmp(y.data(), ref.data(), sizeof(float) * n));
}

TEST(PtxCompiler, AHotKernelMovesToItsFullTierWithTheSameResults) {
  // Compiled quickly for its first launch; once its quick code has run
  // for about as long as a full compile takes, the run that crosses that
  // mark swaps in the full tier's code, which must compute the same bits.
  // A text of its own, so that no earlier test's code is reused.
  if (tier_policy() != TierPolicy::kTiered) GTEST_SKIP() << "CUCPU_JIT names one tier";
  std::string log;
  auto program = Program::parse(read_file("basics.sm90.ptx") + "\n// the tier test's own text\n", &log);
  ASSERT_TRUE(program) << log;
  auto k = program->kernel(program->find_entry("saxpy"), &log);
  ASSERT_TRUE(k) << log;
  const int n = 1 << 20;
  std::vector<float> x(n), y(n), first(n);
  for (int i = 0; i < n; ++i) x[i] = std::sqrt(static_cast<float>(i)) - 7.25f;
  struct Params {
    int n;
    float a;
    float* x;
    float* y;
  } p{n, 1.0f / 3.0f, x.data(), y.data()};
  auto run = [&] {
    std::copy(x.begin(), x.end(), y.begin());
    return launch(*k, {n / 256, 1, 1}, {256, 1, 1}, &p);
  };
  ASSERT_FALSE(run());
  first = y;
  // Each run takes a millisecond or more: hot within a few hundred runs.
  for (int i = 0; i < 5000 && !k->runs_full_tier(); ++i) ASSERT_FALSE(run());
  ASSERT_TRUE(k->runs_full_tier());
  ASSERT_FALSE(run());
  EXPECT_EQ(0, std::memcmp(first.data(), y.data(), sizeof(float) * n));
}

// Each thread stores its coordinates before and after a warp shuffle: the
// second read comes from a range function run on one warp's span, which
// starts mid-row when the block's x extent does not divide 32, and steps
// from row to row and into the next z.
TEST(PtxCompiler, RangeLoopsGiveEachThreadItsCoordinatesFromAnyFirstThread) {
  const std::string text = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry coords(.param .u64 out)
{
  .reg .b32 %r<16>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %tid.y;
  mov.u32 %r3, %tid.z;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %ntid.y;
  mad.lo.s32 %r6, %r3, %r5, %r2;
  mad.lo.s32 %r7, %r6, %r4, %r1;
  activemask.b32 %r8;
  shfl.sync.idx.b32 %r9, %r7, 0, 31, %r8;
  mov.u32 %r10, %tid.x;
  mov.u32 %r11, %tid.y;
  mov.u32 %r12, %tid.z;
  mul.wide.u32 %rd2, %r7, 16;
  add.s64 %rd3, %rd1, %rd2;
  st.global.v4.u32 [%rd3], {%r10, %r11, %r12, %r9};
  ret;
}
)";
  auto k = compile_text(text);
  ASSERT_TRUE(k);
  for (Dim3 block : {Dim3{5, 7, 3}, Dim3{33, 2, 2}, Dim3{1, 3, 40}, Dim3{7, 1, 1}}) {
    const uint32_t n = block.x * block.y * block.z;
    std::vector<uint32_t> out(n * 4, 0xdeadbeefu);
    struct {
      uint32_t* out;
    } p{out.data()};
    ASSERT_FALSE(launch(*k, {1, 1, 1}, block, &p));
    for (uint32_t t = 0; t < n; ++t) {
      const uint32_t want[4] = {t % block.x, t / block.x % block.y, t / (block.x * block.y), t / 32 * 32};
      for (int i = 0; i < 4; ++i)
        ASSERT_EQ(want[i], out[t * 4 + i]) << "block " << block.x << "x" << block.y << "x" << block.z << ", thread " << t
                                           << ", word " << i;
    }
  }
}

// A run of blocks that starts anywhere in a 3D grid gives each block its
// coordinates (the runner steps them from the run's first block): runs
// that start mid-row, cross rows and planes, and hold one block.
TEST(PtxCompiler, RunsOfBlocksGiveEachBlockItsCoordinatesFromAnyFirstBlock) {
  const std::string text = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry block_ids(.param .u64 out)
{
  .reg .b32 %r<10>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ctaid.y;
  mov.u32 %r3, %ctaid.z;
  mov.u32 %r4, %nctaid.x;
  mov.u32 %r5, %nctaid.y;
  mad.lo.s32 %r6, %r3, %r5, %r2;
  mad.lo.s32 %r7, %r6, %r4, %r1;
  mul.wide.u32 %rd2, %r7, 16;
  add.s64 %rd3, %rd1, %rd2;
  st.global.v4.u32 [%rd3], {%r1, %r2, %r3, %r7};
  ret;
}
)";
  auto k = compile_text(text);
  ASSERT_TRUE(k);
  const Dim3 grid{5, 3, 4};
  const uint32_t n = grid.x * grid.y * grid.z;
  std::vector<uint32_t> out(n * 4, 0xdeadbeefu);
  struct {
    uint32_t* out;
  } p{out.data()};
  LaunchConfig c;
  c.grid = grid;
  c.block = {1, 1, 1};
  c.params = &p;
  const uint64_t cuts[] = {0, 7, 8, 23, 24, 44, 60};
  for (size_t i = 0; i + 1 < std::size(cuts); ++i) ASSERT_FALSE(k->run_blocks(c, cuts[i], cuts[i + 1]));
  for (uint32_t b = 0; b < n; ++b) {
    const uint32_t want[4] = {b % grid.x, b / grid.x % grid.y, b / (grid.x * grid.y), b};
    for (int i = 0; i < 4; ++i) ASSERT_EQ(want[i], out[b * 4 + i]) << "block " << b << ", word " << i;
  }
}

// The warp machine (lower_warps.cpp) resolves full-warp shuffles with
// constant operands in compiled code, hands the rest (here a shuffle whose
// source lane is a register) to the runner, and leaves blocks whose rows
// are not whole warps to the per-resume-point loops. Each block shape below
// takes one of those ways, and each must give every lane what the ISA says.
TEST(PtxCompiler, WarpMachineAndItsFallbacksGiveEachLaneItsShuffles) {
  const std::string text = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry warp_chain(.param .u64 out)
{
  .reg .b32 %r<16>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %tid.y;
  mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r4, %r2, %r3, %r1;
  mad.lo.s32 %r5, %r4, 3, 1;
  shfl.sync.down.b32 %r6, %r5, 16, 31, -1;
  add.s32 %r7, %r5, %r6;
  shfl.sync.bfly.b32 %r8, %r7, 5, 31, -1;
  xor.b32 %r9, %r7, %r8;
  and.b32 %r10, %r4, 31;
  mul.lo.s32 %r11, %r10, 7;
  and.b32 %r12, %r11, 31;
  shfl.sync.idx.b32 %r13, %r9, %r12, 31, -1;
  shfl.sync.up.b32 %r14, %r13, 3, 0, -1;
  mov.u32 %r15, %ctaid.x;
  mad.lo.s32 %r15, %r15, 64, %r4;
  mul.wide.u32 %rd2, %r15, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r14;
  ret;
}
)";
  auto k = compile_text(text);
  ASSERT_TRUE(k);
  // The ISA's answer for the 64 threads of a block (two warps).
  std::vector<uint32_t> want(64);
  for (uint32_t w = 0; w < 2; ++w) {
    uint32_t v[32], a[32], x[32], y[32];
    for (uint32_t l = 0; l < 32; ++l) v[l] = 3 * (w * 32 + l) + 1;
    for (uint32_t l = 0; l < 32; ++l) a[l] = v[l] + (l + 16 <= 31 ? v[l + 16] : v[l]);
    for (uint32_t l = 0; l < 32; ++l) x[l] = a[l] ^ a[l ^ 5];
    for (uint32_t l = 0; l < 32; ++l) y[l] = x[(l * 7) & 31];
    for (uint32_t l = 0; l < 32; ++l) want[w * 32 + l] = l >= 3 ? y[l - 3] : y[l];
  }
  // 32 x 2: whole-warp rows (the machine); 16 x 4 and 8 x 8: rows that are
  // not whole warps (the loops); 64 x 1: one row of two warps.
  for (Dim3 block : {Dim3{32, 2, 1}, Dim3{16, 4, 1}, Dim3{8, 8, 1}, Dim3{64, 1, 1}}) {
    std::vector<uint32_t> out(3 * 64, 0xdeadbeefu);
    struct {
      uint32_t* out;
    } p{out.data()};
    ASSERT_FALSE(launch(*k, {3, 1, 1}, block, &p));
    for (uint32_t t = 0; t < out.size(); ++t)
      ASSERT_EQ(want[t % 64], out[t]) << "block " << block.x << "x" << block.y << ", thread " << t;
  }
}

TEST(PtxCompiler, BlockReductionWithShufflesBarriersAndAtomicsSumsExactly) {
  auto k = compile("basics.sm90.ptx", "reduce");
  ASSERT_TRUE(k);
  EXPECT_EQ(128u, k->info().static_shared_bytes);
  const int n = 3000;
  std::vector<float> x(n);
  double ref = 0;
  for (int i = 0; i < n; ++i) ref += x[i] = static_cast<float>(i % 7);
  float out = 0;
  struct {
    float* in;
    float* out;
    int n;
  } p{x.data(), &out, n};
  ASSERT_FALSE(launch(*k, {12, 1, 1}, {256, 1, 1}, &p));
  EXPECT_EQ(ref, out);
}

TEST(PtxCompiler, LocalConstAndGlobalMemoryFeedTheResultAndPrintfPrints) {
  std::string log;
  auto p = Program::parse(read_file("basics.sm90.ptx"), &log);
  ASSERT_TRUE(p) << log;
  auto k = p->kernel(p->find_entry("loc"), &log);
  ASSERT_TRUE(k) << log;
  EXPECT_EQ(80u, k->info().local_bytes);
  std::vector<std::vector<uint8_t>> storage;
  std::vector<void*> globals;
  for (auto& g : p->globals()) {
    storage.emplace_back(g.size + 16, 0);
    if (!g.init.empty()) std::memcpy(storage.back().data(), g.init.data(), g.init.size());
  }
  for (auto& s : storage) globals.push_back(s.data());
  const float c[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  const int g[4] = {100, 200, 300, 400};
  std::memcpy(globals[static_cast<size_t>(p->find_global("c"))], c, sizeof c);
  std::memcpy(globals[static_cast<size_t>(p->find_global("g"))], g, sizeof g);
  std::vector<int> o(64);
  struct {
    int* o;
    int k;
  } prm{o.data(), 3};
  testing::internal::CaptureStdout();
  ASSERT_FALSE(launch(*k, {1, 1, 1}, {20, 1, 1}, &prm, globals.data()));
  const std::string printed = testing::internal::GetCapturedStdout();
  for (int t = 0; t < 20; ++t) EXPECT_EQ((t & 15) * 3 + static_cast<int>(c[t & 7]) + g[3], o[t]) << t;
  EXPECT_NE(std::string::npos, printed.find("hi 3\n"));
}

TEST(PtxCompiler, TiledSgemmWithSharedMemoryMatchesTheHostLoop) {
  auto k = compile("features.sm90.ptx", "sgemm");
  ASSERT_TRUE(k);
  const int n = 64;
  std::vector<float> a(n * n), b(n * n), c(n * n), ref(n * n);
  for (int i = 0; i < n * n; ++i) {
    a[i] = static_cast<float>(i % 5) - 2;
    b[i] = static_cast<float>(i % 3);
  }
  for (int r = 0; r < n; ++r)
    for (int col = 0; col < n; ++col) {
      float acc = 0;
      for (int j = 0; j < n; ++j) acc += a[r * n + j] * b[j * n + col];
      ref[r * n + col] = acc;
    }
  struct {
    const float* a;
    const float* b;
    float* c;
    int n;
  } p{a.data(), b.data(), c.data(), n};
  ASSERT_FALSE(launch(*k, {4, 4, 1}, {16, 16, 1}, &p));
  EXPECT_EQ(ref, c);
}

TEST(PtxCompiler, RecursionThroughANonInlinedFunctionComputesFibonacci) {
  auto k = compile("features.sm90.ptx", "rec");
  ASSERT_TRUE(k);
  std::vector<int> o(20);
  void* p = o.data();
  ASSERT_FALSE(launch(*k, {1, 1, 1}, {20, 1, 1}, &p));
  int f0 = 0, f1 = 1;
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(f0, o[i]) << i;
    const int f2 = f0 + f1;
    f0 = f1;
    f1 = f2;
  }
}

TEST(PtxCompiler, DynamicSharedMemoryIsSeenByTheWholeBlock) {
  auto k = compile("features.sm90.ptx", "dyn");
  ASSERT_TRUE(k);
  std::vector<float> o(128);
  void* p = o.data();
  ASSERT_FALSE(launch(*k, {1, 1, 1}, {128, 1, 1}, &p, nullptr, 128 * sizeof(float)));
  for (int t = 0; t < 128; ++t) EXPECT_EQ(127 - t, o[t]);
}

TEST(PtxCompiler, FaultsAreValuesNotCrashes) {
  {
    auto k = compile("faults.sm90.ptx", "wild_store");
    void* p = reinterpret_cast<void*>(0x40);
    Fault f = launch(*k, {2, 1, 1}, {32, 1, 1}, &p);
    EXPECT_EQ(FaultKind::kIllegalAddress, f.kind);
    EXPECT_EQ(0x40u, f.address);
    EXPECT_EQ(0u, f.block.x);
  }
  {
    auto k = compile("faults.sm90.ptx", "misaligned");
    std::vector<int> buf(4);
    void* p = buf.data();
    EXPECT_EQ(FaultKind::kMisalignedAddress, launch(*k, {1, 1, 1}, {1, 1, 1}, &p).kind);
  }
  {
    auto k = compile("faults.sm90.ptx", "trap_kernel");
    Fault f = launch(*k, {1, 1, 1}, {32, 1, 1}, nullptr);
    EXPECT_EQ(FaultKind::kTrap, f.kind);
    EXPECT_EQ(3u, f.thread.x);
  }
  {
    std::string log;
    auto prog = Program::parse(read_file("faults.sm90.ptx"), &log);
    auto k = prog->kernel(prog->find_entry("assert_kernel"), &log);
    ASSERT_TRUE(k) << log;
    Globals g(*prog);
    int v = 42;
    EXPECT_FALSE(launch(*k, {1, 1, 1}, {8, 1, 1}, &v, g.table.data()));
    v = 1;
    testing::internal::CaptureStderr();
    Fault f = launch(*k, {2, 1, 1}, {8, 1, 1}, &v, g.table.data());
    testing::internal::GetCapturedStderr();
    EXPECT_EQ(FaultKind::kAssert, f.kind);
    EXPECT_NE(std::string::npos, f.message.find("block: [0,0,0], thread: [0,0,0] Assertion `v == 42` failed."));
  }
  {
    auto k = compile("faults.sm90.ptx", "stuck_barrier");
    std::vector<int> o(32);
    void* p = o.data();
    EXPECT_EQ(FaultKind::kBarrierDeadlock, launch(*k, {1, 1, 1}, {32, 1, 1}, &p).kind);
  }
  {
    auto k = compile("faults.sm90.ptx", "early_exit_barrier");
    std::vector<int> o(32);
    void* p = o.data();
    EXPECT_FALSE(launch(*k, {1, 1, 1}, {32, 1, 1}, &p));
    for (int t = 0; t < 16; ++t) EXPECT_EQ(1, o[t]);
  }
  // After faults, the same thread runs kernels normally.
  auto k = compile("basics.sm90.ptx", "saxpy");
  std::vector<float> x(64, 1), y(64, 1);
  struct {
    int n;
    float a;
    float* x;
    float* y;
  } p{64, 1, x.data(), y.data()};
  EXPECT_FALSE(launch(*k, {1, 1, 1}, {64, 1, 1}, &p));
  EXPECT_EQ(2.0f, y[63]);
}

TEST(PtxCompiler, MalformedPtxGivesLineAndColumn) {
  std::string log;
  EXPECT_FALSE(Program::parse("", &log));
  EXPECT_NE(std::string::npos, log.find("line 1"));
  EXPECT_FALSE(Program::parse(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() {\n  add.s32 %r1, %r2, 1;\n}\n", &log));
  EXPECT_EQ("line 5, column 11: undeclared register '%r1' (in 'k')", log);
  EXPECT_FALSE(Program::parse(".version 8.0\n.target sm_90\n.entry k() { .reg .b32 %r<2>;\n bra L1;\n", &log));
  EXPECT_NE(std::string::npos, log.find("unterminated function body"));
  // A name the PTX ISA does not have is malformed PTX, refused by the parser.
  EXPECT_FALSE(Program::parse(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { .reg .b32 %r<3>;\n  frobnicate.b32 %r1, %r2;\n  ret;\n}\n", &log));
  EXPECT_EQ("line 5, column 3: unknown instruction 'frobnicate' (in 'k')", log);
  // An instruction of the ISA the compiler does not implement names itself at compile time.
  auto p = Program::parse(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { .reg .b32 %r<3>; .reg .b64 %rd<2>;\n  mbarrier.expect_tx.shared.b64 [%rd1], %r1;\n  ret;\n}\n", &log);
  ASSERT_TRUE(p) << log;
  EXPECT_FALSE(p->kernel(0, &log));
  EXPECT_EQ("line 5, column 3: unsupported instruction 'mbarrier.expect_tx.shared.b64' (in 'k')", log);
  // Texture forms beyond the bindless fetches (mipmap levels here) name themselves and what does run.
  p = Program::parse(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 t) {\n"
                     "  .reg .b64 %rd<2>; .reg .f32 %f<7>;\n  ld.param.u64 %rd1, [t];\n"
                     "  tex.level.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}], %f1;\n  ret;\n}\n", &log);
  ASSERT_TRUE(p) << log;
  EXPECT_FALSE(p->kernel(0, &log));
  EXPECT_NE(std::string::npos, log.find("unsupported instruction 'tex.level.2d.v4.f32.f32' (cucpu runs the bindless"))
      << log;
}

TEST(PtxCompiler, MutatedPtxNeverCrashes) {
  // Bounded: random byte edits of real PTX, parsed and (when they parse)
  // compiled; only the absence of crashes and hangs is asserted.
  const std::string base = read_file("basics.sm90.ptx");
  std::mt19937 rng(1234);
  const char kBytes[] = "%.;,{}[]()0123456789abcxyz+-!@|_ \n\t";
  int parsed = 0;
  for (int round = 0; round < 300; ++round) {
    std::string s = base;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % s.size();
      switch (rng() % 3) {
        case 0: s[at] = kBytes[rng() % (sizeof kBytes - 1)]; break;
        case 1: s.erase(at, 1 + rng() % 8); break;
        default: s.insert(at, 1, kBytes[rng() % (sizeof kBytes - 1)]); break;
      }
    }
    std::string log;
    auto p = Program::parse(s, &log);
    if (!p) {
      EXPECT_EQ(0u, log.find("line ")) << log;
      continue;
    }
    ++parsed;
    if (round % 10 == 0)  // compiling is slower: a sample
      for (size_t i = 0; i < p->entries().size(); ++i) p->kernel(static_cast<int>(i), &log);
  }
  EXPECT_GT(parsed, 0);
}

TEST(PtxCompiler, SecondRunTakesKernelsFromTheDiskCache) {
  const std::string dir = testing::TempDir() + "/cucpu-cache-" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  unsetenv("CUCPU_CACHE");
  setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  // A text no earlier test compiled (the process links each text once).
  const std::string text = read_file("basics.sm90.ptx") + "\n// cache test " + std::to_string(getpid()) + "\n";
  auto compile_saxpy = [&] {
    std::string log;
    auto p = Program::parse(text, &log);
    return p && p->kernel(p->find_entry("saxpy"), &log) != nullptr;
  };
  // An earlier run: a child process compiles and stores the kernel.
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(compile_saxpy() ? 0 : 1);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  size_t files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir + "/cucpu")) files += e.path().extension() == ".kernel";
  EXPECT_EQ(1u, files);
  const uint64_t before = disk_cache_hits();
  EXPECT_TRUE(compile_saxpy());
  EXPECT_EQ(before + 1, disk_cache_hits());
  // A damaged entry is ignored: the kernel is compiled again.
  const std::string other = text + "// damaged\n";
  child = fork();
  if (child == 0) {
    std::string log;
    auto p = Program::parse(other, &log);
    _exit(p && p->kernel(0, &log) ? 0 : 1);
  }
  waitpid(child, &status, 0);
  for (auto& e : std::filesystem::directory_iterator(dir + "/cucpu"))
    std::filesystem::resize_file(e.path(), std::filesystem::file_size(e.path()) / 2);
  std::string log;
  auto p = Program::parse(other, &log);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->kernel(0, &log)) << log;
  setenv("CUCPU_CACHE", "0", 1);
  unsetenv("XDG_CACHE_HOME");
  std::filesystem::remove_all(dir);
}

TEST(PtxCompiler, GridsWiderThanTheMainCodeRunTheirOwn) {
  // Above 2^21 - 1 blocks in x, ctaid.x * ntid.x may overflow 32 bits: that
  // code is compiled separately, on first use, without the no-overflow promise.
  auto k = compile("basics.sm90.ptx", "saxpy");
  ASSERT_TRUE(k);
  const unsigned blocks = (1u << 21) + 3;
  std::vector<float> x(blocks, 1.0f), y(blocks, 2.0f);
  struct {
    int n;
    float a;
    float* x;
    float* y;
  } p{static_cast<int>(blocks), 3.0f, x.data(), y.data()};
  ASSERT_FALSE(launch(*k, {blocks, 1, 1}, {1, 1, 1}, &p));
  EXPECT_EQ(5.0f, y[0]);
  EXPECT_EQ(5.0f, y[blocks - 1]);
  EXPECT_EQ(static_cast<long>(blocks), std::count(y.begin(), y.end(), 5.0f));
}

TEST(PtxCompiler, RunawayRecursionIsAFaultAndTheThreadGoesOn) {
  // The stack overflows into its guard page; the handler runs on its own
  // stack and unwinds to the runner. On a thread of its own, as a worker.
#ifdef __SANITIZE_ADDRESS__
  GTEST_SKIP() << "AddressSanitizer keeps its own account of the stack, which a jump out of an overflow breaks";
#endif
  auto k = compile("faults.sm90.ptx", "deep");
  ASSERT_TRUE(k);
  std::thread t([&] {
    std::vector<int> o(4);
    struct {
      int* o;
      int n;
    } p{o.data(), 100000000};
    EXPECT_EQ(FaultKind::kIllegalAddress, launch(*k, {1, 1, 1}, {1, 1, 1}, &p).kind);
    p.n = 10;
    EXPECT_FALSE(launch(*k, {1, 1, 1}, {1, 1, 1}, &p));
    EXPECT_EQ(55, o[0]);
  });
  t.join();
}
