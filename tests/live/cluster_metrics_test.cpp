// live/cluster_metrics.h, live/request_stats.h and report/prometheus_text.h: every figure of a tiny
// cluster (tests/live/cluster.yaml, prices tests/live/prices.yaml) computed by hand, and the
// exposition format's rules.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "readers/k8s/pool_file.h"
#include "live/cluster_metrics.h"
#include "live/metrics_support.h"
#include "report/prometheus_text.h"
#include "live/request_stats.h"
#include "model/xid.h"
#include "sched/gpu/fragmentation.h"

namespace gpufleet {
namespace {

const std::string kDir = GPUFLEET_SOURCE_DIR "/tests/live/";

// series ("name{labels}") -> value, of every sample line.
std::map<std::string, double> samples(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    EXPECT_TRUE(out.emplace(line.substr(0, space), std::stod(line.substr(space + 1))).second) << "duplicate " << line;
  }
  return out;
}

void expect_well_formed(const std::string& text);

struct Rendered {
  std::unique_ptr<live::Snapshot> snapshot = testing::snapshot_of_file(kDir + "cluster.yaml");
  live::MetricsOptions options;
  std::string text;
  std::map<std::string, double> values;
  explicit Rendered(bool priced = true) {
    if (priced) options.prices = live::instance_prices(io::read_pool_file(kDir + "prices.yaml"));
    text = live::render_cluster_metrics(*snapshot, options);
    values = samples(text);
  }
  double at(const std::string& series) const {
    const auto it = values.find(series);
    if (it == values.end()) ADD_FAILURE() << "no series " << series << " in\n" << text;
    return it == values.end() ? -1 : it->second;
  }
};

// OpenCost's default rates (sim/rules/cost.h): the node price split into CPU, memory and GPU parts.
constexpr double kCpu = 0.031611, kRam = 0.004237, kGpu = 0.95;

TEST(ClusterMetrics, EveryFigureOfTheTinyCluster) {
  const Rendered r;
  // gpu-a: 4 L4, 16 CPU, 64 GiB; pod team-a/train holds GPUs 0-1 (2000 milli), 12 CPU, 16 GiB.
  // gpu-b: 1 L4, 8 CPU, 32 GiB, spot; pod team-b/serve holds its GPU, 2 CPU, 8 GiB.
  EXPECT_EQ(r.at(R"(gpufleet_node_gpu_capacity_milli{node="gpu-a",pool="train"})"), 4000);
  EXPECT_EQ(r.at(R"(gpufleet_node_gpu_capacity_milli{node="gpu-b",pool="serve"})"), 1000);
  EXPECT_EQ(r.at(R"(gpufleet_node_gpu_allocated_milli{node="gpu-a",pool="train"})"), 2000);
  EXPECT_EQ(r.at(R"(gpufleet_node_gpu_allocated_milli{node="gpu-b",pool="serve"})"), 1000);
  // Stranded: the GPU pods (train, serve and the pending big) request 12 + 2 + 6 = 20 CPU and
  // 16 + 8 + 8 = 32 GiB for 2 + 1 + 4 = 7 GPUs: r_cpu = 20000 / 7000 milli-CPU per milli-GPU,
  // r_mem = 32 GiB / 7000. gpu-a has 2000 milli-GPU, 4000 milli-CPU and 48 GiB free:
  // S = max(2000 - 4000 / (20000 / 7000), 2000 - 48 GiB / (32 GiB / 7000), 0) = max(600, -8500) = 600.
  EXPECT_NEAR(r.at(R"(gpufleet_node_gpu_stranded_milli{node="gpu-a",pool="train"})"), 600.0, 1e-9);
  EXPECT_EQ(r.at(R"(gpufleet_node_gpu_stranded_milli{node="gpu-b",pool="serve"})"), 0);  // nothing free
  // FGD F(n): three shapes, 1/3 each. On gpu-a (free GPUs 0, 0, 1000, 1000; 4000 milli-CPU free):
  // train (2 GPUs, 12 CPU) and big (4 GPUs) do not fit: 2000 each; serve (1 GPU, 2 CPU) fits and the
  // GPUs too small for it have 0 free: 0. F = (2000 + 0 + 2000) / 3.
  EXPECT_NEAR(r.at(R"(gpufleet_node_gpu_fragmentation_milli{node="gpu-a",pool="train"})"), 4000.0 / 3, 1e-9);
  EXPECT_EQ(r.at(R"(gpufleet_node_gpu_fragmentation_milli{node="gpu-b",pool="serve"})"), 0);

  // Prices: gpu4.large on-demand 8.0; gpu1.large spot 0.5 (gpu-b is labelled spot).
  EXPECT_EQ(r.at(R"(gpufleet_node_price_usd_per_hour{node="gpu-a",pool="train",instance_type="gpu4.large",capacity_type="on-demand"})"), 8.0);
  EXPECT_EQ(r.at(R"(gpufleet_node_price_usd_per_hour{node="gpu-b",pool="serve",instance_type="gpu1.large",capacity_type="spot"})"), 0.5);
  // Chargeback (OpenCost): price x sum over CPU, memory, GPU of part x request / allocatable.
  const double train = 8.0 * (16 * kCpu * 12 / 16 + 64 * kRam * 16 / 64 + 4 * kGpu * 2 / 4) / (16 * kCpu + 64 * kRam + 4 * kGpu);
  const double serve = 0.5 * (8 * kCpu * 2 / 8 + 32 * kRam * 8 / 32 + 1 * kGpu * 1 / 1) / (8 * kCpu + 32 * kRam + 1 * kGpu);
  EXPECT_NEAR(train, 4.102517312862032, 1e-12);
  EXPECT_NEAR(serve, 0.3911617127590267, 1e-12);
  EXPECT_NEAR(r.at(R"(gpufleet_node_idle_cost_usd_per_hour{node="gpu-a",pool="train"})"), 8.0 - train, 1e-12);
  EXPECT_NEAR(r.at(R"(gpufleet_node_idle_cost_usd_per_hour{node="gpu-b",pool="serve"})"), 0.5 - serve, 1e-12);
  EXPECT_EQ(r.at("gpufleet_nodes_without_price"), 0);

  // Pools: one node each.
  EXPECT_EQ(r.at(R"(gpufleet_pool_nodes{pool="train"})"), 1);
  EXPECT_EQ(r.at(R"(gpufleet_pool_nodes{pool="serve"})"), 1);
  EXPECT_EQ(r.at(R"(gpufleet_pool_gpu_capacity_milli{pool="train"})"), 4000);
  EXPECT_EQ(r.at(R"(gpufleet_pool_gpu_capacity_milli{pool="serve"})"), 1000);
  EXPECT_EQ(r.at(R"(gpufleet_pool_gpu_allocated_milli{pool="train"})"), 2000);
  EXPECT_EQ(r.at(R"(gpufleet_pool_gpu_allocated_milli{pool="serve"})"), 1000);
  EXPECT_NEAR(r.at(R"(gpufleet_pool_gpu_stranded_milli{pool="train"})"), 600.0, 1e-9);
  EXPECT_EQ(r.at(R"(gpufleet_pool_gpu_stranded_milli{pool="serve"})"), 0);
  EXPECT_NEAR(r.at(R"(gpufleet_pool_gpu_fragmentation_milli{pool="train"})"), 4000.0 / 3, 1e-9);
  EXPECT_EQ(r.at(R"(gpufleet_pool_gpu_fragmentation_milli{pool="serve"})"), 0);
  EXPECT_EQ(r.at(R"(gpufleet_pool_cost_usd_per_hour{pool="train"})"), 8.0);
  EXPECT_EQ(r.at(R"(gpufleet_pool_cost_usd_per_hour{pool="serve"})"), 0.5);
  EXPECT_NEAR(r.at(R"(gpufleet_pool_idle_cost_usd_per_hour{pool="train"})"), 8.0 - train, 1e-12);
  EXPECT_NEAR(r.at(R"(gpufleet_pool_idle_cost_usd_per_hour{pool="serve"})"), 0.5 - serve, 1e-12);

  // Namespaces: only bound pods count.
  EXPECT_EQ(r.at(R"(gpufleet_namespace_gpu_allocated_milli{namespace="team-a"})"), 2000);
  EXPECT_EQ(r.at(R"(gpufleet_namespace_gpu_allocated_milli{namespace="team-b"})"), 1000);
  EXPECT_NEAR(r.at(R"(gpufleet_namespace_chargeback_usd_per_hour{namespace="team-a"})"), train, 1e-12);
  EXPECT_NEAR(r.at(R"(gpufleet_namespace_chargeback_usd_per_hour{namespace="team-b"})"), serve, 1e-12);

  // Pending: team-a/big (6 CPU, 4 GPUs). gpu-a has 4 CPU free (Insufficient cpu, the first failing
  // resource), gpu-b 6 CPU but no GPU (Insufficient nvidia.com/gpu): one node each, the tie goes to
  // the lower code, cpu.
  EXPECT_EQ(r.at(R"(gpufleet_pending_pods{namespace="team-a",reason="Insufficient cpu"})"), 1);
  EXPECT_EQ(r.at("gpufleet_snapshot_generation"), 1);
  EXPECT_EQ(r.at("gpufleet_snapshot_refused_objects"), 0);
  // Nothing else: 2 x 4 node GPU series, 2 price, 2 idle, 1 unpriced, 7 x 2 pool series, 2 x 2
  // namespace series, 1 pending, 2 snapshot.
  EXPECT_EQ(r.values.size(), 8u + 2 + 2 + 1 + 14 + 4 + 1 + 2) << r.text;
}

TEST(ClusterMetrics, PendingPodsGiveTheBoundedReasonAndKubesMessage) {
  const auto snapshot = testing::snapshot_of_file(kDir + "cluster.yaml");
  const std::vector<live::PendingPod> pending = live::pending_pods(*snapshot);
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(snapshot->inputs.input.pods[pending[0].pod].name, "big");
  EXPECT_EQ(pending[0].reason, "Insufficient cpu");
  EXPECT_EQ(pending[0].message, "0/2 nodes are available: 1 Insufficient cpu, 1 Insufficient nvidia.com/gpu.");
  const std::vector<live::PendingPod> capped = live::pending_pods(*snapshot, 0);
  ASSERT_EQ(capped.size(), 1u);
  EXPECT_EQ(capped[0].reason, "not evaluated");
  EXPECT_EQ(capped[0].message, "");
  Rendered r;
  r.options.max_pending_decisions = 0;
  EXPECT_EQ(samples(live::render_cluster_metrics(*r.snapshot, r.options)).at(R"(gpufleet_pending_pods{namespace="team-a",reason="not evaluated"})"), 1);
  // The metrics decide on a copy of the snapshot's generator and change no allocation.
  EXPECT_EQ(snapshot->cluster.state->gpu_used_milli(), 3000);
}

TEST(ClusterMetrics, WithoutPricesNoCostSeries) {
  const Rendered r(false);
  for (const auto& [series, value] : r.values) {
    EXPECT_EQ(series.find("usd_per_hour"), std::string::npos) << series;
    EXPECT_EQ(series.find("without_price"), std::string::npos) << series;
  }
  EXPECT_EQ(r.text.find("usd_per_hour"), std::string::npos);
  EXPECT_EQ(r.at(R"(gpufleet_node_gpu_allocated_milli{node="gpu-a",pool="train"})"), 2000);
}

TEST(ClusterMetrics, UnknownInstanceTypeAndPoolLabels) {
  Rendered r(false);
  r.options.prices = {{"gpu4.large", {8.0, std::nullopt}}};  // gpu1.large unknown
  r.options.pool_labels = {"example.com/none"};              // no node has it: pool ""
  const auto values = samples(live::render_cluster_metrics(*r.snapshot, r.options));
  EXPECT_EQ(values.at("gpufleet_nodes_without_price"), 1);
  EXPECT_EQ(values.count(R"(gpufleet_node_idle_cost_usd_per_hour{node="gpu-b",pool=""})"), 0u);
  EXPECT_EQ(values.at(R"(gpufleet_pool_nodes{pool=""})"), 2);
  EXPECT_EQ(values.at(R"(gpufleet_pool_cost_usd_per_hour{pool=""})"), 8.0);  // priced nodes only
  EXPECT_EQ(values.at(R"(gpufleet_namespace_chargeback_usd_per_hour{namespace="team-b"})"), 0);
}

TEST(ClusterMetrics, EmptySnapshot) {
  live::Snapshot empty;  // before any object: no prepared cluster
  empty.inputs.input.pods.push_back(Pod{});
  const std::string text = live::render_cluster_metrics(empty, {});
  expect_well_formed(text);
  const auto v = samples(text);
  EXPECT_EQ(v.at(R"(gpufleet_pending_pods{namespace="",reason="no nodes available to schedule pods"})"), 1);
  EXPECT_EQ(v.at("gpufleet_snapshot_generation"), 0);
  EXPECT_EQ(v.size(), 3u);  // pending, generation, refused
}

TEST(ClusterMetrics, InstancePricesFromAPoolFile) {
  const auto prices = live::instance_prices(io::read_pool_file(kDir + "prices.yaml"));
  ASSERT_EQ(prices.size(), 2u);
  EXPECT_EQ(prices.at("gpu4.large").on_demand_usd_per_hour, 8.0);
  EXPECT_FALSE(prices.at("gpu4.large").spot_usd_per_hour);
  EXPECT_EQ(prices.at("gpu1.large").spot_usd_per_hour, 0.5);
}

// The exposition format (prometheus.io "Exposition formats", text format 0.0.4).
void expect_well_formed(const std::string& text) {
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  const std::regex help(R"(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .+)");
  const std::regex type(R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped))");
  const std::regex sample(R"re(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*"(,[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*")*\})? (NaN|[+-]Inf|-?[0-9.e+-]+))re");
  std::set<std::string> families, done;
  std::string current, current_type;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, help)) {
      EXPECT_TRUE(families.insert(m[1]).second) << "HELP twice: " << line;
      if (!current.empty()) done.insert(current);
      current = m[1];
      EXPECT_EQ(current.rfind("gpufleet_", 0), 0u) << current;
    } else if (std::regex_match(line, m, type)) {
      EXPECT_EQ(m[1], current) << "TYPE without HELP: " << line;
      current_type = m[2];
    } else {
      ASSERT_TRUE(std::regex_match(line, m, sample)) << "bad line: " << line;
      const std::string name = m[1];
      const bool own = name == current || (current_type == "histogram" && (name == current + "_bucket" || name == current + "_sum" ||
                                                                           name == current + "_count"));
      EXPECT_TRUE(own) << "sample outside its family " << current << ": " << line;
    }
  }
}

