// Devices: enumeration and attributes.
#include <cstdio>
#include <cstring>

#include "api/common.h"
#include "core/allocator.h"
#include "core/array.h"
#include "core/device_attributes.h"
#include "exec/scheduler.h"

using namespace cucpu;

int cucpu::api::static_attribute(int a) { return cucpu::static_attribute(a); }

namespace {
using api::device_ok;
using api::PciLocation;

CUresult attribute(int* pi, int a, CUdevice dev) {
  if (!pi) return CUDA_ERROR_INVALID_VALUE;
  if (!device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  return device_attribute(a, dev, pi) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
}  // namespace

static CUresult impl_cuDeviceGet(CUdevice* device, int ordinal) {
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  if (!device_ok(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

static CUresult impl_cuDeviceGetCount(int* count) {
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  *count = static_cast<int>(rt().devices.size());
  return CUDA_SUCCESS;
}

static CUresult impl_cuDeviceGetName(char* name, int len, CUdevice dev) {
  if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (!device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  const std::string& n = rt().devices[static_cast<size_t>(dev)].name;
  size_t k = std::min(n.size(), static_cast<size_t>(len) - 1);
  std::memcpy(name, n.data(), k);
  name[k] = 0;
  return CUDA_SUCCESS;
}

static CUresult get_uuid(CUuuid* uuid, CUdevice dev) {
  if (!uuid) return CUDA_ERROR_INVALID_VALUE;
  if (!device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  *uuid = rt().devices[static_cast<size_t>(dev)].uuid;
  return CUDA_SUCCESS;
}

static CUresult impl_cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  if (!device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = rt().devices[static_cast<size_t>(dev)].total_mem;
  return CUDA_SUCCESS;
}

static CUresult impl_cuDeviceTotalMem(unsigned int* bytes, CUdevice dev) {
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  if (!device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  size_t t = rt().devices[static_cast<size_t>(dev)].total_mem;
  *bytes = t > 0xffffffffu ? 0xffffffffu : static_cast<unsigned>(t);
  return CUDA_SUCCESS;
}

static CUresult impl_cuDeviceGetAttribute(int* pi, const CUdevice_attribute& attrib, CUdevice dev) { return attribute(pi, api::raw_enum(attrib), dev); }

// The elements a 1D linear texture of this element may hold: driver 580
// answers 2^30, or 4 GiB of elements where that is fewer.
static CUresult impl_cuDeviceGetTexture1DLinearMaxWidth(size_t* maxWidthInElements, const CUarray_format& format,
                                                        unsigned numChannels, CUdevice dev) {
  if (!maxWidthInElements) return CUDA_ERROR_INVALID_VALUE;
  if (!device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  const size_t elem = format_bytes(api::raw_enum(format)) * numChannels;
  if (elem == 0 || (numChannels != 1 && numChannels != 2 && numChannels != 4)) return CUDA_ERROR_INVALID_VALUE;
  const size_t by_bytes = (size_t{1} << 32) / elem;
  *maxWidthInElements = by_bytes < (size_t{1} << 30) ? by_bytes : size_t{1} << 30;
  return CUDA_SUCCESS;
}

// The pre-3.0 property block, read from the attributes it names.
static CUresult impl_cuDeviceGetProperties(CUdevprop* prop, CUdevice dev) {
  if (!prop) return CUDA_ERROR_INVALID_VALUE;
  if (!device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  CUdevprop p{};
  const struct {
    int* out;
    CUdevice_attribute a;
  } fields[] = {
      {&p.maxThreadsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
      {&p.maxThreadsDim[0], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X},
      {&p.maxThreadsDim[1], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y},
      {&p.maxThreadsDim[2], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z},
      {&p.maxGridSize[0], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X},
      {&p.maxGridSize[1], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y},
      {&p.maxGridSize[2], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z},
      {&p.sharedMemPerBlock, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK},
      {&p.totalConstantMemory, CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY},
      {&p.SIMDWidth, CU_DEVICE_ATTRIBUTE_WARP_SIZE},
      {&p.memPitch, CU_DEVICE_ATTRIBUTE_MAX_PITCH},
      {&p.regsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK},
      {&p.clockRate, CU_DEVICE_ATTRIBUTE_CLOCK_RATE},
      {&p.textureAlign, CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT},
  };
  for (const auto& f : fields)
    if (CUresult r = attribute(f.out, f.a, dev)) return r;
  *prop = p;
  return CUDA_SUCCESS;
}

static CUresult impl_cuDeviceComputeCapability(int* major, int* minor, CUdevice dev) {
  if (!major || !minor) return CUDA_ERROR_INVALID_VALUE;
  if (!device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  *major = 9;
  *minor = 0;
  return CUDA_SUCCESS;
}

static CUresult impl_cuDeviceCanAccessPeer(int* canAccessPeer, CUdevice dev, CUdevice peerDev) {
  if (!canAccessPeer) return CUDA_ERROR_INVALID_VALUE;
  if (!device_ok(dev) || !device_ok(peerDev)) return CUDA_ERROR_INVALID_DEVICE;
  // Every virtual device shares the host's memory; a device is not its own peer.
  *canAccessPeer = dev != peerDev ? 1 : 0;
  return CUDA_SUCCESS;
}

// Between two virtual devices, every peer capability holds (one memory);
// a device is not its own peer.
static CUresult impl_cuDeviceGetP2PAttribute(int* value, const CUdevice_P2PAttribute& attrib, CUdevice srcDevice,
                                             CUdevice dstDevice) {
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  if (!device_ok(srcDevice) || !device_ok(dstDevice) || srcDevice == dstDevice) return CUDA_ERROR_INVALID_DEVICE;
  switch (api::raw_enum(attrib)) {
    case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK: *value = 0; return CUDA_SUCCESS;
    case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED: *value = 1; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

PciLocation cucpu::api::pci_location(CUdevice dev) {
  PciLocation l;
  attribute(&l.domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, dev);
  attribute(&l.bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev);
  attribute(&l.device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev);
  return l;
}

namespace {
// "domain:bus:device.function", "domain:bus:device" or "bus:device.function",
// in hexadecimal, as the driver accepts them.
bool parse_bus_id(const char* text, PciLocation* out) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  int n = 0;
  const bool ok =
      (std::sscanf(text, "%x:%x:%x.%x%n", &domain, &bus, &device, &function, &n) == 4 && !text[n]) ||
      (n = 0, std::sscanf(text, "%x:%x:%x%n", &domain, &bus, &device, &n) == 3 && !text[n]) ||
      (n = 0, domain = 0, std::sscanf(text, "%x:%x.%x%n", &bus, &device, &function, &n) == 3 && !text[n]);
  *out = {static_cast<int>(domain), static_cast<int>(bus), static_cast<int>(device)};
  return ok;
}
}  // namespace

// PCI identity, in the driver's "dddd:bb:dd.f" form (12 characters on driver 580).
static CUresult impl_cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
  if (!pciBusId || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (!device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  const PciLocation l = api::pci_location(dev);
  char id[32];
  const int n = std::snprintf(id, sizeof id, "%04x:%02x:%02x.0", l.domain, l.bus, l.device);
  if (n < 0 || n >= len) return CUDA_ERROR_INVALID_VALUE;  // no room for the whole id
  std::memcpy(pciBusId, id, static_cast<size_t>(n) + 1);
  return CUDA_SUCCESS;
}

static CUresult impl_cuDeviceGetByPCIBusId(CUdevice* dev, const char* pciBusId) {
  if (!dev || !pciBusId) return CUDA_ERROR_INVALID_VALUE;
  PciLocation want;
  if (!parse_bus_id(pciBusId, &want)) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < rt().devices.size(); ++i) {
    const PciLocation l = api::pci_location(static_cast<CUdevice>(i));
    if (l.domain == want.domain && l.bus == want.bus && l.device == want.device) {
      *dev = static_cast<CUdevice>(i);
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_INVALID_DEVICE;
}

#include "api/entries/device.inc"
