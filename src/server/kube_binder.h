// The bind verb's write to the API server: what an extender with bindVerb does in place of
// kube-scheduler's own binder.
//
// bind(ns, name, uid, node, annotations) sends two requests, in order:
//  1. PATCH /api/v1/namespaces/{ns}/pods/{name}, Content-Type application/merge-patch+json (RFC
//     7386), body {"metadata":{"annotations":{...}}}: the pod's other annotations are kept, these
//     set. Skipped when `annotations` is empty.
//  2. POST /api/v1/namespaces/{ns}/pods/{name}/binding, Content-Type application/json, body
//       {"apiVersion":"v1","kind":"Binding",
//        "metadata":{"name":name,"namespace":ns,"uid":uid},
//        "target":{"apiVersion":"v1","kind":"Node","name":node}}
//     ("uid" left out when `uid` is empty). The API server then sets spec.nodeName, and refuses
//     (409 Conflict) a pod already bound or a uid that is not the pod's.
// Upstream: kubernetes/kubernetes pkg/scheduler/framework/plugins/defaultbinder/default_binder.go
// (DefaultBinder.Bind: a v1.Binding with the pod's namespace, name and UID, target Kind Node,
// created through Pods(ns).Bind); AliyunContainerService/gpushare-scheduler-extender
// pkg/cache/nodeinfo.go (NodeInfo.Allocate: the pod's annotations written first, then the Binding).
// gpushare writes the annotations with an Update (PUT of the whole pod) and retries it once on an
// optimistic-lock conflict; a merge patch of the annotations alone carries no resourceVersion, so it
// cannot conflict and needs no retry. The annotations are written before the Binding so that the
// device plugin, which starts its work when the pod lands on the node, finds them there.
//
// Errors (bind's return value, "" on success; ExtenderBindingResult.Error passes it to
// kube-scheduler, which logs it and retries the pod): a non-2xx answer gives
// "<step>: HTTP <status> <reason> <message>" (server/kube_client.h kube_http_failure; reason and
// message from the API's metav1.Status), a failed connection or timeout "<step>: <httplib error>",
// an unreadable token file "<step>: <the InputError's text>". <step> is "patch pod <ns>/<name> annotations" or
// "create binding <ns>/<name> to node <node>". A failed patch stops there: no Binding is created.
// No request is retried here.
//
// Thread safety: bind() may run on many threads at once (each call has its own connection).
#pragma once

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
  /// kubernetes/kubernetes pkg/scheduler/extender.go), so a bind whose two requests take longer
  /// has already been given up by the scheduler.
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

  /// Patches the annotations of pod `pod_namespace`/`pod_name`, then binds it (uid `pod_uid`) to
  /// `node` (see the top of this file). Returns "" on success, else the error.
  std::string bind(const std::string& pod_namespace, const std::string& pod_name, const std::string& pod_uid,
                   const std::string& node, const std::map<std::string, std::string>& annotations) override;

 private:
  std::unique_ptr<const KubeClient> client_;
  KubeBinderOptions options_;
};

}  // namespace gpufleet::server
