// User objects: cuUserObjectCreate/Retain/Release and the references graphs
// hold (cuGraphRetainUserObject/ReleaseUserObject); core/user_object.h.
#include <climits>

#include "api/common.h"
#include "api/graph_common.h"
#include "core/user_object.h"

using namespace cucpu;
using namespace cucpu::api;

namespace {

UserObject* object_of(CUuserObject h) { return rt().user_objects.live(h); }

// A count of references: at least one, and within an int (the driver's type
// for it is unsigned; a count past INT_MAX overflows what it keeps).
bool count_ok(unsigned count) { return count >= 1 && count <= INT_MAX; }

}  // namespace

static CUresult impl_cuUserObjectCreate(CUuserObject* object_out, void* ptr, CUhostFn destroy,
                                        unsigned int initialRefcount, unsigned int flags) {
  if (!object_out || !destroy || !count_ok(initialRefcount)) return CUDA_ERROR_INVALID_VALUE;
  if (flags != CU_USER_OBJECT_NO_DESTRUCTOR_SYNC) return CUDA_ERROR_INVALID_VALUE;  // the one flag, and required
  *object_out = reinterpret_cast<CUuserObject>(new_user_object(ptr, destroy, initialRefcount));
  return CUDA_SUCCESS;
}

static CUresult impl_cuUserObjectRetain(CUuserObject object, unsigned int count) {
  UserObject* u = object_of(object);
  if (!u || !count_ok(count)) return CUDA_ERROR_INVALID_VALUE;
  u->retain(count);
  return CUDA_SUCCESS;
}

// Releasing more references than the object has left is undefined on the
// driver; refused here (the count is not per holder, so fewer is all that
// can be told).
static CUresult impl_cuUserObjectRelease(CUuserObject object, unsigned int count) {
  UserObject* u = object_of(object);
  if (!u || !count_ok(count)) return CUDA_ERROR_INVALID_VALUE;
  return u->release(count) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult impl_cuGraphRetainUserObject(CUgraph graph, CUuserObject object, unsigned int count,
                                             unsigned int flags) {
  Graph* g = graph_of(graph);
  UserObject* u = object_of(object);
  if (!g || !u || !count_ok(count)) return CUDA_ERROR_INVALID_VALUE;
  if (flags & ~static_cast<unsigned>(CU_GRAPH_USER_OBJECT_MOVE)) return CUDA_ERROR_INVALID_VALUE;
  // MOVE hands the graph references the caller holds; otherwise the graph
  // takes new ones.
  if (!(flags & CU_GRAPH_USER_OBJECT_MOVE)) u->retain(count);
  g->user_objects.take(u, count);
  return CUDA_SUCCESS;
}

static CUresult impl_cuGraphReleaseUserObject(CUgraph graph, CUuserObject object, unsigned int count) {
  Graph* g = graph_of(graph);
  UserObject* u = object_of(object);
  if (!g || !u || !count_ok(count)) return CUDA_ERROR_INVALID_VALUE;
  // More than the graph holds: driver 580 succeeds and corrupts the count
  // (docs/conformance.md); refused here.
  if (!g->user_objects.release(u, count)) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

#include "api/entries/user_object.inc"
