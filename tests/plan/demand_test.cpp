// The workload's demand curve (src/plan/demand.h): hand-computed buckets, GPU-hours, peak and quantiles.
#include <gtest/gtest.h>

#include <stdexcept>

#include "plan/demand.h"

namespace gpufleet::plan {
namespace {

constexpr double kHour = 3600;
constexpr int64_t kGiB = int64_t{1} << 30;

sim::WorkloadSpec job(std::string name, double arrival_s, double duration_s, int32_t pods, int32_t num_gpu,
                      int32_t gpu_milli = 1000) {
  sim::WorkloadSpec s;
  s.name = std::move(name);
  s.kind = sim::WorkloadKind::kJob;
  s.arrival_s = arrival_s;
  s.duration_s = duration_s;
  s.pods = pods;
  s.num_gpu = num_gpu;
  s.gpu_milli = num_gpu > 0 ? gpu_milli : 0;
  s.cpu_milli = 1000;
  s.memory_bytes = kGiB;
  return s;
}

sim::WorkloadSpec service(std::string name, double arrival_s, int32_t replicas, int32_t num_gpu) {
  sim::WorkloadSpec s = job(std::move(name), arrival_s, 0, replicas, num_gpu);
  s.kind = sim::WorkloadKind::kService;
  return s;
}

TEST(Demand, TwoOverlappingJobs) {
  // A: 2 pods x 1 GPU over [0, 2h), on-demand only. B: 1 pod x 4 GPUs over [1.5h, 2.5h), spot ok.
  sim::Workload w;
  w.horizon_s = 4 * kHour;
  w.items.push_back(job("a", 0, 2 * kHour, 2, 1));
  w.items.push_back(job("b", 1.5 * kHour, kHour, 1, 4));
  w.items.back().capacity = sim::CapacityPreference::kSpotOk;
  const DemandCurve c = workload_demand(w, kHour, 1000);
  ASSERT_EQ(c.buckets.size(), 4u);
  EXPECT_DOUBLE_EQ(c.buckets[0].gpus, 2);
  EXPECT_DOUBLE_EQ(c.buckets[1].gpus, 4);  // 2 + 4 x 0.5
  EXPECT_DOUBLE_EQ(c.buckets[2].gpus, 2);  // 4 x 0.5
  EXPECT_DOUBLE_EQ(c.buckets[3].gpus, 0);
  EXPECT_DOUBLE_EQ(c.buckets[1].gpus_on_demand_only, 2);
  EXPECT_DOUBLE_EQ(c.buckets[2].gpus_on_demand_only, 0);
  EXPECT_DOUBLE_EQ(c.buckets[1].cpu_milli, 2000 + 500);
  EXPECT_DOUBLE_EQ(c.buckets[1].cpu_milli_on_demand_only, 2000);
  EXPECT_DOUBLE_EQ(c.buckets[1].memory_bytes, 2.5 * kGiB);
  EXPECT_DOUBLE_EQ(c.buckets[1].gpus_production, 0);  // priority 0 < 1000
  EXPECT_DOUBLE_EQ(c.gpu_hours, 2 * 2 + 4 * 1);
  EXPECT_DOUBLE_EQ(c.gpu_hours_on_demand_only, 4);
  EXPECT_DOUBLE_EQ(c.peak_gpus, 6);  // both run over [1.5h, 2h)
  EXPECT_DOUBLE_EQ(c.buckets[3].start_s, 3 * kHour);
  EXPECT_DOUBLE_EQ(c.buckets[3].end_s, 4 * kHour);
  ASSERT_EQ(c.pod_shapes.size(), 2u);
  EXPECT_EQ(c.pod_shapes[1].item, "b");
  EXPECT_EQ(c.pod_shapes[1].node_gpus, 4);
}

TEST(Demand, BackToBackJobsDoNotAddToThePeak) {
  sim::Workload w;
  w.horizon_s = 2 * kHour;
  w.items.push_back(job("a", 0, kHour, 1, 8));
  w.items.push_back(job("b", kHour, kHour, 1, 8));
  const DemandCurve c = workload_demand(w, kHour, 0);
  EXPECT_DOUBLE_EQ(c.peak_gpus, 8);
  EXPECT_DOUBLE_EQ(c.gpu_hours, 16);
  EXPECT_DOUBLE_EQ(c.buckets[0].gpus_production, 8);  // priority 0 >= 0
  EXPECT_EQ(c.pod_shapes.size(), 1u);                 // one request, two items
}

TEST(Demand, ServiceRunsToTheHorizonAndTheLastBucketIsShorter) {
  // 3 replicas x 1 GPU from 2h; horizon 10h in buckets of 4h: [0,4) [4,8) [8,10). Spot only.
  sim::Workload w;
  w.horizon_s = 10 * kHour;
  w.items.push_back(service("svc", 2 * kHour, 3, 1));
  w.items.back().capacity = sim::CapacityPreference::kSpot;
  w.items.back().cpu_milli = 4000;
  const DemandCurve c = workload_demand(w, 4 * kHour, 0);
  ASSERT_EQ(c.buckets.size(), 3u);
  EXPECT_DOUBLE_EQ(c.buckets[2].start_s, 8 * kHour);
  EXPECT_DOUBLE_EQ(c.buckets[2].end_s, 10 * kHour);
  EXPECT_DOUBLE_EQ(c.buckets[0].gpus, 1.5);
  EXPECT_DOUBLE_EQ(c.buckets[1].gpus, 3);
  EXPECT_DOUBLE_EQ(c.buckets[2].gpus, 3);
  EXPECT_DOUBLE_EQ(c.buckets[0].cpu_milli, 6000);
  for (const DemandBucket& b : c.buckets) {
    EXPECT_DOUBLE_EQ(b.gpus_on_demand_only, 0);
    EXPECT_DOUBLE_EQ(b.cpu_milli_on_demand_only, 0);
  }
  EXPECT_DOUBLE_EQ(c.gpu_hours, 24);
  EXPECT_DOUBLE_EQ(c.gpu_hours_on_demand_only, 0);
  EXPECT_DOUBLE_EQ(c.peak_gpus, 3);
  EXPECT_DOUBLE_EQ(c.horizon_s, 10 * kHour);
  EXPECT_DOUBLE_EQ(c.bucket_s, 4 * kHour);
}

TEST(Demand, FractionalGpusAndMig) {
  // 4 pods of 250 milli = 1 GPU; 1 pod with 2 MIG devices 3g.40gb = 6/7 GPU; production priority 100.
  sim::Workload w;
  w.horizon_s = kHour;
  w.items.push_back(job("share", 0, kHour, 4, 1, 250));
  w.items.back().priority = 100;
  sim::WorkloadSpec mig = job("mig", 0, kHour, 1, 0);
  mig.mig_requests = {MigRequest{"3g.40gb", 2}};
  w.items.push_back(mig);
  sim::WorkloadSpec cpu = job("cpu", 0, kHour, 1, 0);
  cpu.cpu_milli = 16000;
  w.items.push_back(cpu);
  const DemandCurve c = workload_demand(w, kHour, 100);
  ASSERT_EQ(c.buckets.size(), 1u);
  EXPECT_NEAR(c.buckets[0].gpus, 1 + 6.0 / 7.0, 1e-12);
  EXPECT_NEAR(c.buckets[0].gpus_production, 1, 1e-12);
  EXPECT_NEAR(c.buckets[0].cpu_milli, 4000 + 1000 + 16000, 1e-9);
  EXPECT_NEAR(c.peak_gpus, 1 + 6.0 / 7.0, 1e-12);
  ASSERT_EQ(c.pod_shapes.size(), 3u);
  EXPECT_EQ(c.pod_shapes[0].node_gpus, 1);
  EXPECT_EQ(c.pod_shapes[1].mig_profile, "3g.40gb");
  EXPECT_EQ(c.pod_shapes[1].node_gpus, 1);  // 2 devices of 3g fit one GPU (max 2 per GPU)
  EXPECT_EQ(c.pod_shapes[2].node_gpus, 0);
  EXPECT_EQ(c.pod_shapes[2].cpu_milli, 16000);
}

TEST(Demand, PartlyCoveredBucketsAndTheHorizonCut) {
  // 2 GPUs over [30 min, 45 min) of the first hour: average 0.5, peak 2. A job from 3.5h for 2h
  // is cut at the 4h horizon. A ScaledJob template counts nothing.
  sim::Workload w;
  w.horizon_s = 4 * kHour;
  w.items.push_back(job("short", 0.5 * kHour, 0.25 * kHour, 1, 2));
  w.items.push_back(job("late", 3.5 * kHour, 2 * kHour, 1, 1));
  w.items.push_back(job("template", 0, kHour, 10, 8));
  w.items.back().on_demand = true;
  const DemandCurve c = workload_demand(w, kHour, 0);
  EXPECT_DOUBLE_EQ(c.buckets[0].gpus, 0.5);
  EXPECT_DOUBLE_EQ(c.buckets[1].gpus, 0);
  EXPECT_DOUBLE_EQ(c.buckets[3].gpus, 0.5);
  EXPECT_DOUBLE_EQ(c.gpu_hours, 0.5 + 0.5);
  EXPECT_DOUBLE_EQ(c.peak_gpus, 2);
  // A job spanning several buckets: partial, whole, partial.
  sim::Workload w2;
  w2.horizon_s = 5 * kHour;
  w2.items.push_back(job("long", 0.75 * kHour, 3.5 * kHour, 1, 4));  // [0.75h, 4.25h)
  const DemandCurve c2 = workload_demand(w2, kHour, 0);
  EXPECT_DOUBLE_EQ(c2.buckets[0].gpus, 1);
  EXPECT_DOUBLE_EQ(c2.buckets[1].gpus, 4);
  EXPECT_DOUBLE_EQ(c2.buckets[3].gpus, 4);
  EXPECT_DOUBLE_EQ(c2.buckets[4].gpus, 1);
  EXPECT_DOUBLE_EQ(c2.gpu_hours, 14);
}

TEST(Demand, Quantiles) {
  // Equal buckets 2, 4, 2, 0 (the two overlapping jobs).
  sim::Workload w;
  w.horizon_s = 4 * kHour;
  w.items.push_back(job("a", 0, 2 * kHour, 2, 1));
  w.items.push_back(job("b", 1.5 * kHour, kHour, 1, 4));
  w.items.back().capacity = sim::CapacityPreference::kSpotOk;
  const DemandCurve c = workload_demand(w, kHour, 0);
  EXPECT_DOUBLE_EQ(demand_quantile(c, DemandField::kGpus, 0), 0);
  EXPECT_DOUBLE_EQ(demand_quantile(c, DemandField::kGpus, 0.25), 0);
  EXPECT_DOUBLE_EQ(demand_quantile(c, DemandField::kGpus, 0.5), 2);
  EXPECT_DOUBLE_EQ(demand_quantile(c, DemandField::kGpus, 0.75), 2);
  EXPECT_DOUBLE_EQ(demand_quantile(c, DemandField::kGpus, 0.9), 4);
  EXPECT_DOUBLE_EQ(demand_quantile(c, DemandField::kGpus, 1), 4);
  EXPECT_DOUBLE_EQ(demand_quantile(c, DemandField::kGpusOnDemandOnly, 1), 2);
  EXPECT_DOUBLE_EQ(demand_quantile(c, DemandField::kGpusProduction, 0.6), 2);
  // Weighted by length: 1.5 over 4h, 3 over 4h and 2h.
  sim::Workload s;
  s.horizon_s = 10 * kHour;
  s.items.push_back(service("svc", 2 * kHour, 3, 1));
  const DemandCurve cs = workload_demand(s, 4 * kHour, 0);
  EXPECT_DOUBLE_EQ(demand_quantile(cs, DemandField::kGpus, 0.4), 1.5);
  EXPECT_DOUBLE_EQ(demand_quantile(cs, DemandField::kGpus, 0.41), 3);
  EXPECT_THROW(demand_quantile(cs, DemandField::kGpus, 1.5), std::invalid_argument);
  EXPECT_THROW(demand_quantile(cs, DemandField::kGpus, -0.1), std::invalid_argument);
  EXPECT_DOUBLE_EQ(demand_quantile(DemandCurve{}, DemandField::kGpus, 0.5), 0);
}

TEST(Demand, RejectsNonPositiveBucketOrHorizon) {
  sim::Workload w;
  w.horizon_s = kHour;
  EXPECT_THROW(workload_demand(w, 0, 0), std::invalid_argument);
  EXPECT_THROW(workload_demand(w, -1, 0), std::invalid_argument);
  w.horizon_s = 0;
  EXPECT_THROW(workload_demand(w, 60, 0), std::invalid_argument);
  w.horizon_s = 1e12;
  EXPECT_THROW(workload_demand(w, 1, 0), std::invalid_argument);  // more than kMaxDemandBuckets
  w.horizon_s = 3 * kHour;
  EXPECT_EQ(workload_demand(w, kHour, 0).buckets.size(), 3u);  // exact division: no empty last bucket
  EXPECT_EQ(workload_demand(w, 0.7 * kHour, 0).buckets.size(), 5u);
}

}  // namespace
}  // namespace gpufleet::plan
