// Green contexts, part 1: SM resources, their splits, descriptors, and the
// green contexts made of them. Written against what driver 580 answered
// (tools/probes/green_ctx_probe.cpp), for any device size: counts come from
// the device's own resource, never from an H100's 132 SMs.
#include <cstring>
#include <vector>

#include "green_util.h"
#include "harness.h"

using green::device_sm;

CONF_TEST(GreenDeviceResourceDescribesEverySm) {
  CUdevResource r = device_sm();
  EXPECT_TRUE(r.type == CU_DEV_RESOURCE_TYPE_SM);
  int sms = 0;
  ASSERT_CU(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
  EXPECT_TRUE(static_cast<int>(r.sm.smCount) == sms);
  EXPECT_TRUE(r.sm.minSmPartitionSize >= 1 && r.sm.minSmPartitionSize <= r.sm.smCount);
  EXPECT_TRUE(r.sm.smCoscheduledAlignment >= 1);
  CUdevResource again{};
  ASSERT_CU(cuDeviceGetDevResource(0, &again, CU_DEV_RESOURCE_TYPE_SM));
  EXPECT_TRUE(std::memcmp(&r, &again, sizeof r) == 0);
  CUdevResource c{};
  ASSERT_CU(cuCtxGetDevResource(conf::primary(), &c, CU_DEV_RESOURCE_TYPE_SM));
  EXPECT_TRUE(std::memcmp(&c, &r, sizeof r) == 0);  // the device's own resource
}

CONF_TEST(GreenResourceQueriesRefuseBadArguments) {
  CUdevResource r{};
  EXPECT_CU(CUDA_ERROR_INVALID_RESOURCE_TYPE, cuDeviceGetDevResource(0, &r, CU_DEV_RESOURCE_TYPE_INVALID));
  EXPECT_CU(CUDA_ERROR_INVALID_RESOURCE_TYPE, cuDeviceGetDevResource(0, &r, static_cast<CUdevResourceType>(2)));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetDevResource(-1, &r, CU_DEV_RESOURCE_TYPE_SM));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetDevResource(99, &r, CU_DEV_RESOURCE_TYPE_SM));
  EXPECT_CU(CUDA_ERROR_INVALID_RESOURCE_TYPE, cuCtxGetDevResource(conf::primary(), &r, CU_DEV_RESOURCE_TYPE_INVALID));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxGetDevResource(nullptr, &r, CU_DEV_RESOURCE_TYPE_SM));
  CUcontext made = nullptr;
  ASSERT_CU(cuCtxCreate(&made, nullptr, 0, 0));
  ASSERT_CU(cuCtxGetDevResource(made, &r, CU_DEV_RESOURCE_TYPE_SM));
  EXPECT_TRUE(r.sm.smCount == device_sm().sm.smCount);
  ASSERT_CU(cuCtxDestroy(made));
  EXPECT_CU(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuCtxGetDevResource(made, &r, CU_DEV_RESOURCE_TYPE_SM));
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
}

CONF_TEST(GreenSplitMakesEqualGroupsOfTheRoundedCount) {
  const CUdevResource dev = device_sm();
  const unsigned total = dev.sm.smCount, min = dev.sm.minSmPartitionSize;
  for (unsigned flags : {0u, unsigned{CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING},
                         unsigned{CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE}}) {
    for (unsigned want : {0u, 1u, min, min + 1, total / 2 + 1, total}) {
      unsigned n = 0;
      ASSERT_CU(cuDevSmResourceSplitByCount(nullptr, &n, &dev, nullptr, flags, want));
      EXPECT_TRUE(n >= 1);
      std::vector<CUdevResource> groups(n);
      unsigned k = n;
      CUdevResource rest{};
      ASSERT_CU(cuDevSmResourceSplitByCount(groups.data(), &k, &dev, &rest, flags, want));
      EXPECT_TRUE(k == n);
      unsigned in_groups = 0;
      for (const CUdevResource& g : groups) {
        EXPECT_TRUE(g.type == CU_DEV_RESOURCE_TYPE_SM);
        EXPECT_TRUE(g.sm.smCount == groups[0].sm.smCount);  // symmetrical
        EXPECT_TRUE(g.sm.smCount >= want);
        // A split's outputs report no granularity of their own.
        EXPECT_TRUE(g.sm.minSmPartitionSize == 0 && g.sm.smCoscheduledAlignment == 0);
        in_groups += g.sm.smCount;
      }
      if (flags == 0) EXPECT_TRUE(groups[0].sm.smCount >= min);
      EXPECT_TRUE(in_groups <= total);
      if (in_groups == total) {
        EXPECT_TRUE(rest.type == CU_DEV_RESOURCE_TYPE_INVALID && rest.sm.smCount == 0);
      } else {
        EXPECT_TRUE(rest.type == CU_DEV_RESOURCE_TYPE_SM && rest.sm.smCount == total - in_groups);
      }
    }
  }
  // All of the device, asked for: one group of every SM.
  unsigned n = 0;
  ASSERT_CU(cuDevSmResourceSplitByCount(nullptr, &n, &dev, nullptr, 0, total));
  EXPECT_TRUE(n == 1);
}

