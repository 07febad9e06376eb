// mma.sync of tf32, f64 and 8-bit integer inputs (inline PTX), one warp:
// lane l takes its fragment registers from a[l * A + r], b[l * B + r],
// c[l * C + r] and writes D's to d[l * C + r], so that the host lays out
// the matrices by the ISA's fragment figures (kernels_mma.cpp).

#define LANE (threadIdx.x & 31)

extern "C" __global__ void mma_tf32_m16n8k8(const unsigned* a, const unsigned* b, const float* c, float* d) {
  const unsigned l = LANE;
  float d0, d1, d2, d3;
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %11, %12, %13};"
      : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
      : "r"(a[l * 4]), "r"(a[l * 4 + 1]), "r"(a[l * 4 + 2]), "r"(a[l * 4 + 3]), "r"(b[l * 2]), "r"(b[l * 2 + 1]),
        "f"(c[l * 4]), "f"(c[l * 4 + 1]), "f"(c[l * 4 + 2]), "f"(c[l * 4 + 3]));
  d[l * 4] = d0, d[l * 4 + 1] = d1, d[l * 4 + 2] = d2, d[l * 4 + 3] = d3;
}

extern "C" __global__ void mma_tf32_m16n8k4(const unsigned* a, const unsigned* b, const float* c, float* d) {
  const unsigned l = LANE;
  float d0, d1, d2, d3;
  asm volatile(
      "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};"
      : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
      : "r"(a[l * 2]), "r"(a[l * 2 + 1]), "r"(b[l]), "f"(c[l * 4]), "f"(c[l * 4 + 1]), "f"(c[l * 4 + 2]),
        "f"(c[l * 4 + 3]));
  d[l * 4] = d0, d[l * 4 + 1] = d1, d[l * 4 + 2] = d2, d[l * 4 + 3] = d3;
}

extern "C" __global__ void mma_f64_m8n8k4(const double* a, const double* b, const double* c, double* d) {
  const unsigned l = LANE;
  double d0, d1;
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%4, %5};"
               : "=d"(d0), "=d"(d1)
               : "d"(a[l]), "d"(b[l]), "d"(c[l * 2]), "d"(c[l * 2 + 1]));
  d[l * 2] = d0, d[l * 2 + 1] = d1;
}

extern "C" __global__ void mma_s8_m16n8k16(const unsigned* a, const unsigned* b, const int* c, int* d) {
  const unsigned l = LANE;
  int d0, d1, d2, d3;
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};"
      : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3)
      : "r"(a[l * 2]), "r"(a[l * 2 + 1]), "r"(b[l]), "r"(c[l * 4]), "r"(c[l * 4 + 1]), "r"(c[l * 4 + 2]),
        "r"(c[l * 4 + 3]));
  d[l * 4] = d0, d[l * 4 + 1] = d1, d[l * 4 + 2] = d2, d[l * 4 + 3] = d3;
}

extern "C" __global__ void mma_u8_s8_m16n8k32_satfinite(const unsigned* a, const unsigned* b, const int* c, int* d) {
  const unsigned l = LANE;
  int d0, d1, d2, d3;
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %11, %12, %13};"
      : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3)
      : "r"(a[l * 4]), "r"(a[l * 4 + 1]), "r"(a[l * 4 + 2]), "r"(a[l * 4 + 3]), "r"(b[l * 2]), "r"(b[l * 2 + 1]),
        "r"(c[l * 4]), "r"(c[l * 4 + 1]), "r"(c[l * 4 + 2]), "r"(c[l * 4 + 3]));
  d[l * 4] = d0, d[l * 4 + 1] = d1, d[l * 4 + 2] = d2, d[l * 4 + 3] = d3;
}

// fp8 inputs (sm_89+), f32 accumulation: A and B of the same kind and of
// different kinds; the fragments are laid out as the 8-bit integers' are.
#define MMA_FP8(name, types)                                                                          \
  extern "C" __global__ void name(const unsigned* a, const unsigned* b, const float* c, float* d) {   \
    const unsigned l = LANE;                                                                          \
    float d0, d1, d2, d3;                                                                             \
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32." types                                       \
                 ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"          \
                 : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)                                             \
                 : "r"(a[l * 4]), "r"(a[l * 4 + 1]), "r"(a[l * 4 + 2]), "r"(a[l * 4 + 3]), "r"(b[l * 2]), \
                   "r"(b[l * 2 + 1]), "f"(c[l * 4]), "f"(c[l * 4 + 1]), "f"(c[l * 4 + 2]), "f"(c[l * 4 + 3])); \
    d[l * 4] = d0, d[l * 4 + 1] = d1, d[l * 4 + 2] = d2, d[l * 4 + 3] = d3;                          \
  }
MMA_FP8(mma_e4m3_m16n8k32, "e4m3.e4m3")
MMA_FP8(mma_e5m2_e4m3_m16n8k32, "e5m2.e4m3")
