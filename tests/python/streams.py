"""A tour of the stream API through cuda-python (cuda.bindings.driver), which
finds every entry point with cuGetProcAddress_v2. Run it once on NVIDIA's
driver and once with LD_LIBRARY_PATH pointing at cucpu; both must print the
same lines (tests/python/run-on-gpu.sh compares them).
"""
import ctypes

import numpy as np
from cuda.bindings import driver as cu


def name(res):
    err = res[0] if isinstance(res, tuple) else res
    return err.name


def ok(res):
    err = res[0] if isinstance(res, tuple) else res
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA error {err}")
    if isinstance(res, tuple):
        return res[1] if len(res) == 2 else res[1:]
    return None


ok(cu.cuInit(0))
dev = ok(cu.cuDeviceGet(0))
ctx = ok(cu.cuDevicePrimaryCtxRetain(dev))
ok(cu.cuCtxSetCurrent(ctx))

# Creation, priorities, flags, ids, owners.
least, greatest = ok(cu.cuCtxGetStreamPriorityRange())
print("priority range:", least, greatest)
hi = ok(cu.cuStreamCreateWithPriority(cu.CUstream_flags.CU_STREAM_NON_BLOCKING, -100))
lo = ok(cu.cuStreamCreate(cu.CUstream_flags.CU_STREAM_DEFAULT))
print("clamped priority:", ok(cu.cuStreamGetPriority(hi)) == greatest)
print("flags:", ok(cu.cuStreamGetFlags(hi)), ok(cu.cuStreamGetFlags(lo)))
print("ids differ:", ok(cu.cuStreamGetId(hi)) != ok(cu.cuStreamGetId(lo)))
print("stream context is current:", int(ok(cu.cuStreamGetCtx(hi))) == int(ctx))
print("stream device:", int(ok(cu.cuStreamGetDevice(hi))) == int(dev))
print("bad flags:", name(cu.cuStreamCreate(4)))

# Attributes: priority through the attribute shows in cuStreamGetPriority.
value = cu.CUstreamAttrValue()
value.priority = greatest
ok(cu.cuStreamSetAttribute(lo, cu.CUstreamAttrID.CU_LAUNCH_ATTRIBUTE_PRIORITY, value))
print("priority via attribute:", ok(cu.cuStreamGetPriority(lo)) == greatest)
got = ok(cu.cuStreamGetAttribute(lo, cu.CUstreamAttrID.CU_LAUNCH_ATTRIBUTE_PRIORITY))
print("attribute reads back:", got.priority == greatest)
print("copy attributes:", name(cu.cuStreamCopyAttributes(hi, lo)))

# Host functions: a C callback (ctypes) sees stream order.
seen = []
HOSTFN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@HOSTFN
def record_tag(data):
    seen.append(data)


fn = cu.CUhostFn(ctypes.cast(record_tag, ctypes.c_void_p).value)
for tag in (1, 2, 3):
    ok(cu.cuLaunchHostFunc(lo, fn, tag))
ok(cu.cuStreamSynchronize(lo))
print("host functions in order:", seen == [1, 2, 3])
print("host function flags must be 0:", name(cu.cuStreamAddCallback(lo, cu.CUstreamCallback(0), 0, 1)))

# Events: record, query, wait across streams, elapsed time.
start = ok(cu.cuEventCreate(cu.CUevent_flags.CU_EVENT_DEFAULT))
stop = ok(cu.cuEventCreate(cu.CUevent_flags.CU_EVENT_DEFAULT))
untimed = ok(cu.cuEventCreate(cu.CUevent_flags.CU_EVENT_DISABLE_TIMING))
n = 1 << 20
buf = ok(cu.cuMemAlloc(n))
ok(cu.cuEventRecord(start, lo))
ok(cu.cuMemsetD8Async(buf, 7, n, lo))
ok(cu.cuEventRecord(stop, lo))
ok(cu.cuStreamWaitEvent(hi, stop, 0))
host = np.zeros(n, dtype=np.uint8)
ok(cu.cuMemcpyDtoHAsync(host, buf, n, hi))
ok(cu.cuStreamSynchronize(hi))
print("wait orders the copy after the set:", bool((host == 7).all()))
print("event query:", name(cu.cuEventQuery(stop)))
print("elapsed is a number:", ok(cu.cuEventElapsedTime(start, stop)) >= 0.0)
ok(cu.cuEventRecord(untimed, lo))
ok(cu.cuEventSynchronize(untimed))
print("elapsed without timing:", name(cu.cuEventElapsedTime(start, untimed)))
print("wait on never-recorded event:", name(cu.cuStreamWaitEvent(hi, ok(cu.cuEventCreate(0)), 0)))

