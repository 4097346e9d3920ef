// Reader of the Kubernetes API server's list and watch responses (the client side of
// k8s.io/apimachinery's watch protocol), for the live server's list/watch client
// (server/kube_watch.h).
//
// A watch response (GET /api/v1/nodes?watch=1&resourceVersion=RV) is a stream of JSON objects, one a
// line, each a metav1.WatchEvent (k8s.io/apimachinery pkg/apis/meta/v1/watch.go):
//
//   {"type":"ADDED","object":{"kind":"Node","metadata":{"name":"gpu-0","resourceVersion":"812"},...}}
//   {"type":"BOOKMARK","object":{"kind":"Node","metadata":{"resourceVersion":"845"}}}
//   {"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old resource version: 5 (812)"}}
//
// `type` is ADDED, MODIFIED, DELETED, BOOKMARK or ERROR (k8s.io/apimachinery pkg/watch/watch.go).
// ADDED, MODIFIED and DELETED carry the whole object; BOOKMARK only the kind and
// metadata.resourceVersion (KEP-956, watch bookmarks); ERROR a metav1.Status whose code 410 (reason
// Expired or Gone) says the resourceVersion is older than the server keeps: the client must list again.
//
// A list response (GET /api/v1/nodes?limit=500) is a NodeList / PodList: `items`, and
// metadata.resourceVersion (where the watch starts) and metadata.continue (the next page's token;
// empty on the last page; k8s.io/apimachinery pkg/apis/meta/v1 ListMeta).
//
// Limits (readers/formats/input_limits.h KubeWatchLimits, docs/input-limits.md): a watch line is at most
// max_event_bytes, a list page max_list_page_bytes; both are parsed with JsonRequestLimits' depth,
// value and string limits (readers/formats/json_request.h).
// Errors: InputError naming `source`, the line (a watch line's number; 0 for a list body apart from
// syntax errors), the column of a JSON syntax error, and the field ("type",
// "object.metadata.resourceVersion", "items[3].metadata.name", ...).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "readers/formats/input_limits.h"

namespace gpufleet::io {

/// A watch event's type (k8s.io/apimachinery pkg/watch/watch.go EventType).
enum class KubeWatchType { kAdded, kModified, kDeleted, kBookmark, kError };

/// "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR".
const char* kube_watch_type_name(KubeWatchType type);

/// The metav1.Status an ERROR event (or a failed request's body) carries.
struct KubeStatus {
  int64_t code = 0;     ///< the HTTP status it stands for, e.g. 410; 0 when absent
  std::string reason;   ///< metav1.StatusReason, e.g. "Expired", "Gone", "InternalError"; may be empty
  std::string message;  ///< human-readable; may be empty

  /// True for 410 Gone: code 410, or reason "Expired" / "Gone" (client-go's
  /// apierrors.IsResourceExpired and IsGone): the resourceVersion is too old, list again.
  bool expired() const;
};

/// One line of a watch stream.
struct KubeWatchEvent {
  KubeWatchType type = KubeWatchType::kAdded;
  nlohmann::json object;         ///< the event's object (a Node or Pod; for ERROR the Status)
  std::string resource_version;  ///< object.metadata.resourceVersion; "" for ERROR
  KubeStatus status;             ///< ERROR only
};

/// Parses line `line_no` (1-based) of a watch stream from `source`. ADDED / MODIFIED / DELETED need
/// object.metadata.name (a non-empty string) and object.metadata.resourceVersion (non-empty);
/// BOOKMARK needs object.metadata.resourceVersion; ERROR needs an object whose code (if present) is
/// an integer and reason / message (if present) are strings. metadata.namespace, when present, must
/// be a string. Other fields of the object are not read. Throws InputError.
KubeWatchEvent parse_watch_event(std::string_view line, const std::string& source, int line_no,
                                 const KubeWatchLimits& limits = kKubeWatchLimits);

/// One page of a list response.
struct KubeListPage {
  std::string kind;                  ///< e.g. "NodeList"; "" when absent
  std::vector<nlohmann::json> items; ///< the objects, each with metadata.name
  std::string resource_version;      ///< metadata.resourceVersion (non-empty)
  std::string continue_token;        ///< metadata.continue; "" on the last page
};

/// Parses a list response body (one page). `items` must be a list (null or absent: none) of objects
/// with a non-empty metadata.name (and metadata.namespace a string when present); metadata.
/// resourceVersion must be a non-empty string; metadata.continue a string when present. Throws
/// InputError.
KubeListPage parse_list_page(std::string_view body, const std::string& source,
                             const KubeWatchLimits& limits = kKubeWatchLimits);

/// Parses a failed request's body as a metav1.Status (best effort: a body that is not one gives a
/// status with only `code` = http_status and the body's first 200 bytes as the message). Never throws.
KubeStatus parse_status_body(std::string_view body, int http_status);

/// The object's key in a cache: metadata.name, or "namespace/name" when metadata.namespace is a
/// non-empty string (client-go tools/cache MetaNamespaceKeyFunc). "" when the object has no name.
std::string kube_object_key(const nlohmann::json& object);

}  // namespace gpufleet::io
