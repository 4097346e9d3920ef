// The metrics of a cluster file, for tests/live/promtool_test.sh (promtool and a real Prometheus):
//   metrics_fixture print <cluster.yaml> <prices.yaml>
//       writes render_cluster_metrics and a RequestStats with a few requests to stdout;
//   metrics_fixture serve <cluster.yaml> <prices.yaml> <port-file>
//       serves the same text at GET /metrics on 127.0.0.1 (an ephemeral port, written to port-file)
//       until killed;
//   metrics_fixture free-port
//       prints a TCP port of 127.0.0.1 that was free a moment ago (for Prometheus' listen address);
//   metrics_fixture query <port> <promql>
//       asks the Prometheus on 127.0.0.1:<port> (GET /api/v1/query) and prints the first result's
//       value, nothing when the result is empty; exit 1 when Prometheus does not answer 200.
// Exit 2 with a message on bad arguments or input.
#include <fstream>
#include <iostream>
#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "readers/k8s/pool_file.h"
#include "live/cluster_metrics.h"
#include "report/prometheus_text.h"
#include "live/request_stats.h"
#include "metrics_support.h"

namespace {

std::string render(const std::string& cluster, const std::string& prices) {
  using namespace gpufleet;
  const auto snapshot = testing::snapshot_of_file(cluster);
  live::MetricsOptions options;
  options.prices = live::instance_prices(io::read_pool_file(prices));
  live::RequestStats stats({"filter", "prioritize", "bind"});
  stats.observe("filter", 200, 0.0004);
  stats.observe("filter", 200, 0.0012);
  stats.observe("filter", 400, 0.00005);
  stats.observe("bind", 200, 0.003);
  live::DraPassCounts dra;
  dra.add(live::DraPassCounts::Verb::kFilter);
  return live::render_cluster_metrics(*snapshot, options) + stats.render() + dra.render();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "print" && argc == 4) {
      std::cout << render(argv[2], argv[3]);
      return 0;
    }
    if (mode == "serve" && argc == 5) {
      const std::string text = render(argv[2], argv[3]);
      httplib::Server server;
      server.Get("/metrics", [&text](const httplib::Request&, httplib::Response& res) {
        res.set_content(text, gpufleet::live::kPrometheusTextContentType);
      });
      const int port = server.bind_to_any_port("127.0.0.1");
      if (port <= 0) throw std::runtime_error("cannot bind 127.0.0.1");
      {
        std::ofstream out(argv[4]);
        out << port << '\n';
      }
      return server.listen_after_bind() ? 0 : 1;
    }
    if (mode == "free-port" && argc == 2) {
      httplib::Server server;
      const int port = server.bind_to_any_port("127.0.0.1");
      if (port <= 0) throw std::runtime_error("cannot bind 127.0.0.1");
      std::cout << port << '\n';
      return 0;
    }
    if (mode == "query" && argc == 4) {
      httplib::Client client("127.0.0.1", std::stoi(argv[2]));
      client.set_connection_timeout(1);
      const auto res = client.Get("/api/v1/query", httplib::Params{{"query", argv[3]}}, httplib::Headers{});
      if (!res || res->status != 200) return 1;
      const nlohmann::json body = nlohmann::json::parse(res->body);
      const nlohmann::json& result = body.at("data").at("result");
      if (!result.empty()) std::cout << result.at(0).at("value").at(1).get<std::string>() << '\n';
      return 0;
    }
    std::cerr << "usage: metrics_fixture print|serve <cluster.yaml> <prices.yaml> [<port-file>] | free-port | query <port> <promql>\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "metrics_fixture: " << e.what() << '\n';
    return 2;
  }
}