TEST(ClusterMetrics, ExpositionIsWellFormed) {
  const Rendered r;
  expect_well_formed(r.text);
  EXPECT_NE(r.text.find("# TYPE gpufleet_node_gpu_stranded_milli gauge\n"), std::string::npos);
  // Families in a fixed order, series sorted by label within each: gpu-a before gpu-b.
  EXPECT_LT(r.text.find(R"(gpufleet_node_gpu_capacity_milli{node="gpu-a")"), r.text.find(R"(gpufleet_node_gpu_capacity_milli{node="gpu-b")"));
  EXPECT_EQ(r.text, live::render_cluster_metrics(*r.snapshot, r.options));  // deterministic
}

TEST(PrometheusText, EscapesAndRefusesDuplicates) {
  EXPECT_EQ(live::escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(live::format_metric_value(0.1), "0.1");
  EXPECT_EQ(live::format_metric_value(4000), "4000");
  EXPECT_EQ(live::format_metric_value(0.0001), "0.0001");
  EXPECT_EQ(live::format_metric_value(1333.3333333333333), "1333.3333333333333");
  EXPECT_EQ(live::format_metric_value(1e20), "1e+20");
  EXPECT_EQ(std::stod(live::format_metric_value(3.897482687137968)), 3.897482687137968);
  EXPECT_EQ(live::format_metric_value(-0.0), "0");
  EXPECT_EQ(live::format_metric_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(live::format_metric_value(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(live::format_metric_value(std::nan("")), "NaN");
  live::PrometheusTextWriter w;
  w.family("gpufleet_x", "gauge", "Line one\nback\\slash");
  w.sample("gpufleet_x", {{"reason", "say \"no\"\n"}}, 1.5);
  EXPECT_THROW(w.sample("gpufleet_x", {{"reason", "say \"no\"\n"}}, 2), std::logic_error);
  EXPECT_THROW(w.sample("gpufleet_y", {}, 2), std::logic_error);
  EXPECT_THROW(w.sample("gpufleet_x", {{"__reserved", "v"}}, 2), std::invalid_argument);
  EXPECT_THROW(w.family("gpufleet_x", "gauge", "again"), std::logic_error);
  EXPECT_THROW(w.family("1bad", "gauge", "h"), std::invalid_argument);
  EXPECT_EQ(w.text(),
            "# HELP gpufleet_x Line one\\nback\\\\slash\n"
            "# TYPE gpufleet_x gauge\n"
            "gpufleet_x{reason=\"say \\\"no\\\"\\n\"} 1.5\n");
}

TEST(RequestStats, HistogramAndCounters) {
  live::RequestStats stats({"filter", "bind"});
  stats.observe("filter", 200, 0.0004);   // bucket le=0.0005
  stats.observe("filter", 200, 0.0005);   // le is inclusive: le=0.0005
  stats.observe("filter", 400, 0.00005);  // le=0.0001
  stats.observe("filter", 200, 2.5);      // above every bound: +Inf only
  stats.observe("prioritize", 500, -1);   // counts as 0 s
  const std::string text = stats.render();
  expect_well_formed(text);
  const auto v = samples(text);
  const std::string b = "gpufleet_extender_request_duration_seconds_bucket{verb=\"filter\",le=\"";
  EXPECT_EQ(v.at(b + "0.0001\"}"), 1);
  EXPECT_EQ(v.at(b + "0.00025\"}"), 1);
  EXPECT_EQ(v.at(b + "0.0005\"}"), 3);
  EXPECT_EQ(v.at(b + "0.001\"}"), 3);
  EXPECT_EQ(v.at(b + "1\"}"), 3);
  EXPECT_EQ(v.at(b + "+Inf\"}"), 4);
  EXPECT_NEAR(v.at("gpufleet_extender_request_duration_seconds_sum{verb=\"filter\"}"), 0.0004 + 0.0005 + 0.00005 + 2.5, 1e-12);
  EXPECT_EQ(v.at("gpufleet_extender_request_duration_seconds_count{verb=\"filter\"}"), 4);
  EXPECT_EQ(v.at("gpufleet_extender_request_duration_seconds_count{verb=\"bind\"}"), 0);  // known in advance
  EXPECT_EQ(v.at("gpufleet_extender_request_duration_seconds_bucket{verb=\"prioritize\",le=\"0.0001\"}"), 1);
  EXPECT_EQ(v.at("gpufleet_http_requests_total{verb=\"filter\",code=\"200\"}"), 3);
  EXPECT_EQ(v.at("gpufleet_http_requests_total{verb=\"filter\",code=\"400\"}"), 1);
  EXPECT_EQ(v.at("gpufleet_http_requests_total{verb=\"prioritize\",code=\"500\"}"), 1);
  EXPECT_EQ(v.count("gpufleet_http_requests_total{verb=\"bind\",code=\"200\"}"), 0u);
  // 3 verbs x (15 buckets + sum + count) + 3 counters.
  EXPECT_EQ(v.size(), 3u * 17 + 3);
}

TEST(RequestStats, ManyThreadsAndTheVerbCap) {
  live::RequestStats stats;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&stats] {
      for (int i = 0; i < 10000; ++i) stats.observe("filter", 200, 0.0001);
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(stats.count("filter", 200), 40000u);
  for (size_t i = 0; i < live::kMaxVerbs + 5; ++i) stats.observe("verb" + std::to_string(i), 200, 0);
  EXPECT_EQ(stats.count("other", 200), 6u);  // "filter" and 31 more fill the cap
  EXPECT_EQ(stats.count("verb31", 200), 0u);
}

// Every gpufleet metric the dashboard and the alert rules query is one the server writes.
TEST(PrometheusRules, DashboardAndRulesQueryMetricsThatExist) {
  const Rendered r;
  const std::string text = r.text + live::RequestStats({"filter"}).render();
  std::set<std::string> families;
  const std::regex type_line(R"(# TYPE ([a-z_]+) )");
  for (std::sregex_iterator it(text.begin(), text.end(), type_line), end; it != end; ++it) families.insert((*it)[1]);
  EXPECT_EQ(families.size(), 21u);
  for (const char* file : {"/examples/live/grafana-dashboard.json", "/examples/live/prometheus-rules.yaml"}) {
    std::ifstream in(std::string(GPUFLEET_SOURCE_DIR) + file);
    ASSERT_TRUE(in) << file;
    const std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::regex name(R"(gpufleet_[a-z_]+)");
    size_t used = 0;
    for (std::sregex_iterator it(content.begin(), content.end(), name), end; it != end; ++it) {
      std::string n = (*it)[0];
      if (n.size() > 7 && n.compare(n.size() - 7, 7, "_bucket") == 0 && families.count(n) == 0) n.resize(n.size() - 7);
      EXPECT_EQ(families.count(n), 1u) << file << ": " << n;
      ++used;
    }
    EXPECT_GE(used, 3u) << file;
  }
}

// The alert file's DCGMXidError rules split the XID codes as the catalog does (model/xid.h): the
// critical rule lists exactly the reset-level codes.
TEST(PrometheusRules, XidSeverityFollowsTheCatalog) {
  std::ifstream in(GPUFLEET_SOURCE_DIR "/examples/live/prometheus-rules.yaml");
  ASSERT_TRUE(in) << "examples/live/prometheus-rules.yaml";
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t start = text.find("# reset-level XIDs:");
  ASSERT_NE(start, std::string::npos);
  const std::string line = text.substr(start, text.find('\n', start) - start);
  std::set<int32_t> listed, reset;
  const std::regex code(R"(DCGM_FI_DEV_XID_ERRORS == ([0-9]+))");
  const std::string expr = text.substr(start, text.find("labels:", start) - start);
  for (std::sregex_iterator it(expr.begin(), expr.end(), code), end; it != end; ++it) listed.insert(std::stoi((*it)[1]));
  for (const XidInfo& x : xid_catalog())
    if (x.effect == XidEffect::kResetGpu) reset.insert(x.code);
  EXPECT_EQ(listed, reset) << line;
  // The pending alert waits the simulator's 15 minutes (sim/controllers/alerting.h kPodPendingForS).
  EXPECT_NE(text.find("alert: KubePodPendingTooLong"), std::string::npos);
}

}  // namespace
}  // namespace gpufleet
