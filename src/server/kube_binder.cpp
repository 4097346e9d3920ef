#include "server/kube_binder.h"

#include <exception>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

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
  const std::string pod_path = client_->path(fmt::format("/api/v1/namespaces/{}/pods/{}", kube_url_escape(pod_namespace),
                                                         kube_url_escape(pod_name)));
  const std::string pod_key = pod_namespace + "/" + pod_name;

  // One request; "" when it got a 2xx answer, else the error line.
  auto send = [&](const std::string& step, bool patch, const std::string& path, const std::string& body,
                  const char* content_type) -> std::string {
    try {
      auto c = client_->make_client(options_.connect_timeout_s, options_.read_timeout_s);
      const httplib::Headers h = client_->headers();
      httplib::Result res = patch ? c->Patch(path, h, body, content_type) : c->Post(path, h, body, content_type);
      if (!res) return fmt::format("{}: {}", step, httplib::to_string(res.error()));
      if (!ok_status(res->status)) return kube_http_failure(step, res->status, res->body);
      return "";
    } catch (const std::exception& e) {  // InputError: the token file
      return fmt::format("{}: {}", step, e.what());
    }
  };

  if (!annotations.empty()) {
    nlohmann::json patch;
    patch["metadata"]["annotations"] = annotations;
    const std::string err = send("patch pod " + pod_key + " annotations", true, pod_path, patch.dump(),
                                 "application/merge-patch+json");
    if (!err.empty()) return err;
  }

  nlohmann::json binding = {{"apiVersion", "v1"},
                            {"kind", "Binding"},
                            {"metadata", {{"name", pod_name}, {"namespace", pod_namespace}}},
                            {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  if (!pod_uid.empty()) binding["metadata"]["uid"] = pod_uid;
  return send("create binding " + pod_key + " to node " + node, false, pod_path + "/binding", binding.dump(),
              "application/json");
}

}  // namespace gpufleet::server
