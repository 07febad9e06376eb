// Stream capture entry points.
#include "api/common.h"
#include "core/capture.h"
#include "core/graph.h"

using namespace cucpu;
using api::NullStream;

namespace {

CUresult begin_v1(NullStream ns, CUstream h) {
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  const CUstreamCaptureMode global = CU_STREAM_CAPTURE_MODE_GLOBAL;
  return capture_begin(s, global, nullptr, nullptr, nullptr, 0);
}

CUresult begin(NullStream ns, CUstream h, const CUstreamCaptureMode& mode) {
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  return capture_begin(s, mode, nullptr, nullptr, nullptr, 0);
}

CUresult begin_to_graph(NullStream ns, CUstream h, CUgraph hg, const CUgraphNode* deps,
                        const CUgraphEdgeData* edges, size_t n, const CUstreamCaptureMode& mode) {
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  Graph* g = rt().graphs.live(hg);
  if (!g) return CUDA_ERROR_INVALID_VALUE;
  return capture_begin(s, mode, g, deps, edges, n);
}

CUresult end(NullStream ns, CUstream h, CUgraph* out) {
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  return capture_end(s, out);
}

CUresult is_capturing(NullStream ns, CUstream h, CUstreamCaptureStatus* status) {
  if (!status) return CUDA_ERROR_INVALID_VALUE;
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  return capture_status(s, status);
}

CUresult info_v1(NullStream ns, CUstream h, CUstreamCaptureStatus* status, cuuint64_t* id) {
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  return capture_info(s, status, id, nullptr, nullptr, nullptr, nullptr);
}

CUresult info_v2(NullStream ns, CUstream h, CUstreamCaptureStatus* status, cuuint64_t* id, CUgraph* graph,
                 const CUgraphNode** deps, size_t* n) {
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  return capture_info(s, status, id, graph, deps, nullptr, n);
}

CUresult info_v3(NullStream ns, CUstream h, CUstreamCaptureStatus* status, cuuint64_t* id, CUgraph* graph,
                 const CUgraphNode** deps, const CUgraphEdgeData** edges, size_t* n) {
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  return capture_info(s, status, id, graph, deps, edges, n);
}

CUresult update_v1(NullStream ns, CUstream h, CUgraphNode* deps, size_t n, unsigned flags) {
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  return capture_update_deps(s, deps, nullptr, n, flags);
}

CUresult update_v2(NullStream ns, CUstream h, CUgraphNode* deps, const CUgraphEdgeData* edges, size_t n,
                   unsigned flags) {
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  return capture_update_deps(s, deps, edges, n, flags);
}

}  // namespace

#include "api/entries/capture.inc"
