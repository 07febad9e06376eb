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
//
// Interprocess events (CU_EVENT_INTERPROCESS) keep their state in words of
// a memory file (core/event.h IpcEventWords) that every process holding the
// event maps: records anywhere count there, and queries, synchronizes and
// stream waits read it. Graph event nodes, launch-completion events and
// context waits see only the records of their own process.
#pragma once

#include <cstdint>

#include "cuda.h"

namespace cucpu {

class Context;
class Event;
class MemPool;
class Op;
class Stream;

// The handle of the device allocation containing `dptr`, exporting it
// first if need be. INVALID_VALUE for memory that is not a plain device
// allocation (managed, host, a pool's, a mapping, a module's variable).
CUresult ipc_export(uintptr_t dptr, CUipcMemHandle* out);
// Maps the allocation `h` names into context `c`: the same address again
// (one more close owed) when `c` has it open already. INVALID_CONTEXT for a
// handle of this process, INVALID_VALUE for bytes that are no handle or
// name an allocation that can no longer be reached (driver 580: a freed one).
CUresult ipc_open(Context* c, const CUipcMemHandle& h, uintptr_t* out);
// Undoes one ipc_open of the mapping based at `dptr` in `c`, unmapping it
// with the last (after the work already enqueued is done).
CUresult ipc_close(Context* c, uintptr_t dptr);

// Pools shared between processes (a pool made with
// CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR): its shareable handle is a
// memory file naming this process; its allocations travel as memory
// handles do, in CUmemPoolPtrExportData, and are mapped into the importer's
// pool, from which cuMemFree or cuMemFreeAsync unmaps them.
// A new descriptor of a pool handle of this process, for a pool of `device`.
CUresult ipc_pool_export(int device, int* fd_out);
// The exporting process and device of a pool handle `fd` (INVALID_VALUE
// for a descriptor that is none).
CUresult ipc_pool_import(int fd, int32_t* exporter, int32_t* device);
// The export data of pool allocation `ptr` (INVALID_VALUE unless its pool
// is shareable).
CUresult ipc_pool_export_pointer(uintptr_t ptr, CUmemPoolPtrExportData* out);
// Maps the allocation `data` names into imported pool `pool` (which must
// be the exporter's).
CUresult ipc_pool_import_pointer(Context* c, MemPool* pool, const CUmemPoolPtrExportData& data, uintptr_t* out);

// Gives a new interprocess event its words. OUT_OF_MEMORY when no memory
// file can be made.
CUresult ipc_event_share(Event* e);
// The handle of an interprocess event (INVALID_HANDLE for another event).
CUresult ipc_event_export(Event* e, CUipcEventHandle* out);
// A new event of context `c` holding the words `h` names (INVALID_VALUE for
// bytes that are no handle, INVALID_HANDLE when they cannot be reached);
// its handle is registered and returned.
CUresult ipc_event_open(Context* c, const CUipcEventHandle& h, CUevent* out);
// A record of an interprocess event on `s`, after what the caller enqueued
// for it: the record's number is done once `s` reaches this point.
void ipc_event_record(Event* e, Stream* s);
// Whether every record so far, in any process, is done.
bool ipc_event_reached(Event* e);
// Waits until the records made so far are done.
void ipc_event_synchronize(Event* e);
// Makes `s` wait, from now on, for the records made so far (a parked wait
// on the words, stream memory operations' way).
void ipc_event_stream_wait(Event* e, Stream* s);

}  // namespace cucpu
