// Green contexts: a share of a device's multiprocessors (SMs), the
// resources that describe one, and the context that runs work on it.
//
// Resources. A CUdevResource of type SM is the user's memory; cucpu writes
// what it needs into the struct's internal bytes (`ResourceImage`): which
// SMs, of which device, what the resource came from (the device, a
// context, or a split, which has an instance number) and a checksum over
// all of it and the public fields, so that an edited or forged struct is
// refused rather than believed. A split's outputs report no granularity,
// and an empty remainder is written as no resource at all (type INVALID),
// as driver 580 writes them.
//
// Descriptors (CUdevResourceDesc): each call makes one, never destroyed
// (the API has no destroy; driver 580 makes a new one each call too).
//
// A green context is its converted context (core/context.h: green, owner,
// pool): the CUgreenCtx handle and the CUcontext cuCtxFromGreenCtx gives
// are one pointer, as driver 580's are, and the context owns the
// GreenContext. It holds a reference to its device's primary context for
// its life, as the driver's does.
//
// Teardown: destroy kills the green context's handle and its converted
// context's, then waits for the work already in its streams. Streams the
// user still holds keep their handles, and every later call that names
// them answers CONTEXT_IS_DESTROYED (the driver's documented behaviour);
// the converted context then stays allocated for them (a leak the driver
// documents too). Otherwise the converted context is destroyed at once.
// Neither handle slot is ever reused, so a stale handle is always
// recognisably destroyed.
#pragma once

#include <cstdint>

#include "cuda.h"
#include "core/runtime.h"
#include "exec/partition.h"

namespace cucpu {

class Context;
class Event;

// Where an SM resource came from.
enum class ResourceOrigin : uint32_t { kDevice = 1, kContext = 2, kGroup = 3, kRemainder = 4 };

// The minimum SMs in a partition, and the alignment of a partition's size,
// that cuDevSmResourceSplitByCount keeps to (what the resources report).
struct SmGranularity {
  unsigned min_partition = 1;
  unsigned alignment = 1;
};
SmGranularity sm_granularity(const Device& d);
// The device's SM count (its MULTIPROCESSOR_COUNT).
unsigned device_sm_count();

// What a resource struct holds, once checked.
struct SmResource {
  int device = 0;
  ResourceOrigin origin = ResourceOrigin::kDevice;
  uint64_t split = 0;  // the split that made it (kGroup, kRemainder), else 0
  SmSet sms;
};
// Writes `r` into `out` (type SM, the public fields and the internal image).
void write_resource(const SmResource& r, CUdevResource* out);
// Reads a resource the user passes back: CUDA_ERROR_INVALID_RESOURCE_TYPE
// when its type is not SM, CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION when
// it is not one cucpu wrote (or was edited since).
CUresult read_resource(const CUdevResource& in, SmResource* out);

// cuDevSmResourceSplitByCount's work on a checked input: the number of
// groups of `min_count` SMs (after rounding) it makes, at most `want`
// when `want` is not 0, with each group's and the remainder's SMs.
struct SmSplit {
  unsigned group_size = 0;
  unsigned groups = 0;
};
CUresult plan_split(const SmResource& in, unsigned flags, unsigned min_count, SmSplit* out);
// The SMs of group `i` of a split `plan` of `in`, and of its remainder
// after `made` groups.
SmSet split_group(const SmResource& in, const SmSplit& plan, unsigned i);
SmSet split_remainder(const SmResource& in, const SmSplit& plan, unsigned made);
// A number no other split of this process has.
uint64_t next_split_id();

struct ResourceDesc {
  int device = 0;
  SmSet sms;
};
// A new descriptor of (device, sms).
ResourceDesc* make_desc(int device, const SmSet& sms);

class GreenContext {
 public:
  GreenContext(Device* device, const SmSet& sms) : device(device), sms(sms) {}
  Device* const device;
  const SmSet sms;
  // Set once at creation: the converted context, and the id (its id).
  Context* ctx = nullptr;
  uint64_t id = 0;
};

// cuGreenCtxCreate after its arguments are checked.
GreenContext* create_green_context(Device& d, const ResourceDesc& desc);
// cuGreenCtxDestroy of a live handle; false when another thread destroyed it first.
bool destroy_green_context(GreenContext* g);
// The device of `h` when it is the converted context of a destroyed green
// context, else -1. Driver 580 still makes such a handle current
// (cuCtxSetCurrent, cuCtxPushCurrent) and answers cuCtxGetDevice under it;
// every other use answers CONTEXT_IS_DESTROYED. The answer lasts until the
// handle's slot is reused: after at least Runtime::kContextQuarantine more
// contexts were destroyed.
int destroyed_converted_device(const void* h);

}  // namespace cucpu
