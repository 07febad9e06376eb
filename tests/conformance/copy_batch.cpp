// cuMemcpy3DBatchAsync_v2 and cuMemcpyBatchAsync_v2.
#include <cstdint>
#include <vector>

#include "harness.h"

namespace {

CUDA_MEMCPY3D_BATCH_OP ptr_op(CUdeviceptr dst, CUdeviceptr src, size_t w, size_t h = 1, size_t d = 1) {
  CUDA_MEMCPY3D_BATCH_OP op{};
  op.src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  op.src.op.ptr.ptr = src;
  op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  op.dst.op.ptr.ptr = dst;
  op.extent = {w, h, d};
  op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  return op;
}

struct Buffers {
  CUdeviceptr a = 0, b = 0;
  CUstream s = nullptr;
  explicit Buffers(size_t n) {
    cuMemAlloc(&a, n);
    cuMemAlloc(&b, n);
    cuMemsetD8(a, 0x11, n);
    cuMemsetD8(b, 0x22, n);
    // The memsets may still run on the device: `s` does not wait for them.
    cuCtxSynchronize();
    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  }
  ~Buffers() {
    cuStreamSynchronize(s);
    cuStreamDestroy(s);
    cuMemFree(a);
    cuMemFree(b);
  }
};

unsigned char byte_at(CUdeviceptr p) {
  unsigned char v = 0;
  cuMemcpyDtoH(&v, p, 1);
  return v;
}

}  // namespace

CONF_TEST(Batch3DRefusesBadArgumentsAndTheLegacyStream) {
  Buffers m(256);
  auto op = ptr_op(m.b, m.a, 256);
  ASSERT_CU(cuMemcpy3DBatchAsync(1, &op, 0, m.s));
  ASSERT_CU(cuStreamSynchronize(m.s));
  EXPECT_TRUE(byte_at(m.b) == 0x11);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpy3DBatchAsync(0, &op, 0, m.s));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpy3DBatchAsync(1, nullptr, 0, m.s));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpy3DBatchAsync(1, &op, 1, m.s));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpy3DBatchAsync(1, &op, 0, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpy3DBatchAsync(1, &op, 0, CU_STREAM_LEGACY));
  ASSERT_CU(cuMemcpy3DBatchAsync(1, &op, 0, CU_STREAM_PER_THREAD));
  ASSERT_CU(cuStreamSynchronize(CU_STREAM_PER_THREAD));
}

CONF_TEST(Batch3DWithOneBadOpIsRefusedWhole) {
  Buffers m(4096);
  struct Case {
    const char* what;
    void (*spoil)(CUDA_MEMCPY3D_BATCH_OP&);
  };
  const Case cases[] = {
      {"access_order_invalid", [](CUDA_MEMCPY3D_BATCH_OP& o) { o.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_INVALID; }},
      {"access_order_9", [](CUDA_MEMCPY3D_BATCH_OP& o) { o.srcAccessOrder = static_cast<CUmemcpySrcAccessOrder>(9); }},
      {"op_flags_2", [](CUDA_MEMCPY3D_BATCH_OP& o) { o.flags = 2; }},
      {"width_0", [](CUDA_MEMCPY3D_BATCH_OP& o) { o.extent.width = 0; }},
      {"height_0", [](CUDA_MEMCPY3D_BATCH_OP& o) { o.extent.height = 0; }},
      {"depth_0", [](CUDA_MEMCPY3D_BATCH_OP& o) { o.extent.depth = 0; }},
      {"row_length_short", [](CUDA_MEMCPY3D_BATCH_OP& o) { o.src.op.ptr.rowLength = 8; }},
      {"layer_height_short", [](CUDA_MEMCPY3D_BATCH_OP& o) { o.dst.op.ptr.layerHeight = 1; }},
      {"operand_type_0", [](CUDA_MEMCPY3D_BATCH_OP& o) { o.src.type = static_cast<CUmemcpy3DOperandType>(0); }},
      {"operand_type_7", [](CUDA_MEMCPY3D_BATCH_OP& o) { o.dst.type = static_cast<CUmemcpy3DOperandType>(7); }},
      {"null_src", [](CUDA_MEMCPY3D_BATCH_OP& o) { o.src.op.ptr.ptr = 0; }},
      {"null_dst", [](CUDA_MEMCPY3D_BATCH_OP& o) { o.dst.op.ptr.ptr = 0; }},
      {"loc_hint_type_9", [](CUDA_MEMCPY3D_BATCH_OP& o) { o.src.op.ptr.locHint.type = static_cast<CUmemLocationType>(9); }},
  };
  // An undefined location-hint type is accepted by the driver (a hint only).
  for (const Case& c : cases) {
    const bool accepted = std::string(c.what) == "loc_hint_type_9";
    CUDA_MEMCPY3D_BATCH_OP ops[3] = {ptr_op(m.b, m.a, 16, 4, 2), ptr_op(m.b + 1024, m.a + 1024, 16, 4, 2),
                                     ptr_op(m.b + 2048, m.a + 2048, 16, 4, 2)};
    c.spoil(ops[1]);
    CUresult r = cuMemcpy3DBatchAsync(3, ops, 0, m.s);
    conf::info((std::string("batch3d_") + c.what).c_str(), r);
    EXPECT_TRUE(accepted ? r == CUDA_SUCCESS : r != CUDA_SUCCESS);
  }
  ASSERT_CU(cuStreamSynchronize(m.s));
  // One bad op rejects the whole batch: nothing was copied (the accepted
  // hint case copied into m.b, so check a fresh batch).
  CUDA_MEMCPY3D_BATCH_OP ops[2] = {ptr_op(m.a + 3072, m.b + 3072, 16), ptr_op(m.a + 3100, m.b + 3100, 0)};
  ASSERT_CU(cuMemsetD8(m.b + 3072, 0x44, 16));
  ASSERT_CU(cuCtxSynchronize());  // m.s, non-blocking, does not wait for the memset
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpy3DBatchAsync(2, ops, 0, m.s));
  ASSERT_CU(cuStreamSynchronize(m.s));
  EXPECT_TRUE(byte_at(m.a + 3072) == 0x11);
}

