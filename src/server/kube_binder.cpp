#include "server/kube_binder.h"

#include <exception>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "report/prometheus_text.h"
#include "server/kube_client.h"

namespace gpufleet::server {
namespace {

bool ok_status(int status) { return status >= 200 && status < 300; }

}  // namespace

KubeBinder::KubeBinder(io::KubeRestConfig config, KubeBinderOptions options)
    : client_(std::make_unique<const KubeClient>(std::move(config))), options_(options) {}

KubeBinder::~KubeBinder() = default;

std::string KubeBinder::bind(const std::string& pod_namespace, const std::string& pod_name, const std::string& pod_uid,
                             const std::string& node, const std::map<std::string, std::string>& annotations) {
  const std::string binding_path = client_->path(fmt::format("/api/v1/namespaces/{}/pods/{}/binding",
                                                             kube_url_escape(pod_namespace), kube_url_escape(pod_name)));
  const std::string step = fmt::format("create binding {}/{} to node {}", pod_namespace, pod_name, node);
  nlohmann::json binding = {{"apiVersion", "v1"},
                            {"kind", "Binding"},
                            {"metadata", {{"name", pod_name}, {"namespace", pod_namespace}}},
                            {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  if (!pod_uid.empty()) binding["metadata"]["uid"] = pod_uid;
  if (!annotations.empty()) binding["metadata"]["annotations"] = annotations;
  try {
    auto c = client_->make_client(options_.connect_timeout_s, options_.read_timeout_s);
    httplib::Result res = c->Post(binding_path, client_->headers(), binding.dump(), "application/json");
    if (!res) {
      ++failed_;
      return fmt::format("{}: {}", step, httplib::to_string(res.error()));
    }
    if (!ok_status(res->status)) {
      ++(res->status == 409 ? conflicts_ : failed_);
      return kube_http_failure(step, res->status, res->body);
    }
    ++created_;
    return "";
  } catch (const std::exception& e) {  // InputError: the token file
    ++failed_;
    return fmt::format("{}: {}", step, e.what());
  }
}

std::string KubeBinder::render_metrics() const {
  live::PrometheusTextWriter w;
  w.family("gpufleet_kube_binds_total", "counter",
           "Bindings sent to the API server, by result: created, conflict (409: the pod was already bound, e.g. by "
           "another replica), failed.");
  w.sample("gpufleet_kube_binds_total", {{"result", "conflict"}}, static_cast<double>(conflicts_.load()));
  w.sample("gpufleet_kube_binds_total", {{"result", "created"}}, static_cast<double>(created_.load()));
  w.sample("gpufleet_kube_binds_total", {{"result", "failed"}}, static_cast<double>(failed_.load()));
  return w.take();
}

}  // namespace gpufleet::server
