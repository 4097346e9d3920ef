// The bind verb's write to the API server: what an extender with bindVerb does in place of
// kube-scheduler's own binder.
//
// bind(ns, name, uid, node, annotations) sends one request:
//   POST /api/v1/namespaces/{ns}/pods/{name}/binding, Content-Type application/json, body
//     {"apiVersion":"v1","kind":"Binding",
//      "metadata":{"name":name,"namespace":ns,"uid":uid,"annotations":{...}},
//      "target":{"apiVersion":"v1","kind":"Node","name":node}}
//   ("uid" left out when `uid` is empty, "annotations" when `annotations` is empty). The API server
//   sets spec.nodeName and copies the Binding's annotations onto the pod in one update, and refuses
//   (409 Conflict, "pod <name> is already assigned to node <node>") a pod already bound or a uid that
//   is not the pod's, leaving the pod untouched.
// Upstream: kubernetes/kubernetes pkg/scheduler/framework/plugins/defaultbinder/default_binder.go
// (DefaultBinder.Bind: a v1.Binding with the pod's namespace, name and UID, target Kind Node,
// created through Pods(ns).Bind); pkg/registry/core/pod/storage/storage.go (BindingREST.Create ->
// assignPod -> setPodNodeAndMetadata: the binding's annotations are set on the pod together with
// spec.nodeName, in one guaranteed update, or not at all).
// Why one request: gpushare-scheduler-extender (AliyunContainerService/gpushare-scheduler-extender
// pkg/cache/nodeinfo.go, NodeInfo.Allocate) writes the annotations with a pod update first, then the
// Binding. With two extender replicas that race for one pod, the loser's annotation write lands on
// the winner's pod before its Binding is refused: the pod runs on the winner's node with the loser's
// device choice, which may name devices another pod holds. Carried by the Binding, the device
// annotations and the node are written together, so a lost race changes nothing. The device plugin
// still finds the annotations when the pod lands on the node (they arrive with spec.nodeName).
//
// Errors (bind's return value, "" on success; ExtenderBindingResult.Error passes it to
// kube-scheduler, which logs it and retries the pod): a non-2xx answer gives
// "<step>: HTTP <status> <reason> <message>" (server/kube_client.h kube_http_failure; reason and
// message from the API's metav1.Status), a failed connection or timeout "<step>: <httplib error>",
// an unreadable token file "<step>: <the InputError's text>". <step> is
// "create binding <ns>/<name> to node <node>". No request is retried here.
//
// Counts (render_metrics, Prometheus text; `serve` adds it to /metrics):
//   gpufleet_kube_binds_total{result="created"|"conflict"|"failed"}   counter: Bindings the API
//   server created; refused with 409 Conflict (a race lost to another scheduler or replica, or a
//   stale uid); failed otherwise (other status, connection, timeout, token file).
//
// Thread safety: bind() may run on many threads at once (each call has its own connection).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "readers/kube_api/kubeconfig.h"
#include "server/http_server.h"

namespace gpufleet::server {

class KubeClient;  // server/kube_client.h

struct KubeBinderOptions {
  /// Seconds to connect (TLS handshake included), per request.
  double connect_timeout_s = 5;
  /// Seconds each request may wait for the answer's bytes. kube-scheduler waits for the extender's
  /// bind at most the extender's httpTimeout (default DefaultExtenderTimeout = 5 s,
  /// kubernetes/kubernetes pkg/scheduler/extender.go), so a bind that takes longer has already been
  /// given up by the scheduler.
  double read_timeout_s = 5;
};

class KubeBinder final : public PodBinder {
 public:
  /// A binder for the API server of `config`. Loads its TLS material now (KubeClient's constructor:
  /// throws InputError when it does not load); opens no connection.
  explicit KubeBinder(io::KubeRestConfig config, KubeBinderOptions options = {});
  ~KubeBinder() override;
  KubeBinder(const KubeBinder&) = delete;
  KubeBinder& operator=(const KubeBinder&) = delete;

  /// Binds pod `pod_namespace`/`pod_name` (uid `pod_uid`) to `node` with `annotations`, in one
  /// Binding (see the top of this file). Returns "" on success, else the error.
  std::string bind(const std::string& pod_namespace, const std::string& pod_name, const std::string& pod_uid,
                   const std::string& node, const std::map<std::string, std::string>& annotations) override;

  /// gpufleet_kube_binds_total (see the top of this file), every result from the start, with zero counts.
  std::string render_metrics() const;

 private:
  std::atomic<uint64_t> created_{0};
  std::atomic<uint64_t> conflicts_{0};
  std::atomic<uint64_t> failed_{0};
  std::unique_ptr<const KubeClient> client_;
  KubeBinderOptions options_;
};

}  // namespace gpufleet::server