CONF_TEST(Batch3DPitchedSubBoxKeepsPadding) {
  // Source: a 3D box of 40 x 5 x 3 bytes, row length 64, layer height 8.
  const size_t w = 40, h = 5, d = 3, srow = 64, slayer = 8, drow = 48, dlayer = 6;
  CUdeviceptr src, dst;
  ASSERT_CU(cuMemAlloc(&src, srow * slayer * d));
  ASSERT_CU(cuMemAlloc(&dst, drow * dlayer * d));
  std::vector<unsigned char> hs(srow * slayer * d);
  for (size_t i = 0; i < hs.size(); ++i) hs[i] = static_cast<unsigned char>(i * 31 + 7);
  ASSERT_CU(cuMemcpyHtoD(src, hs.data(), hs.size()));
  ASSERT_CU(cuMemsetD8(dst, 0xEE, drow * dlayer * d));  // poison
  ASSERT_CU(cuCtxSynchronize());  // the non-blocking stream below does not wait for the memset
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  auto op = ptr_op(dst, src, w, h, d);
  op.src.op.ptr.rowLength = srow;
  op.src.op.ptr.layerHeight = slayer;
  op.dst.op.ptr.rowLength = drow;
  op.dst.op.ptr.layerHeight = dlayer;
  ASSERT_CU(cuMemcpy3DBatchAsync(1, &op, 0, s));
  ASSERT_CU(cuStreamSynchronize(s));
  std::vector<unsigned char> out(drow * dlayer * d);
  ASSERT_CU(cuMemcpyDtoH(out.data(), dst, out.size()));
  for (size_t z = 0; z < d; ++z)
    for (size_t y = 0; y < dlayer; ++y)
      for (size_t x = 0; x < drow; ++x) {
        unsigned char got = out[(z * dlayer + y) * drow + x];
        bool inside = x < w && y < h;
        unsigned char want = inside ? hs[(z * slayer + y) * srow + x] : 0xEE;
        EXPECT_TRUE(got == want);
      }
  ASSERT_CU(cuStreamDestroy(s));
  ASSERT_CU(cuMemFree(src));
  ASSERT_CU(cuMemFree(dst));
}

