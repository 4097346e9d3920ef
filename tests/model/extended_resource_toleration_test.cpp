// The ExtendedResourceToleration admission plugin's tolerations (kubernetes/kubernetes
// plugin/pkg/admission/extendedresourcetoleration/admission.go): one {key: <resource>, operator:
// Exists, effect: NoSchedule} per extended resource requested, in name order, none twice.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/extended_resource_toleration.h"

namespace gpufleet {
namespace {

std::vector<std::string> keys(const std::vector<Toleration>& ts) {
  std::vector<std::string> out;
  for (const Toleration& t : ts) {
    EXPECT_EQ(t.operator_, "Exists") << t.key;
    EXPECT_EQ(t.effect, "NoSchedule") << t.key;
    EXPECT_EQ(t.value, "") << t.key;
    out.push_back(t.key);
  }
  return out;
}

TEST(ExtendedResourceToleration, OnePerExtendedResourceInNameOrder) {
  Pod cpu_only;
  cpu_only.cpu_milli = 4000;
  std::vector<Toleration> none;
  add_extended_resource_tolerations(cpu_only, none);
  EXPECT_TRUE(none.empty());

  Pod gpu;
  gpu.num_gpu = 1;
  gpu.gpu_milli = 500;  // a shared fraction still asks for nvidia.com/gpu
  std::vector<Toleration> one;
  add_extended_resource_tolerations(gpu, one);
  EXPECT_EQ(keys(one), (std::vector<std::string>{"nvidia.com/gpu"}));

  Pod mig;
  mig.mig_requests = {{"3g.40gb", 1}, {"1g.10gb", 2}};
  mig.shared_replicas = 1;
  std::vector<Toleration> three;
  add_extended_resource_tolerations(mig, three);
  EXPECT_EQ(keys(three), (std::vector<std::string>{"nvidia.com/gpu.shared", "nvidia.com/mig-1g.10gb", "nvidia.com/mig-3g.40gb"}));
}

TEST(ExtendedResourceToleration, KeepsWhatThePodHasAndAddsNoDuplicate) {
  Pod gpu;
  gpu.num_gpu = 2;
  gpu.gpu_milli = 1000;
  Toleration own;
  own.key = "dedicated";
  own.value = "training";
  own.effect = "NoSchedule";
  Toleration same;
  same.key = "nvidia.com/gpu";
  same.operator_ = "Exists";
  same.effect = "NoSchedule";
  std::vector<Toleration> ts = {own, same};
  add_extended_resource_tolerations(gpu, ts);
  ASSERT_EQ(ts.size(), 2u);  // the equal one is not added again
  EXPECT_EQ(ts[0].key, "dedicated");
  // A toleration of the same key with another effect is not equal: the plugin's is added.
  std::vector<Toleration> other = {same};
  other[0].effect = "NoExecute";
  add_extended_resource_tolerations(gpu, other);
  ASSERT_EQ(other.size(), 2u);
  EXPECT_EQ(other[1].effect, "NoSchedule");
}

}  // namespace
}  // namespace gpufleet
