// The other half of the rdc program (see rdc_main.cu).
__device__ int lib_scale = 3;
__device__ int lib_apply(int x) { return 2 * x; }
