"""Runs cuMemcpy3DBatchAsync through cuda-python (cuda.bindings.driver),
which finds it with cuGetProcAddress_v2. Run it once on NVIDIA's driver and
once with LD_LIBRARY_PATH pointing at cucpu; both must print the same lines.
"""
import numpy as np
from cuda.bindings import driver as cu


def ok(res):
    err = res[0] if isinstance(res, tuple) else res
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA error {err}")
    return res[1] if isinstance(res, tuple) and len(res) == 2 else res[1:] if isinstance(res, tuple) else None


ok(cu.cuInit(0))
dev = ok(cu.cuDeviceGet(0))
ctx = ok(cu.cuDevicePrimaryCtxRetain(dev))
ok(cu.cuCtxSetCurrent(ctx))
print("device:", ok(cu.cuDeviceGetName(64, dev)).split(b"\0")[0].decode())

w, h, d, row, layer = 48, 6, 4, 64, 8
src_host = (np.arange(row * layer * d) * 7 % 251).astype(np.uint8)
src = ok(cu.cuMemAlloc(src_host.nbytes))
dst = ok(cu.cuMemAlloc(w * h * d))
ok(cu.cuMemcpyHtoD(src, src_host, src_host.nbytes))
ok(cu.cuMemsetD8(dst, 0xEE, w * h * d))
stream = ok(cu.cuStreamCreate(cu.CUstream_flags.CU_STREAM_NON_BLOCKING))

ops = []
for half in range(2):  # two ops, each copies two layers
    op = cu.CUDA_MEMCPY3D_BATCH_OP()
    op.src.type = cu.CUmemcpy3DOperandType.CU_MEMCPY_OPERAND_TYPE_POINTER
    op.src.op.ptr.ptr = int(src) + half * 2 * row * layer
    op.src.op.ptr.rowLength = row
    op.src.op.ptr.layerHeight = layer
    op.dst.type = cu.CUmemcpy3DOperandType.CU_MEMCPY_OPERAND_TYPE_POINTER
    op.dst.op.ptr.ptr = int(dst) + half * 2 * w * h
    op.extent.width, op.extent.height, op.extent.depth = w, h, 2
    op.srcAccessOrder = cu.CUmemcpySrcAccessOrder.CU_MEMCPY_SRC_ACCESS_ORDER_STREAM
    ops.append(op)

ok(cu.cuMemcpy3DBatchAsync(len(ops), ops, 0, stream))
ok(cu.cuStreamSynchronize(stream))
out = np.zeros(w * h * d, dtype=np.uint8)
ok(cu.cuMemcpyDtoH(out, dst, out.nbytes))
want = src_host.reshape(d, layer, row)[:, :h, :w].reshape(-1)
print("batched 3D copy through cuda-python:", "correct" if np.array_equal(out, want) else "WRONG")

bad = cu.cuMemcpy3DBatchAsync(len(ops), ops, 0, cu.CUstream(cu.CU_STREAM_LEGACY))
print("legacy stream:", bad[0].name if isinstance(bad, tuple) else bad.name)
ops[1].srcAccessOrder = cu.CUmemcpySrcAccessOrder.CU_MEMCPY_SRC_ACCESS_ORDER_INVALID
bad = cu.cuMemcpy3DBatchAsync(len(ops), ops, 0, stream)
print("invalid srcAccessOrder:", bad[0].name if isinstance(bad, tuple) else bad.name)
ok(cu.cuStreamDestroy(stream))
ok(cu.cuMemFree(src))
ok(cu.cuMemFree(dst))
