/* include/cuda.h compiles on its own as C (and, built as C++, as C++). */
#include "cuda.h"
int main(void) { return sizeof(CUDA_MEMCPY3D_BATCH_OP) == 112 ? 0 : 1; }
