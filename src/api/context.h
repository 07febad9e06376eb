// Context-family entry points shared with other families.
#pragma once
#include "cuda.h"

namespace cucpu::api {

// The device's primary context, created if needed but neither retained nor
// activated (what cudart's private table asks for before it retains it).
CUresult primary_context_handle(CUdevice dev, CUcontext* pctx);

}  // namespace cucpu::api
