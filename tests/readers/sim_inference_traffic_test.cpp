// The traffic of an inference service's YAML block (readers/serving/sim_inference.h): a trace replayed with a
// time scale and a delay gives the arrivals computed by hand, and delaySeconds is refused where it
// does not apply or is negative, with the file, line, column and field.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "inference/request_sources.h"
#include "readers/sim/workload_file.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

// A workload file with one service on pool "p" whose traffic block is `traffic` (indented by 6).
std::string workload(const std::string& traffic) {
  return "apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 3600\nservices:\n- name: chat\n"
         "  gpus: 1\n  pools: [p]\n  inference:\n    model: Llama-3.1-8B\n    traffic:\n" +
         traffic;
}

class InferenceTraffic : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("gpufleet-traffic-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    // Arrivals 0, 1.5 and 4 s after the first row.
    std::ofstream(dir_ / "t.csv") << "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                  << "2023-11-16 18:00:00.0000000,100,10\n"
                                  << "2023-11-16 18:00:01.5000000,200,20\n"
                                  << "2023-11-16 18:00:04.0000000,300,30\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string source() const { return (dir_ / "w.yaml").string(); }
  std::filesystem::path dir_;
};

TEST_F(InferenceTraffic, DelaySecondsShiftsTheScaledTrace) {
  const SimWorkloadFile f = parse_sim_workload_text(
      workload("      trace: t.csv\n      timeScale: 2\n      delaySeconds: 360\n"), source(), {"p"});
  ASSERT_EQ(f.workload.inference.size(), 1u);
  const sim::InferenceServiceSpec& spec = f.workload.inference[0];
  EXPECT_EQ(spec.traffic_description, "trace t.csv time x2 from 360 s");
  auto src = inference::make_request_source(spec.traffic, 7);
  std::vector<double> arrivals;
  while (auto r = src->next()) arrivals.push_back(r->arrival_s);
  // 0, 1.5, 4 s scaled by 2 (0, 3, 8) and 360 s later.
  EXPECT_EQ(arrivals, (std::vector<double>{360, 363, 368}));
}

TEST_F(InferenceTraffic, DelaySecondsErrors) {
  auto error = [&](const std::string& traffic) {
    try {
      parse_sim_workload_text(workload(traffic), source(), {"p"});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("      trace: t.csv\n      delaySeconds: -1\n"),
            source() + ":12:21: field 'services[0].inference.traffic.delaySeconds': -1 is negative");
  const std::string gen = error(
      "      generate: {meanRatePerSecond: 1, tokens: {promptMean: 10, promptMedian: 8, outputMean: 5, outputMedian: 4}}\n"
      "      delaySeconds: 60\n");
  EXPECT_NE(gen.find("delaySeconds applies to a trace, not to generate"), std::string::npos) << gen;
}

}  // namespace
}  // namespace gpufleet::io