# Managed memory attached to one stream.
managed = ok(cu.cuMemAllocManaged(4096, cu.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL))
print("attach single:", name(cu.cuStreamAttachMemAsync(lo, managed, 0, cu.CUmemAttach_flags.CU_MEM_ATTACH_SINGLE)))
print("attach single on NULL stream:",
      name(cu.cuStreamAttachMemAsync(cu.CUstream(0), managed, 0, cu.CUmemAttach_flags.CU_MEM_ATTACH_SINGLE)))
print("attach partial length:", name(cu.cuStreamAttachMemAsync(lo, managed, 16, cu.CUmemAttach_flags.CU_MEM_ATTACH_HOST)))
ok(cu.cuStreamSynchronize(lo))

# Capture: a fork/join of two memsets, instantiated and launched twice.
a = ok(cu.cuMemAlloc(n))
b = ok(cu.cuMemAlloc(n))
fork = ok(cu.cuEventCreate(cu.CUevent_flags.CU_EVENT_DISABLE_TIMING))
join = ok(cu.cuEventCreate(cu.CUevent_flags.CU_EVENT_DISABLE_TIMING))


def fork_join(mode):
    """Begins a capture on `lo` and records a fork/join of two memsets."""
    ok(cu.cuStreamBeginCapture(lo, mode))
    ok(cu.cuEventRecord(fork, lo))
    ok(cu.cuStreamWaitEvent(hi, fork, 0))
    ok(cu.cuMemsetD8Async(a, 1, n, lo))
    ok(cu.cuMemsetD8Async(b, 2, n, hi))
    ok(cu.cuEventRecord(join, hi))
    ok(cu.cuStreamWaitEvent(lo, join, 0))


fork_join(cu.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
print("capturing:", ok(cu.cuStreamIsCapturing(lo)).name)
info = cu.cuStreamGetCaptureInfo(lo)
print("capture info:", info[0].name, info[1].name, "dependencies:", info[-1])
print("sync while capturing:", name(cu.cuStreamSynchronize(lo)))
print("end of the invalidated capture:", name(cu.cuStreamEndCapture(lo)))
fork_join(cu.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL)
graph = ok(cu.cuStreamEndCapture(lo))
nodes, count = ok(cu.cuGraphGetNodes(graph, 0))
print("captured nodes:", count)
exe = ok(cu.cuGraphInstantiate(graph, 0))
for _ in range(2):
    ok(cu.cuGraphLaunch(exe, lo))
ok(cu.cuStreamSynchronize(lo))
ok(cu.cuMemcpyDtoH(host, a, n))
first = bool((host == 1).all())
ok(cu.cuMemcpyDtoH(host, b, n))
print("graph ran:", first and bool((host == 2).all()))

# (A query of a destroyed stream is left out: driver 580 segfaults on it;
# cucpu returns CUDA_ERROR_INVALID_HANDLE, see docs/conformance.md.)
ok(cu.cuStreamDestroy(hi))
print("legacy stream query:", name(cu.cuStreamQuery(cu.CUstream(cu.CU_STREAM_LEGACY))))
print("per-thread stream query:", name(cu.cuStreamQuery(cu.CUstream(cu.CU_STREAM_PER_THREAD))))
ok(cu.cuGraphExecDestroy(exe))
ok(cu.cuGraphDestroy(graph))
ok(cu.cuStreamDestroy(lo))
for p in (buf, a, b, managed):
    ok(cu.cuMemFree(p))
print("done")
