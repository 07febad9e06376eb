#include "core/green_context.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/context.h"
#include "core/primary_context.h"
#include "exec/scheduler.h"

namespace cucpu {
namespace {

// The bytes cucpu keeps in a resource's _internal_padding.
struct ResourceImage {
  uint32_t magic;
  int32_t device;
  uint64_t split;
  uint32_t origin;
  uint32_t sm_total;  // the device's SM count when it was written
  uint64_t sms[kMaxWorkers / 64];
  uint64_t checksum;
};
static_assert(sizeof(ResourceImage) <= sizeof(CUdevResource{}._internal_padding));
constexpr uint32_t kResourceMagic = 0x52554343;  // "CCUR"

uint64_t fnv(uint64_t h, const void* p, size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}
// Over the image (but its checksum) and the public fields a user could edit.
uint64_t checksum_of(const ResourceImage& im, const CUdevSmResource& pub) {
  uint64_t h = fnv(0xcbf29ce484222325ull, &im, offsetof(ResourceImage, checksum));
  return fnv(h, &pub, sizeof pub);
}

void to_words(const SmSet& s, uint64_t* w) {
  for (size_t i = 0; i < kMaxWorkers / 64; ++i) w[i] = 0;
  for (size_t i = 0; i < kMaxWorkers; ++i)
    if (s.test(i)) w[i / 64] |= uint64_t{1} << (i % 64);
}
SmSet from_words(const uint64_t* w) {
  SmSet s;
  for (size_t i = 0; i < kMaxWorkers; ++i)
    if (w[i / 64] >> (i % 64) & 1) s.set(i);
  return s;
}

// The i-th SM of `s` in ascending order, and those after it.
SmSet take_range(const SmSet& s, size_t from, size_t count) {
  SmSet out;
  size_t seen = 0;
  for (size_t i = 0; i < kMaxWorkers && count; ++i) {
    if (!s.test(i)) continue;
    if (seen++ < from) continue;
    out.set(i);
    --count;
  }
  return out;
}

}  // namespace

unsigned device_sm_count() { return static_cast<unsigned>(Scheduler::instance().worker_count()); }

SmGranularity sm_granularity(const Device&) {
  // One SM is one worker: any set of SMs is a set of whole workers, so a
  // partition may be as small as one SM and of any size.
  return {1, 1};
}

void write_resource(const SmResource& r, CUdevResource* out) {
  std::memset(out, 0, sizeof *out);
  // An empty remainder is no resource (driver 580: type INVALID, all zero).
  if (r.sms.none()) return;
  out->type = CU_DEV_RESOURCE_TYPE_SM;
  out->sm.smCount = static_cast<unsigned>(r.sms.count());
  // A split's outputs report no granularity (driver 580: both 0); they are
  // split again only through a green context made of them.
  if (r.origin != ResourceOrigin::kGroup && r.origin != ResourceOrigin::kRemainder) {
    const SmGranularity g = sm_granularity(rt().devices[static_cast<size_t>(r.device)]);
    out->sm.minSmPartitionSize = g.min_partition;
    out->sm.smCoscheduledAlignment = g.alignment;
  }
  ResourceImage im{};
  im.magic = kResourceMagic;
  im.device = r.device;
  im.split = r.split;
  im.origin = static_cast<uint32_t>(r.origin);
  im.sm_total = device_sm_count();
  to_words(r.sms, im.sms);
  im.checksum = checksum_of(im, out->sm);
  std::memcpy(out->_internal_padding, &im, sizeof im);
}

CUresult read_resource(const CUdevResource& in, SmResource* out) {
  int type;
  std::memcpy(&type, &in.type, sizeof type);
  if (type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  ResourceImage im;
  std::memcpy(&im, in._internal_padding, sizeof im);
  if (im.magic != kResourceMagic || im.checksum != checksum_of(im, in.sm) || im.device < 0 ||
      static_cast<size_t>(im.device) >= rt().devices.size() || im.sm_total != device_sm_count() ||
      im.origin < static_cast<uint32_t>(ResourceOrigin::kDevice) ||
      im.origin > static_cast<uint32_t>(ResourceOrigin::kRemainder))
    return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
  out->device = im.device;
  out->origin = static_cast<ResourceOrigin>(im.origin);
  out->split = im.split;
  out->sms = from_words(im.sms);
  return CUDA_SUCCESS;
}

CUresult plan_split(const SmResource& in, unsigned flags, unsigned min_count, SmSplit* out) {
  // A split's output is split again only through a green context made of it.
  if (in.origin == ResourceOrigin::kGroup || in.origin == ResourceOrigin::kRemainder)
    return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
  const unsigned count = static_cast<unsigned>(in.sms.count());
  if (min_count > count) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
  SmGranularity g = sm_granularity(rt().devices[static_cast<size_t>(in.device)]);
  if (flags & CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING) g = {1, 1};
  // minCount, at least the minimum partition, rounded up to the alignment
  // but never past the whole input (driver 580: 131 of 132 SMs is one
  // group of 132).
  unsigned size = min_count < g.min_partition ? g.min_partition : min_count;
  size = (size + g.alignment - 1) / g.alignment * g.alignment;
  if (size > count) size = count;
  if (size == 0) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
  out->group_size = size;
  out->groups = count / size;
  return CUDA_SUCCESS;
}

SmSet split_group(const SmResource& in, const SmSplit& plan, unsigned i) {
  return take_range(in.sms, size_t{i} * plan.group_size, plan.group_size);
}

SmSet split_remainder(const SmResource& in, const SmSplit& plan, unsigned made) {
  return take_range(in.sms, size_t{made} * plan.group_size, kMaxWorkers);
}

int destroyed_converted_device(const void* h) { return static_cast<int>(rt().contexts.epitaph(h)) - 1; }

uint64_t next_split_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

ResourceDesc* make_desc(int device, const SmSet& sms) {
  ResourceDesc* d = rt().resource_descs.create();
  d->device = device;
  d->sms = sms;
  return d;
}

GreenContext* create_green_context(Device& d, const ResourceDesc& desc) {
  Context* primary = primary_retain(d);
  Scheduler& pool = partition_pool(workers_of(desc.sms, device_sm_count()));
  auto* g = new GreenContext(&d, desc.sms);  // owned by its converted context
  g->ctx = rt().contexts.create(&d, primary->flags.load(), g, primary, &pool);
  g->id = g->ctx->id;
  return g;
}

bool destroy_green_context(GreenContext* g) {
  Context* c = g->ctx;
  // Dead first (the one handle both are): a stream made from here on never
  // joins the context (Context::link_stream), and calls naming its streams
  // answer CONTEXT_IS_DESTROYED; then its work drains.
  if (!rt().contexts.try_kill(c)) return false;
  Device& d = *g->device;
  rt().contexts.set_epitaph(c, static_cast<uint32_t>(d.ordinal) + 1);  // see destroyed_converted_device
  c->synchronize();
  if (!c->has_live_streams()) rt().contexts.release(c);  // and the green context with it
  else c->leave_registry();
  primary_release(d);
  return true;
}

}  // namespace cucpu