CONF_TEST(Batch3DArrayRoundTrips) {
  const struct {
    CUarray_format f;
    unsigned ch;
    size_t bytes;
  } kinds[] = {{CU_AD_FORMAT_UNSIGNED_INT8, 1, 1}, {CU_AD_FORMAT_UNSIGNED_INT16, 2, 4},
               {CU_AD_FORMAT_FLOAT, 4, 16}, {CU_AD_FORMAT_SIGNED_INT32, 1, 4}, {CU_AD_FORMAT_HALF, 2, 4}};
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  for (const auto& k : kinds) {
    CUDA_ARRAY3D_DESCRIPTOR desc{};
    desc.Width = 8;
    desc.Height = 4;
    desc.Depth = 3;
    desc.Format = k.f;
    desc.NumChannels = k.ch;
    CUarray arr, arr2;
    ASSERT_CU(cuArray3DCreate(&arr, &desc));
    ASSERT_CU(cuArray3DCreate(&arr2, &desc));
    const size_t n = 8 * 4 * 3 * k.bytes;
    CUdeviceptr in, out;
    ASSERT_CU(cuMemAlloc(&in, n));
    ASSERT_CU(cuMemAlloc(&out, n));
    std::vector<unsigned char> h(n), back(n, 0);
    for (size_t i = 0; i < n; ++i) h[i] = static_cast<unsigned char>(i ^ 0x5a);
    ASSERT_CU(cuMemcpyHtoD(in, h.data(), n));
    CUDA_MEMCPY3D_BATCH_OP ops[3] = {};
    for (auto& o : ops) {
      o.extent = {8, 4, 3};
      o.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    }
    ops[0].src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;  // pointer -> array
    ops[0].src.op.ptr.ptr = in;
    ops[0].dst.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
    ops[0].dst.op.array.array = arr;
    ASSERT_CU(cuMemcpy3DBatchAsync(1, &ops[0], 0, s));
    ops[1].src.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;  // array -> array
    ops[1].src.op.array.array = arr;
    ops[1].dst.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
    ops[1].dst.op.array.array = arr2;
    ASSERT_CU(cuMemcpy3DBatchAsync(1, &ops[1], 0, s));
    ops[2].src.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;  // array -> pointer
    ops[2].src.op.array.array = arr2;
    ops[2].dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    ops[2].dst.op.ptr.ptr = out;
    ASSERT_CU(cuMemcpy3DBatchAsync(1, &ops[2], 0, s));
    ASSERT_CU(cuStreamSynchronize(s));
    ASSERT_CU(cuMemcpyDtoH(back.data(), out, n));
    EXPECT_TRUE(back == h);
    // Offset + extent beyond the array.
    CUDA_MEMCPY3D_BATCH_OP bad = ops[0];
    bad.dst.op.array.offset = {1, 0, 0};
    EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpy3DBatchAsync(1, &bad, 0, s));
    bad = ops[0];
    bad.dst.op.array.offset = {0, 0, 1};
    EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpy3DBatchAsync(1, &bad, 0, s));
    ASSERT_CU(cuArrayDestroy(arr));
    ASSERT_CU(cuArrayDestroy(arr2));
    ASSERT_CU(cuMemFree(in));
    ASSERT_CU(cuMemFree(out));
  }
  ASSERT_CU(cuStreamDestroy(s));
}

CONF_TEST(Batch3DArrayElementSizesMustMatch) {
  CUDA_ARRAY3D_DESCRIPTOR d1{}, d2{};
  d1.Width = d2.Width = 8;
  d1.Height = d2.Height = 2;
  d1.Format = CU_AD_FORMAT_UNSIGNED_INT8;
  d2.Format = CU_AD_FORMAT_FLOAT;
  d1.NumChannels = d2.NumChannels = 1;
  CUarray a1, a2;
  ASSERT_CU(cuArray3DCreate(&a1, &d1));
  ASSERT_CU(cuArray3DCreate(&a2, &d2));
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUDA_MEMCPY3D_BATCH_OP op{};
  op.src.type = op.dst.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
  op.src.op.array.array = a1;
  op.dst.op.array.array = a2;
  op.extent = {8, 2, 1};
  op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpy3DBatchAsync(1, &op, 0, s));
  ASSERT_CU(cuStreamDestroy(s));
  ASSERT_CU(cuArrayDestroy(a1));
  ASSERT_CU(cuArrayDestroy(a2));
}

CONF_TEST(Batch3DDuringApiCallReadsSourceAtOnce) {
  CUdeviceptr dst;
  ASSERT_CU(cuMemAlloc(&dst, 64));
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  conf::Gate gate;
  ASSERT_CU(cuLaunchHostFunc(s, conf::Gate::hold, &gate));  // the stream cannot run the copy yet
  {
    unsigned char stack_src[64];
    for (int i = 0; i < 64; ++i) stack_src[i] = static_cast<unsigned char>(i + 1);
    auto op = ptr_op(dst, reinterpret_cast<CUdeviceptr>(stack_src), 64);
    op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    ASSERT_CU(cuMemcpy3DBatchAsync(1, &op, 0, s));
    for (auto& b : stack_src) b = 0xFF;  // overwritten right after the call
  }
  gate.release();
  ASSERT_CU(cuStreamSynchronize(s));
  unsigned char out[64];
  ASSERT_CU(cuMemcpyDtoH(out, dst, 64));
  for (int i = 0; i < 64; ++i) EXPECT_TRUE(out[i] == i + 1);
  ASSERT_CU(cuStreamDestroy(s));
  ASSERT_CU(cuMemFree(dst));
}

