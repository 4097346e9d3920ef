// The planner's cost lower bound (src/plan/cost_bound.h): hand-computed LP optima, the per-pod checks,
// the admissible options, and on random instances bound <= the cost of feasible integer plans built
// here and >= the whole-horizon GPU-hours bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "plan/cost_bound.h"
#include "support/sim_test_support.h"

namespace gpufleet::plan {
namespace {

constexpr double kHour = 3600;
constexpr int64_t kGiB = int64_t{1} << 30;

CostBoundOption option(std::string type, int32_t gpus, double on_demand, std::optional<double> committed = std::nullopt,
                       std::optional<double> spot = std::nullopt, int64_t cpu_milli = 192000, int64_t memory_bytes = 1024 * kGiB) {
  CostBoundOption o;
  o.instance_type = std::move(type);
  o.zone = "z1";
  o.gpu_model = "H100-80GB";
  o.gpus = gpus;
  o.cpu_milli = cpu_milli;
  o.memory_bytes = memory_bytes;
  o.on_demand_usd_per_hour = on_demand;
  o.committed_usd_per_hour = committed;
  o.commitment = committed ? "reserved1y" : "";
  o.spot_usd_per_hour = spot;
  return o;
}

sim::WorkloadSpec item(std::string name, sim::WorkloadKind kind, double arrival_s, double duration_s, int32_t pods,
                       int32_t num_gpu, int64_t cpu_milli = 1000, int64_t memory_bytes = kGiB) {
  return testing::gpu_item(std::move(name), kind, arrival_s, duration_s, pods, num_gpu, cpu_milli, memory_bytes);
}

// 8 GPUs (8 pods x 1 GPU) all the time over 10 h, in buckets of 1 h.
DemandCurve constant_eight(sim::CapacityPreference capacity = sim::CapacityPreference::kOnDemand) {
  sim::Workload w;
  w.horizon_s = 10 * kHour;
  w.items.push_back(item("svc", sim::WorkloadKind::kService, 0, 0, 8, 1));
  w.items.back().capacity = capacity;
  return workload_demand(w, kHour, 0);
}

// 8 GPUs (one 8-GPU pod) for the first hour of 10.
DemandCurve one_hour_of_eight(sim::CapacityPreference capacity = sim::CapacityPreference::kOnDemand) {
  sim::Workload w;
  w.horizon_s = 10 * kHour;
  w.items.push_back(item("burst", sim::WorkloadKind::kJob, 0, kHour, 1, 8));
  w.items.back().capacity = capacity;
  return workload_demand(w, kHour, 0);
}

TEST(CostBound, ConstantDemandBuysACommitment) {
  // On-demand would cost 10 x 10 h = 100; one committed node 6 x 10 h = 60.
  const CostBound b = cost_lower_bound(constant_eight(), {option("p5", 8, 10, 6)}, 1);
  EXPECT_NEAR(b.cost_usd, 60, 1e-6);
  EXPECT_NEAR(b.committed_usd, 60, 1e-6);
  EXPECT_NEAR(b.on_demand_usd, 0, 1e-6);
  EXPECT_NEAR(b.spot_usd, 0, 1e-6);
  ASSERT_EQ(b.committed_nodes.size(), 1u);
  EXPECT_EQ(b.committed_nodes[0].first, "p5/z1");
  EXPECT_NEAR(b.committed_nodes[0].second, 1, 1e-6);
  EXPECT_NEAR(b.gpu_hours_needed, 80, 1e-9);
  EXPECT_NEAR(b.billed_gpu_hours, 80, 1e-6);
  EXPECT_EQ(b.binding, "gpu");
  EXPECT_EQ(b.buckets_merged, 1);
}

TEST(CostBound, ShortBurstStaysOnDemand) {
  // One hour on demand: 10; a committed node would be billed all 10 h: 60.
  const CostBound b = cost_lower_bound(one_hour_of_eight(), {option("p5", 8, 10, 6)}, 1);
  EXPECT_NEAR(b.cost_usd, 10, 1e-6);
  EXPECT_NEAR(b.on_demand_usd, 10, 1e-6);
  EXPECT_TRUE(b.committed_nodes.empty());
  EXPECT_NEAR(b.billed_gpu_hours, 8, 1e-6);
}

TEST(CostBound, SpotShareOfHalf) {
  // Spot-ok demand of one node all the time, spot 2, committed 6, on-demand 10, at most half the
  // GPU-hours on spot: per hour R + O + S >= 1 and S <= R + O; cheapest R = S = 1/2: 3 + 1 = 4 per
  // hour, 40 over 10 h (30 committed, 10 spot).
  const std::vector<CostBoundOption> opts{option("p5", 8, 10, 6, 2)};
  const CostBound b = cost_lower_bound(constant_eight(sim::CapacityPreference::kSpotOk), opts, 0.5);
  EXPECT_NEAR(b.cost_usd, 40, 1e-6);
  EXPECT_NEAR(b.committed_usd, 30, 1e-6);
  EXPECT_NEAR(b.spot_usd, 10, 1e-6);
  EXPECT_NEAR(b.billed_gpu_hours, 80, 1e-6);
  ASSERT_EQ(b.committed_nodes.size(), 1u);
  EXPECT_NEAR(b.committed_nodes[0].second, 0.5, 1e-6);
  // Without the share limit: all spot, 2 x 10 = 20. Spot-only (kSpot) demand: the same.
  EXPECT_NEAR(cost_lower_bound(constant_eight(sim::CapacityPreference::kSpotOk), opts, 1).cost_usd, 20, 1e-6);
  EXPECT_NEAR(cost_lower_bound(constant_eight(sim::CapacityPreference::kSpot), opts, 1).cost_usd, 20, 1e-6);
  // On-demand-only demand cannot use spot: 60.
  EXPECT_NEAR(cost_lower_bound(constant_eight(), opts, 0.5).cost_usd, 60, 1e-6);
  // Share 0: no spot at all.
  EXPECT_NEAR(cost_lower_bound(constant_eight(sim::CapacityPreference::kSpotOk), opts, 0).cost_usd, 60, 1e-6);
  // One hour of 10 with half spot: minimize 60 R + 10 O + 2 S with R + O + S >= 1 and
  // S <= 10 R + O (GPU-hours): 2 + 58 R + 8 O with 11 R + 2 O >= 1, so O = S = 1/2: 6.
  const CostBound burst = cost_lower_bound(one_hour_of_eight(sim::CapacityPreference::kSpotOk), opts, 0.5);
  EXPECT_NEAR(burst.cost_usd, 6, 1e-6);
  EXPECT_NEAR(burst.on_demand_usd, 5, 1e-6);
  EXPECT_NEAR(burst.spot_usd, 1, 1e-6);
}

TEST(CostBound, CpuBinds) {
  // 8 pods x (1 GPU, 8 cores) all the time: GPUs need 1 node of 8 GPUs, CPU 64 cores = 2 nodes of
  // 32 cores: 2 x 10 x 10 h = 200.
  sim::Workload w;
  w.horizon_s = 10 * kHour;
  w.items.push_back(item("cpu-heavy", sim::WorkloadKind::kService, 0, 0, 8, 1, 8000));
  const DemandCurve d = workload_demand(w, kHour, 0);
  const CostBound b = cost_lower_bound(d, {option("g8", 8, 10, std::nullopt, std::nullopt, 32000)}, 1);
  EXPECT_NEAR(b.cost_usd, 200, 1e-6);
  EXPECT_EQ(b.binding, "cpu");
  EXPECT_NEAR(b.billed_gpu_hours, 160, 1e-6);
  // Memory: 8 pods x 64 GiB on nodes of 128 GiB: 4 nodes, 400.
  sim::Workload m;
  m.horizon_s = 10 * kHour;
  m.items.push_back(item("mem-heavy", sim::WorkloadKind::kService, 0, 0, 8, 1, 1000, 64 * kGiB));
  const CostBound bm = cost_lower_bound(workload_demand(m, kHour, 0), {option("g8", 8, 10, std::nullopt, std::nullopt, 192000, 128 * kGiB)}, 1);
  EXPECT_NEAR(bm.cost_usd, 400, 1e-6);
  EXPECT_EQ(bm.binding, "memory");
}

TEST(CostBound, AllocationFloor) {
  // The CPU-heavy service above: on g8 alone the 2 nodes bill 160 GPU-hours for 80 needed (50%). A
  // floor of 50% is met at the same cost; 60% is out of reach on g8. With a CPU-rich 8-GPU option at
  // 30 (64 cores), a floor of 60% makes the LP buy some of it, above the 200 without the floor.
  sim::Workload w;
  w.horizon_s = 10 * kHour;
  w.items.push_back(item("cpu-heavy", sim::WorkloadKind::kService, 0, 0, 8, 1, 8000));
  const DemandCurve d = workload_demand(w, kHour, 0);
  const CostBoundOption lean = option("g8", 8, 10, std::nullopt, std::nullopt, 32000);
  const CostBound half = cost_lower_bound(d, {lean}, 1, 0.5);
  EXPECT_TRUE(half.feasible);
  EXPECT_NEAR(half.cost_usd, 200, 1e-6);
  const CostBound none = cost_lower_bound(d, {lean}, 1, 0.6);
  EXPECT_FALSE(none.feasible);
  const CostBoundOption rich = option("r8", 8, 30, std::nullopt, std::nullopt, 64000);
  EXPECT_NEAR(cost_lower_bound(d, {lean, rich}, 1).cost_usd, 200, 1e-6);
  const CostBound floor = cost_lower_bound(d, {lean, rich}, 1, 0.6);
  ASSERT_TRUE(floor.feasible);
  // Mixing: x lean + y rich nodes with 32x + 64y >= 64 cores, 8x + 8y >= 8 GPUs and 8(x + y) x 10 <=
  // 80 / 0.6, i.e. x + 2y >= 2 and x + y <= 5/3. On x + 2y = 2 the cost per hour is 10x + 15(2 - x)
  // = 30 - 5x, least at the largest x, 4/3 (y = 1/3): 10 h x (40/3 + 10) = 233.33.
  EXPECT_NEAR(floor.cost_usd, 700.0 / 3, 1e-6);
  EXPECT_THROW(cost_lower_bound(d, {lean}, 1, 0.0), std::invalid_argument);
  EXPECT_THROW(cost_lower_bound(d, {lean}, 1, 1.5), std::invalid_argument);
}

TEST(CostBound, PicksTheCheaperOptionPerGpu) {
  // A 1-GPU node at 1.5 and an 8-GPU node at 10 (1.25 per GPU): 8 GPUs for 1 h cost 10; 1 GPU costs 1.25
  // in the LP (fractional nodes).
  const std::vector<CostBoundOption> opts{option("g1", 1, 1.5), option("g8", 8, 10)};
  EXPECT_NEAR(cost_lower_bound(one_hour_of_eight(), opts, 1).cost_usd, 10, 1e-6);
  sim::Workload w;
  w.horizon_s = kHour;
  w.items.push_back(item("one", sim::WorkloadKind::kJob, 0, kHour, 1, 1));
  EXPECT_NEAR(cost_lower_bound(workload_demand(w, kHour, 0), opts, 1).cost_usd, 1.25, 1e-6);
}

TEST(CostBound, ZeroDemandCostsNothing) {
  sim::Workload w;
  w.horizon_s = kHour;
  const CostBound b = cost_lower_bound(workload_demand(w, 60, 0), {option("g8", 8, 10, 6)}, 1);
  EXPECT_EQ(b.cost_usd, 0);
  EXPECT_EQ(b.binding, "");
}

TEST(CostBound, ThrowsOnNoOptionsOrAPodThatFitsNoNode) {
  EXPECT_THROW(cost_lower_bound(constant_eight(), {}, 1), std::invalid_argument);
  EXPECT_THROW(cost_lower_bound(constant_eight(), {option("g8", 8, 10)}, 1.5), std::invalid_argument);
  auto message = [](const sim::WorkloadSpec& spec, const std::vector<CostBoundOption>& opts) -> std::string {
    sim::Workload w;
    w.horizon_s = kHour;
    w.items.push_back(spec);
    try {
      cost_lower_bound(workload_demand(w, kHour, 0), opts, 1);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  const std::vector<CostBoundOption> opts{option("g8", 8, 10, std::nullopt, std::nullopt, 32000, 256 * kGiB),
                                          option("g1", 1, 2, std::nullopt, std::nullopt, 96000, 64 * kGiB)};
  // 16 GPUs per pod: no node has them.
  const std::string gpus = message(item("big", sim::WorkloadKind::kJob, 0, 60, 1, 16), opts);
  EXPECT_NE(gpus.find("'big'"), std::string::npos) << gpus;
  EXPECT_NE(gpus.find("16 GPUs"), std::string::npos) << gpus;
  // 8 GPUs and 64 cores: only g8 has 8 GPUs and it has 32 cores (g1's 96 do not help).
  const std::string cpu = message(item("wide", sim::WorkloadKind::kJob, 0, 60, 1, 8, 64000), opts);
  EXPECT_NE(cpu.find("'wide'"), std::string::npos) << cpu;
  EXPECT_NE(cpu.find("CPU"), std::string::npos) << cpu;
  // 1 TiB of memory.
  const std::string mem = message(item("fat", sim::WorkloadKind::kJob, 0, 60, 1, 1, 1000, 1024 * kGiB), opts);
  EXPECT_NE(mem.find("'fat'"), std::string::npos) << mem;
  EXPECT_NE(mem.find("memory"), std::string::npos) << mem;
  // A GPU model no option has; a MIG profile of another model.
  sim::WorkloadSpec pinned = item("pinned", sim::WorkloadKind::kJob, 0, 60, 1, 1);
  pinned.gpu_spec = "A100-80GB";
  EXPECT_NE(message(pinned, opts).find("'pinned'"), std::string::npos);
  sim::WorkloadSpec mig = item("mig", sim::WorkloadKind::kJob, 0, 60, 1, 0);
  mig.mig_requests = {MigRequest{"3g.20gb", 1}};  // A100-40GB's, not H100's
  EXPECT_NE(message(mig, opts).find("'mig'"), std::string::npos);
  mig.mig_requests = {MigRequest{"3g.40gb", 1}};  // H100-80GB has it
  EXPECT_EQ(message(mig, opts), "");
  // A CPU-only pod fits any node with the CPU.
  EXPECT_EQ(message(item("cpu-only", sim::WorkloadKind::kJob, 0, 60, 1, 0, 64000), opts), "");
}

TEST(CostBound, AdmissibleOptions) {
  PriceCatalog catalog;
  auto type = [](std::string name, std::string model, int32_t gpus) {
    InstanceType t;
    t.name = std::move(name);
    t.gpu_model = std::move(model);
    t.gpus = gpus;
    t.cpu_milli = 8000 * gpus;
    t.memory_bytes = 32 * kGiB * gpus;
    return t;
  };
  auto offering = [](std::string zone, double on_demand, std::optional<double> spot) {
    Offering o;
    o.zone = std::move(zone);
    o.on_demand_usd_per_hour = on_demand;
    o.spot_usd_per_hour = spot;
    return o;
  };
  InstanceType a = type("p5", "H100-80GB", 8);
  Offering a1 = offering("z1", 98, 40);
  a1.reserved_1y_usd_per_hour = 70;
  a1.reserved_3y_usd_per_hour = 50;
  a1.capacity_block_usd_per_hour = 60;
  a.offerings = {a1, offering("z2", 98, std::nullopt)};
  InstanceType b = type("g6", "L4", 1);
  b.offerings = {offering("z1", 0.8, 0.3)};
  catalog.instance_types = {a, b};

  PlanConstraints all;
  std::vector<CostBoundOption> o = admissible_options(catalog, all);
  ASSERT_EQ(o.size(), 3u);
  EXPECT_EQ(o[0].instance_type, "p5");
  EXPECT_EQ(o[0].zone, "z1");
  EXPECT_EQ(o[0].gpus, 8);
  EXPECT_EQ(o[0].gpu_model, "H100-80GB");
  EXPECT_EQ(o[0].commitment, "reserved3y");
  EXPECT_DOUBLE_EQ(*o[0].committed_usd_per_hour, 50);
  EXPECT_DOUBLE_EQ(*o[0].spot_usd_per_hour, 40);
  EXPECT_FALSE(o[1].committed_usd_per_hour.has_value());
  EXPECT_EQ(o[1].commitment, "");
  EXPECT_EQ(o[2].instance_type, "g6");

  PlanConstraints limited;
  limited.allowed_gpu_models = {"h100-80gb"};
  limited.allowed_zones = {"z1"};
  limited.allowed_commitments = {Commitment::kReserved1y, Commitment::kCapacityBlock};
  limited.max_spot_share = 0;
  o = admissible_options(catalog, limited);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].commitment, "capacityBlock");
  EXPECT_DOUBLE_EQ(*o[0].committed_usd_per_hour, 60);
  EXPECT_FALSE(o[0].spot_usd_per_hour.has_value());

  limited.allowed_zones = {"nowhere"};
  EXPECT_TRUE(admissible_options(catalog, limited).empty());
  EXPECT_THROW(cost_lower_bound(constant_eight(), admissible_options(catalog, limited), 1), std::invalid_argument);
}

TEST(CostBound, MergesBucketsPastTheColumnLimit) {
  // 250,000 buckets of 1 s with one on-demand option: 250,000 columns > 200,000, so pairs merge.
  // Constant demand: the merged LP has the same optimum.
  sim::Workload w;
  w.horizon_s = 250'000;
  w.items.push_back(item("svc", sim::WorkloadKind::kService, 0, 0, 8, 1));
  const CostBound b = cost_lower_bound(workload_demand(w, 1, 0), {option("g8", 8, 10)}, 1);
  EXPECT_EQ(b.buckets_merged, 2);
  EXPECT_NEAR(b.cost_usd, 10 * 250'000 / kHour, 1e-6);
}

// Random small instances: the bound is at most the cost of integer plans built by hand (per bucket,
// whole on-demand nodes of one option; or whole committed nodes of one option sized for the peak
// bucket; or, for spot-ok demand, a half-and-half plan), and at least the whole-horizon GPU-hours bound.
TEST(CostBound, NeverAboveAFeasibleIntegerPlan) {
  std::mt19937_64 rng(42);
  auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  auto integer = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int instance = 0; instance < 60; ++instance) {
    sim::Workload w;
    w.horizon_s = integer(2, 24) * kHour;
    const int items = integer(1, 6);
    for (int i = 0; i < items; ++i) {
      const bool svc = integer(0, 3) == 0;
      sim::WorkloadSpec s = item("i" + std::to_string(i), svc ? sim::WorkloadKind::kService : sim::WorkloadKind::kJob,
                                 uniform(0, w.horizon_s), uniform(60, w.horizon_s), integer(1, 4), integer(0, 4),
                                 integer(1, 16) * 1000, integer(1, 64) * kGiB);
      if (s.num_gpu == 1 && integer(0, 1) == 0) s.gpu_milli = integer(1, 9) * 100;
      s.capacity = static_cast<sim::CapacityPreference>(integer(0, 2));
      w.items.push_back(s);
    }
    const DemandCurve d = workload_demand(w, integer(1, 4) * 1800.0, 0);
    std::vector<CostBoundOption> opts;
    const int num_opts = integer(1, 3);
    for (int k = 0; k < num_opts; ++k) {
      const int gpus = std::vector<int>{4, 8}[static_cast<size_t>(integer(0, 1))];
      const double od = gpus * uniform(1, 4);
      std::optional<double> committed, spot;
      if (integer(0, 1) == 0) committed = od * uniform(0.4, 0.9);
      if (integer(0, 1) == 0) spot = od * uniform(0.2, 0.6);
      opts.push_back(option("t" + std::to_string(k), gpus, od, committed, spot, integer(32, 128) * 1000, integer(128, 1024) * kGiB));
    }
    const double share = std::vector<double>{0, 0.3, 0.5, 1}[static_cast<size_t>(integer(0, 3))];
    const CostBound b = cost_lower_bound(d, opts, share);
    SCOPED_TRACE("instance " + std::to_string(instance));

    // Nodes of option o that cover bucket demand (gpus, cpu, mem) whole.
    auto nodes_for = [](const CostBoundOption& o, double gpus, double cpu, double mem) {
      return std::ceil(std::max({gpus / o.gpus, cpu / static_cast<double>(o.cpu_milli), mem / static_cast<double>(o.memory_bytes)}) - 1e-9);
    };
    double best_plan = INFINITY;
    for (const CostBoundOption& o : opts) {
      double on_demand = 0, peak = 0;
      for (const DemandBucket& t : d.buckets) {
        const double n = nodes_for(o, t.gpus, t.cpu_milli, t.memory_bytes);
        on_demand += n * o.on_demand_usd_per_hour * (t.end_s - t.start_s) / kHour;
        peak = std::max(peak, n);
      }
      best_plan = std::min(best_plan, on_demand);
      if (o.committed_usd_per_hour) best_plan = std::min(best_plan, peak * *o.committed_usd_per_hour * d.horizon_s / kHour);
      if (o.spot_usd_per_hour && share >= 0.5) {
        // On-demand nodes for the on-demand-only demand and for half of the rest; spot for the other half.
        double mixed = 0;
        for (const DemandBucket& t : d.buckets) {
          const double od_nodes = nodes_for(o, t.gpus_on_demand_only + (t.gpus - t.gpus_on_demand_only) / 2,
                                            t.cpu_milli_on_demand_only + (t.cpu_milli - t.cpu_milli_on_demand_only) / 2,
                                            t.memory_bytes_on_demand_only + (t.memory_bytes - t.memory_bytes_on_demand_only) / 2);
          const double spot_nodes = std::min(od_nodes, nodes_for(o, (t.gpus - t.gpus_on_demand_only) / 2,
                                                                  (t.cpu_milli - t.cpu_milli_on_demand_only) / 2,
                                                                  (t.memory_bytes - t.memory_bytes_on_demand_only) / 2));
          mixed += (od_nodes * o.on_demand_usd_per_hour + spot_nodes * *o.spot_usd_per_hour) * (t.end_s - t.start_s) / kHour;
        }
        best_plan = std::min(best_plan, mixed);
      }
    }
    // A plan that really runs the workload, packing included: one node per pod (the cheapest that
    // holds it; spot for spot-only pods, allowed when share is 1), billed for every bucket it touches.
    bool per_pod_feasible = true;
    double per_pod = 0;
    for (const sim::WorkloadSpec& s : w.items) {
      const bool spot_only = s.capacity == sim::CapacityPreference::kSpot;
      double price = INFINITY;
      for (const CostBoundOption& o : opts)
        if (o.gpus >= s.num_gpu && o.cpu_milli >= s.cpu_milli && o.memory_bytes >= s.memory_bytes)
          price = std::min(price, spot_only ? (o.spot_usd_per_hour && share == 1 ? *o.spot_usd_per_hour : INFINITY)
                                            : o.on_demand_usd_per_hour);
      const double from = s.arrival_s;
      const double to = std::min(d.horizon_s, s.kind == sim::WorkloadKind::kJob ? s.arrival_s + s.duration_s : d.horizon_s);
      if (!(to > from)) continue;
      if (std::isinf(price)) per_pod_feasible = false;
      for (const DemandBucket& t : d.buckets)
        if (t.end_s > from && t.start_s < to) per_pod += s.pods * price * (t.end_s - t.start_s) / kHour;
    }
    if (per_pod_feasible) best_plan = std::min(best_plan, per_pod);
    EXPECT_LE(b.cost_usd, best_plan * (1 + 1e-9) + 1e-6);

    // The whole-horizon GPU-hours bound.
    double cheapest = INFINITY;
    for (const CostBoundOption& o : opts) {
      double p = o.on_demand_usd_per_hour;
      if (o.committed_usd_per_hour) p = std::min(p, *o.committed_usd_per_hour);
      if (o.spot_usd_per_hour && share > 0) p = std::min(p, *o.spot_usd_per_hour);
      cheapest = std::min(cheapest, p / o.gpus);
    }
    EXPECT_GE(b.cost_usd, d.gpu_hours * cheapest * (1 - 1e-9) - 1e-6);
    EXPECT_GE(b.billed_gpu_hours, d.gpu_hours * (1 - 1e-9) - 1e-6);
    EXPECT_NEAR(b.on_demand_usd + b.spot_usd + b.committed_usd, b.cost_usd, 1e-6 * std::max(1.0, b.cost_usd));
    // Deterministic.
    EXPECT_EQ(cost_lower_bound(d, opts, share).cost_usd, b.cost_usd);
  }
}

}  // namespace
}  // namespace gpufleet::plan