CONF_TEST(GreenSplitGivesFewerGroupsWhenAskedAndTheRestAsRemainder) {
  const CUdevResource dev = device_sm();
  const unsigned min = dev.sm.minSmPartitionSize;
  unsigned n = 0;
  ASSERT_CU(cuDevSmResourceSplitByCount(nullptr, &n, &dev, nullptr, 0, min));
  if (n < 2) throw conf::Skip{"the device has room for one partition only"};
  CUdevResource one{}, rest{};
  unsigned k = 1;
  ASSERT_CU(cuDevSmResourceSplitByCount(&one, &k, &dev, &rest, 0, min));
  EXPECT_TRUE(k == 1);
  EXPECT_TRUE(rest.type == CU_DEV_RESOURCE_TYPE_SM && rest.sm.smCount == dev.sm.smCount - one.sm.smCount);
  // A remainder, or no remainder pointer at all.
  k = 1;
  ASSERT_CU(cuDevSmResourceSplitByCount(&one, &k, &dev, nullptr, 0, min));
  EXPECT_TRUE(k == 1);
}

CONF_TEST(GreenSplitRefusesBadArguments) {
  const CUdevResource dev = device_sm();
  CUdevResource groups[4];
  unsigned n = 4;
  CUdevResource rest{};
  EXPECT_CU(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
            cuDevSmResourceSplitByCount(groups, &n, &dev, &rest, 0, dev.sm.smCount + 1));
  EXPECT_CU(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
            cuDevSmResourceSplitByCount(nullptr, &n, &dev, nullptr, 0, 100000));
  // The two flags are one or the other.
  n = 4;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDevSmResourceSplitByCount(groups, &n, &dev, &rest, 3, 0));
  n = 4;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDevSmResourceSplitByCount(nullptr, &n, &dev, nullptr, 3, 0));
}

