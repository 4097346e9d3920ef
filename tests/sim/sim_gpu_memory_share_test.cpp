// Memory-based GPU sharing in the simulator (HAMi and KAI-Scheduler, model/gpu_memory_share.h): pods
// asking for GPU memory are placed by GpuMemoryShareFit on the pools that share that way, free their
// memory when they end, and are charged by memory share. Expected values by hand beside each check.
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "readers/sim/sim_pools.h"
#include "readers/sim/workload_file.h"
#include "sim/simulation.h"
#include "support/expect_input_error.h"

namespace gpufleet::sim {
namespace {

const UnitOutcome& outcome(const SimResult& r, const std::string& name) {
  for (const UnitOutcome& u : r.units)
    if (u.name == name) return u;
  throw std::runtime_error("no unit " + name);
}

// examples/gpu-memory-sharing/sim-pools.yaml and sim-workload.yaml (docs/place.md works them by hand).
// l40s-hami-0: one L40S, HAMi, 4 vGPUs, 46068 MiB; l40s-kai-0: one L40S, KAI counts 46000 MiB. 2 h.
//  - HAMi: a (30000 MiB) at 0 to 3600; at 600 b (20000) does not fit (16068 free) and waits, c (10000)
//    fits: 600 to 2400; b runs when a's memory is free, 3600 to 5400.
//  - KAI: k's two pods take int64(0.5 x 46000) = 23000 each, the whole card, 0 to 3600; k2 (2000) waits
//    from 600 and runs 3600 to 5400.
TEST(SimGpuMemoryShare, ExamplePlacesReleasesAndCharges) {
  const std::filesystem::path dir = std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples" / "gpu-memory-sharing";
  const ClusterConfig c = io::read_sim_cluster_file((dir / "sim-pools.yaml").string());
  ASSERT_EQ(c.pools.size(), 2u);
  EXPECT_EQ(c.pools[0].pool.hami_split_count, 4);
  EXPECT_FALSE(c.pools[1].pool.hami_split_count);
  std::vector<std::string> names{"l40s-hami", "l40s-kai"};
  const io::SimWorkloadFile f = io::read_sim_workload_file((dir / "sim-workload.yaml").string(), names);
  SimOptions o;
  o.seed = 42;
  const SimResult r = Simulation(c, f.workload, o).run();
  EXPECT_DOUBLE_EQ(outcome(r, "a").completion_s, 3600);
  EXPECT_DOUBLE_EQ(outcome(r, "c").completion_s, 2400);
  EXPECT_DOUBLE_EQ(outcome(r, "b").completion_s, 5400);
  EXPECT_DOUBLE_EQ(outcome(r, "k").completion_s, 3600);
  EXPECT_DOUBLE_EQ(outcome(r, "k2").completion_s, 5400);
  EXPECT_EQ(r.pods_completed, 6);
  // Chargeback by memory share. Node price 2.00 USD/h split by OpenCost's rates: CPU 16 x 0.031611 =
  // 0.505776, memory 64 x 0.004237 = 0.271168, GPU 0.95; total 1.726944. Every pod asks 2 CPUs and
  // 8 GiB (1/8 of each): base (0.505776 + 0.271168) / 8 = 0.097118 per hour-share.
  //  - a: (0.097118 + 0.95 x 30000/46068) / 1.726944 x 2.00 x 1 h = 0.8289 (team-a);
  //  - b: 20000/46068 for 0.5 h = 0.2951; c: 10000/46068 for 0.5 h = 0.1756 (team-b 0.4707);
  //  - k: 23000/46000 for 1 h = 0.6626 each; k2: 2000/46000 for 0.5 h = 0.0802 (team-c 1.4053).
  const auto charge = [](double gpus, double hours) { return ((0.505776 + 0.271168) / 8 + 0.95 * gpus) / 1.726944 * 2.0 * hours; };
  EXPECT_NEAR(r.chargeback.at("team-a"), charge(30000.0 / 46068, 1), 1e-9);
  EXPECT_NEAR(r.chargeback.at("team-b"), charge(20000.0 / 46068, 0.5) + charge(10000.0 / 46068, 0.5), 1e-9);
  EXPECT_NEAR(r.chargeback.at("team-c"), 2 * charge(0.5, 1) + charge(2000.0 / 46000, 0.5), 1e-9);
  EXPECT_NEAR(r.chargeback.at("team-c"), 1.4053115, 1e-6);
  EXPECT_NEAR(r.cost_usd, 8.0, 1e-9);  // 2 nodes x 2 h x 2.00
}

// The workload reader's checks on gpuMemory.
TEST(SimGpuMemoryShare, ReaderChecks) {
  const std::vector<std::string> pools{"p"};
  const auto parse = [&](const std::string& item) {
    io::parse_sim_workload_text("apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 60\njobs:\n- name: j\n  durationSeconds: 10\n" + item,
                                "w.yaml", pools);
  };
  testing::expect_input_error([&] { parse("  gpuMemory: {scheduler: kai, fraction: 0.5, memoryMib: 10}\n"); }, "w.yaml", 7, 14,
                              "jobs[0].gpuMemory", "exactly one of memoryMib and fraction");
  testing::expect_input_error([&] { parse("  gpus: 1\n  gpuMemory: {scheduler: hami}\n"); }, "w.yaml", 8, 14, "jobs[0].gpuMemory",
                              "not with gpus");
  testing::expect_input_error([&] { parse("  gpuMemory: {scheduler: hami, fraction: 0.5}\n"); }, "w.yaml", 7, 32, "jobs[0].gpuMemory.fraction",
                              "unknown key 'fraction'");
}

}  // namespace
}  // namespace gpufleet::sim
