// Threads that wait for other threads of their block by spinning, which
// independent thread scheduling (sm_70 on) lets finish: a waiting thread
// never blocks the one it waits for. kernels_spin.cpp launches them.

// Thread 0 waits for a flag that thread `setter` stores to shared memory
// (same warp or another), then writes what it saw to out[0]; out[1] counts
// the threads that passed.
extern "C" __global__ void spin_on_shared_flag(int* out, int setter) {
  __shared__ volatile int flag;
  if (threadIdx.x == 0) flag = 0;
  __syncthreads();
  if (threadIdx.x == 0) {
    while (flag == 0) {
    }
    out[0] = flag;
  }
  if (threadIdx.x == setter) flag = 7;
  atomicAdd(&out[1], 1);
}

// Each warp's lane 0 waits for the next warp's lane 0 to hand it a token
// through global memory (the last warp starts the chain): the warps finish
// in reverse order, each having seen its successor's token.
extern "C" __global__ void spin_chain_between_warps(volatile int* tokens, int* order) {
  const int w = threadIdx.x / 32, warps = blockDim.x / 32;
  if (threadIdx.x % 32 != 0) return;
  if (w + 1 < warps)
    while (tokens[w + 1] == 0) {
    }
  __threadfence_block();
  tokens[w] = w + 1;
  order[w] = atomicAdd(&order[warps], 1);
}

// A spin lock every thread takes in turn, guarding a plain read-modify-
// write. Whoever holds it first waits, holding it, for a flag that thread 1
// sets before it asks for the lock: the holder must let thread 1 run.
extern "C" __global__ void spin_lock_counter(int* lock, int* counter, volatile int* flag) {
  if (threadIdx.x == 1) *flag = 1;
  while (atomicCAS(lock, 0, 1) != 0) {
  }
  __threadfence();
  while (*flag == 0) {
  }
  volatile int* c = counter;
  *c = *c + 1;
  __threadfence();
  atomicExch(lock, 0);
}

// Blocks that wait for later blocks of the same launch, which a GPU runs
// at once when they fit: each block's thread 0 waits until the next block
// has raised its flag, the last block starts the chain, so blocks finish in
// reverse order. order[b] is the place block b finished in; order[blocks]
// counts them.
extern "C" __global__ void spin_chain_between_blocks(volatile int* flags, int* order) {
  const int b = blockIdx.x, blocks = gridDim.x;
  if (threadIdx.x == 0 && b + 1 < blocks)
    while (flags[b + 1] == 0) {
    }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    flags[b] = 1;
    order[b] = atomicAdd(&order[blocks], 1);
  }
}

// A software grid barrier in an ordinary launch (all blocks co-resident):
// every block adds its id to a sum, arrives at a counter and waits for all
// the others, then reads the total. out[b] = the total block b saw.
extern "C" __global__ void software_grid_barrier(int* sum, volatile int* arrived, int* out) {
  if (threadIdx.x == 0) {
    atomicAdd(sum, static_cast<int>(blockIdx.x));
    __threadfence();
    atomicAdd(const_cast<int*>(arrived), 1);
    while (*arrived < static_cast<int>(gridDim.x)) {
    }
    out[blockIdx.x] = atomicAdd(sum, 0);
  }
}

// Publication by a warp's lanes, as cuBLAS's trsv does it: every lane
// works out and stores its value, fences, and lane 0 alone raises the flag
// the next block waits on; the next block reads all 32 values. A GPU's
// lanes run in step, so the flag is seen only after every lane's store.
// Block b's lane l stores mix(block b-1's value of lane 31 - l, b, l).
__device__ unsigned mix(unsigned v, unsigned b, unsigned l) {
  for (int i = 0; i < 2000; ++i) v = v * 1664525u + 1013904223u + b * 31u + l;
  return v;
}
extern "C" __global__ void lanes_publish_then_lane0_flags(unsigned* data, int* flags) {
  const unsigned b = blockIdx.x, l = threadIdx.x;
  unsigned prev = 7;
  if (b > 0) {
    if (l == 0)
      while (reinterpret_cast<volatile int*>(flags)[b - 1] == 0) {
      }
    __syncwarp();
    prev = reinterpret_cast<volatile unsigned*>(data)[(b - 1) * 32 + (31 - l)];
  }
  reinterpret_cast<volatile unsigned*>(data)[b * 32 + l] = mix(prev, b, l);
  __threadfence();
  if (l == 0) reinterpret_cast<volatile int*>(flags)[b] = 1;
}