CONF_TEST(GreenDescriptorsAreMadeOfResourcesOfOneDevice) {
  const CUdevResource dev = device_sm();
  std::vector<CUdevResource> groups = green::split(dev.sm.minSmPartitionSize);
  CUdevResourceDesc d = nullptr, d2 = nullptr;
  ASSERT_CU(cuDevResourceGenerateDesc(&d, &groups[0], 1));
  ASSERT_CU(cuDevResourceGenerateDesc(&d2, &groups[0], 1));
  EXPECT_TRUE(d != nullptr && d2 != nullptr && d != d2);  // a new descriptor each call
  CUdevResource whole = dev;
  ASSERT_CU(cuDevResourceGenerateDesc(&d, &whole, 1));
  if (groups.size() >= 2) ASSERT_CU(cuDevResourceGenerateDesc(&d, groups.data(), 2));
  // Resources of different splits, and a group beside the device's: accepted.
  std::vector<CUdevResource> other = green::split(dev.sm.minSmPartitionSize);
  CUdevResource mixed[2] = {groups[0], other.back()};
  ASSERT_CU(cuDevResourceGenerateDesc(&d, mixed, 2));
  CUdevResource dev_and_group[2] = {dev, groups[0]};
  ASSERT_CU(cuDevResourceGenerateDesc(&d, dev_and_group, 2));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDevResourceGenerateDesc(nullptr, &groups[0], 1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDevResourceGenerateDesc(&d, nullptr, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDevResourceGenerateDesc(&d, nullptr, 0));
}

CONF_TEST(GreenDescriptorsRefuseForgedAndEditedResources) {
  const CUdevResource dev = device_sm();
  std::vector<CUdevResource> groups = green::split(dev.sm.minSmPartitionSize);
  CUdevResourceDesc d = nullptr;
  CUdevResource none{};
  EXPECT_CU(CUDA_ERROR_INVALID_RESOURCE_TYPE, cuDevResourceGenerateDesc(&d, &none, 1));
  CUdevResource typed = groups[0];
  typed.type = static_cast<CUdevResourceType>(2);
  EXPECT_CU(CUDA_ERROR_INVALID_RESOURCE_TYPE, cuDevResourceGenerateDesc(&d, &typed, 1));
  CUdevResource forged{};
  forged.type = CU_DEV_RESOURCE_TYPE_SM;
  forged.sm.smCount = groups[0].sm.smCount;
  EXPECT_CU(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, cuDevResourceGenerateDesc(&d, &forged, 1));
  CUdevResource edited = dev;
  edited.sm.smCount = dev.sm.smCount - 1;
  EXPECT_CU(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, cuDevResourceGenerateDesc(&d, &edited, 1));
  // A split refuses the same.
  unsigned n = 4;
  CUdevResource out[4];
  EXPECT_CU(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, cuDevSmResourceSplitByCount(out, &n, &forged, nullptr, 0, 0));
  if (conf::on_cucpu()) {
    // Driver 580 crashes on a descriptor of zero resources; cucpu refuses it.
    EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDevResourceGenerateDesc(&d, groups.data(), 0));
  }
}

CONF_TEST(GreenContextsOfGroupsHoldTheirSms) {
  const CUdevResource dev = device_sm();
  std::vector<CUdevResource> groups = green::split(dev.sm.minSmPartitionSize);
  std::vector<CUgreenCtx> made;
  for (const CUdevResource& grp : groups) {
    CUdevResourceDesc d = nullptr;
    CUdevResource copy = grp;
    ASSERT_CU(cuDevResourceGenerateDesc(&d, &copy, 1));
    CUgreenCtx g = nullptr;
    ASSERT_CU(cuGreenCtxCreate(&g, d, 0, CU_GREEN_CTX_DEFAULT_STREAM));
    CUdevResource got{};
    ASSERT_CU(cuGreenCtxGetDevResource(g, &got, CU_DEV_RESOURCE_TYPE_SM));
    EXPECT_TRUE(got.type == CU_DEV_RESOURCE_TYPE_SM && got.sm.smCount == grp.sm.smCount);
    CUcontext c = nullptr;
    ASSERT_CU(cuCtxFromGreenCtx(&c, g));
    CUdevResource via_ctx{};
    ASSERT_CU(cuCtxGetDevResource(c, &via_ctx, CU_DEV_RESOURCE_TYPE_SM));
    EXPECT_TRUE(via_ctx.sm.smCount == grp.sm.smCount);
    made.push_back(g);
  }
  // One descriptor makes as many green contexts as asked.
  CUdevResourceDesc d = nullptr;
  ASSERT_CU(cuDevResourceGenerateDesc(&d, &groups[0], 1));
  for (int i = 0; i < 16; ++i) {
    CUgreenCtx g = nullptr;
    ASSERT_CU(cuGreenCtxCreate(&g, d, 0, CU_GREEN_CTX_DEFAULT_STREAM));
    made.push_back(g);
  }
  for (CUgreenCtx g : made) ASSERT_CU(cuGreenCtxDestroy(g));
}