CONF_TEST(Batch3DRunsInStreamOrder) {
  // Earlier work (a memset) runs before the batch, later work (a copy back)
  // after it, and another stream waiting on an event sees the batch done.
  Buffers m(1 << 16);
  conf::Gate gate;
  ASSERT_CU(cuLaunchHostFunc(m.s, conf::Gate::hold, &gate));
  ASSERT_CU(cuMemsetD8Async(m.a, 0x33, 1 << 16, m.s));
  std::vector<CUDA_MEMCPY3D_BATCH_OP> ops;
  for (size_t i = 0; i < 64; ++i) ops.push_back(ptr_op(m.b + i * 1024, m.a + i * 1024, 1024));
  ASSERT_CU(cuMemcpy3DBatchAsync(ops.size(), ops.data(), 0, m.s));
  CUevent e;
  ASSERT_CU(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  ASSERT_CU(cuEventRecord(e, m.s));
  CUstream other;
  ASSERT_CU(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
  CUdeviceptr c;
  ASSERT_CU(cuMemAlloc(&c, 1 << 16));
  ASSERT_CU(cuStreamWaitEvent(other, e, 0));
  ASSERT_CU(cuMemcpyDtoDAsync(c, m.b, 1 << 16, other));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cuStreamQuery(other));
  gate.release();
  ASSERT_CU(cuStreamSynchronize(other));
  std::vector<unsigned char> out(1 << 16);
  ASSERT_CU(cuMemcpyDtoH(out.data(), c, out.size()));
  bool all = true;
  for (auto v : out) all = all && v == 0x33;
  EXPECT_TRUE(all);
  ASSERT_CU(cuEventDestroy(e));
  ASSERT_CU(cuStreamDestroy(other));
  ASSERT_CU(cuMemFree(c));
}

CONF_TEST(Batch1DCopiesLandAndAnInvalidAccessOrderIsRefused) {
  Buffers m(4096);
  CUdeviceptr dsts[4], srcs[4];
  size_t sizes[4];
  for (int i = 0; i < 4; ++i) {
    dsts[i] = m.b + i * 1024;
    srcs[i] = m.a + i * 1024;
    sizes[i] = 1024;
  }
  CUmemcpyAttributes attrs[2] = {};
  attrs[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  attrs[1].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
  size_t idx[2] = {0, 2};
  ASSERT_CU(cuMemcpyBatchAsync(dsts, srcs, sizes, 4, attrs, idx, 2, m.s));
  ASSERT_CU(cuStreamSynchronize(m.s));
  EXPECT_TRUE(byte_at(m.b + 3000) == 0x11);
  size_t bad_idx[2] = {1, 2};
  conf::info("batch1d_first_index_not_0", cuMemcpyBatchAsync(dsts, srcs, sizes, 4, attrs, bad_idx, 2, m.s));
  size_t dec_idx[2] = {0, 0};
  conf::info("batch1d_indices_not_increasing", cuMemcpyBatchAsync(dsts, srcs, sizes, 4, attrs, dec_idx, 2, m.s));
  conf::info("batch1d_count_0", cuMemcpyBatchAsync(dsts, srcs, sizes, 0, attrs, idx, 2, m.s));
  conf::info("batch1d_num_attrs_0", cuMemcpyBatchAsync(dsts, srcs, sizes, 4, attrs, idx, 0, m.s));
  conf::info("batch1d_legacy_stream", cuMemcpyBatchAsync(dsts, srcs, sizes, 4, attrs, idx, 2, CU_STREAM_LEGACY));
  attrs[1].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_INVALID;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyBatchAsync(dsts, srcs, sizes, 4, attrs, idx, 2, m.s));
  attrs[1].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
  sizes[2] = 0;
  conf::info("batch1d_size_0", cuMemcpyBatchAsync(dsts, srcs, sizes, 4, attrs, idx, 2, m.s));
  ASSERT_CU(cuStreamSynchronize(m.s));
}
