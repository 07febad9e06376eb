// Interprocess memory handles (cuIpcGetMemHandle, cuIpcOpenMemHandle,
// cuIpcCloseMemHandle): another process maps a device allocation.
//
// An allocation is mapped privately until it is first exported. Exporting
// moves its bytes into a memory file (memfd) mapped shared at the same
// address, once; the handle names the file by the exporter's process id,
// descriptor and inode. An importer opens the file through
// /proc/PID/fd/FD (the exporter must still be alive and the descriptor
// still that file) and maps it at an address of its own, registered as
// device memory of its current context.
//
// Contract: exporting copies the allocation's bytes; work that writes the
// allocation while cuIpcGetMemHandle runs may lose those writes
// (docs/conformance.md). An imported mapping goes with cuIpcCloseMemHandle
// (one close per open of the same handle in a context) or its context.
#pragma once

#include <cstdint>

#include "cuda.h"

namespace cucpu {

class Context;

// The handle of the device allocation containing `dptr`, exporting it
// first if need be. INVALID_VALUE for memory that is not a plain device
// allocation (managed, host, a pool's, a mapping, a module's variable).
CUresult ipc_export(uintptr_t dptr, CUipcMemHandle* out);
// Maps the allocation `h` names into context `c`: the same address again
// (one more close owed) when `c` has it open already. INVALID_CONTEXT for a
// handle of this process, INVALID_VALUE for bytes that are no handle,
// INVALID_HANDLE when its allocation can no longer be reached.
CUresult ipc_open(Context* c, const CUipcMemHandle& h, uintptr_t* out);
// Undoes one ipc_open of the mapping based at `dptr` in `c`, unmapping it
// with the last (after the work already enqueued is done).
CUresult ipc_close(Context* c, uintptr_t dptr);

}  // namespace cucpu
