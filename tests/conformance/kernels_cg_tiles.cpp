// Kernels of tests/kernels/cg_tiles.cu: warpSize, and cooperative-groups
// tiles larger than a warp, which keep their state in the block's reserved
// shared memory.
#include "kernels_util.h"

CONF_TEST(KernelWarpSizeIs32) {
  kt::for_each_variant("cg_tiles", [&](kt::Module& m) {
    kt::Buf<int32_t> out(256);
    kt::run(m.fn("warp_size"), {2}, {128}, 0, out.p);
    kt::Checker ck("warp_size");
    ck.all(out.get(), std::vector<int32_t>(256, 32));
    ck.done();
  });
}

CONF_TEST(KernelMultiWarpTilesReduceAndShuffle) {
  if (!kt::image_exists("ptx/cg_tiles.sm90.ptx")) return;
  const int blocks = 3, threads = 256, n = blocks * threads;
  std::vector<int32_t> in(n);
  kt::Rng rng(11);
  for (auto& v : in) v = rng.range(-1000, 1000);
  kt::Module m("ptx/cg_tiles.sm90.ptx");  // multi-warp tiles need sm_80's reserved shared memory
  for (unsigned size : {64u, 128u}) {
    kt::Buf<int32_t> din(in), out(4 * n);
    kt::run(m.fn(size == 64 ? "tiles_64" : "tiles_128"), {blocks}, {threads}, 0, din.p, out.p);
    std::vector<int32_t> want(4 * n);
    for (int g = 0; g < n; ++g) {
      const int t = g % threads, first = g - static_cast<int>(t % size);
      int sum = 0;
      for (unsigned k = 0; k < size; ++k) sum += in[first + k];
      want[4 * g] = static_cast<int>(t % size);
      want[4 * g + 1] = static_cast<int>(t / size);
      want[4 * g + 2] = sum;
      want[4 * g + 3] = in[first + 5];
    }
    kt::Checker ck(size == 64 ? "tiles_64" : "tiles_128");
    ck.all(out.get(), want);
    ck.done();
  }
}