CONF_TEST(GreenContextsOfSeveralResourcesHoldThemAll) {
  const CUdevResource dev = device_sm();
  std::vector<CUdevResource> groups = green::split(dev.sm.minSmPartitionSize);
  if (groups.size() < 2) throw conf::Skip{"the device has room for one partition only"};
  CUdevResourceDesc d = nullptr;
  ASSERT_CU(cuDevResourceGenerateDesc(&d, groups.data(), 2));
  CUgreenCtx g = nullptr;
  ASSERT_CU(cuGreenCtxCreate(&g, d, 0, CU_GREEN_CTX_DEFAULT_STREAM));
  CUdevResource got{};
  ASSERT_CU(cuGreenCtxGetDevResource(g, &got, CU_DEV_RESOURCE_TYPE_SM));
  EXPECT_TRUE(got.sm.smCount == groups[0].sm.smCount + groups[1].sm.smCount);
  EXPECT_TRUE(got.sm.minSmPartitionSize >= 1 && got.sm.smCoscheduledAlignment >= 1);
  // Its resource splits again, through the green context.
  unsigned n = 0;
  ASSERT_CU(cuDevSmResourceSplitByCount(nullptr, &n, &got, nullptr, 0, got.sm.minSmPartitionSize));
  EXPECT_TRUE(n >= 1);
  ASSERT_CU(cuGreenCtxDestroy(g));
}

// Execution affinity: whether a device supports SM limits on contexts
// (cucpu: no, cuCtxCreate_v3 refuses them), and the SMs a context holds.
CONF_TEST(ExecAffinityReportsTheSmsAContextHolds) {
  int supported = -1;
  ASSERT_CU(cuDeviceGetExecAffinitySupport(&supported, CU_EXEC_AFFINITY_TYPE_SM_COUNT, 0));
  conf::info_value("exec_affinity_supported", supported);
  EXPECT_TRUE(supported == 0 || supported == 1);
  if (conf::on_cucpu()) EXPECT_TRUE(supported == 0);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetExecAffinitySupport(nullptr, CU_EXEC_AFFINITY_TYPE_SM_COUNT, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetExecAffinitySupport(&supported, CU_EXEC_AFFINITY_TYPE_SM_COUNT, 99));
  CUresult r = cuDeviceGetExecAffinitySupport(&supported, static_cast<CUexecAffinityType>(7), 0);
  conf::info("exec_affinity_support_bad_type", r);
  EXPECT_CU(CUDA_SUCCESS, r);  // driver 580 answers for an unknown type too
  conf::info_value("exec_affinity_support_of_bad_type", supported);
  CUexecAffinityParam p{};
  int sms = 0;
  ASSERT_CU(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
  r = cuCtxGetExecAffinity(&p, CU_EXEC_AFFINITY_TYPE_SM_COUNT);
  conf::info("exec_affinity_of_primary", r);
  ASSERT_CU(r);
  conf::info_value("exec_affinity_primary_sms", p.param.smCount.val);
  EXPECT_TRUE(p.type == CU_EXEC_AFFINITY_TYPE_SM_COUNT && static_cast<int>(p.param.smCount.val) == sms);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxGetExecAffinity(nullptr, CU_EXEC_AFFINITY_TYPE_SM_COUNT));
  r = cuCtxGetExecAffinity(&p, static_cast<CUexecAffinityType>(7));
  conf::info("exec_affinity_bad_type", r);
  EXPECT_TRUE(r != CUDA_SUCCESS);
  {
    green::Green gc;
    CUdevResource held{};
    ASSERT_CU(cuCtxGetDevResource(gc.c, &held, CU_DEV_RESOURCE_TYPE_SM));
    ASSERT_CU(cuCtxSetCurrent(gc.c));
    r = cuCtxGetExecAffinity(&p, CU_EXEC_AFFINITY_TYPE_SM_COUNT);
    conf::info("exec_affinity_of_green", r);
    conf::info_value("exec_affinity_green_sms", p.param.smCount.val);
    conf::info_value("green_resource_sms", held.sm.smCount);
    ASSERT_CU(cuCtxSetCurrent(conf::primary()));
    EXPECT_TRUE(r == CUDA_SUCCESS && p.param.smCount.val == held.sm.smCount);
  }
  ASSERT_CU(cuCtxSetCurrent(nullptr));
  r = cuCtxGetExecAffinity(&p, CU_EXEC_AFFINITY_TYPE_SM_COUNT);
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  conf::info("exec_affinity_without_context", r);
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, r);
}
