#include "readers/kube_api/kube_watch.h"

#include <fmt/format.h>

#include "readers/formats/json_request.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using nlohmann::json;

JsonRequestLimits json_limits(size_t max_bytes) {
  JsonRequestLimits l;
  l.max_body_bytes = max_bytes;
  return l;
}

// Checks of one parsed value, errors at `source`:`line` with the field path.
struct Checker {
  const std::string& source;
  int line;

  [[noreturn]] void fail(const std::string& field, const std::string& message) const {
    throw InputError(source, line, field, message);
  }
  const json& object(const json& j, const std::string& field) const {
    if (!j.is_object()) fail(field, fmt::format("expected an object, got {}", json_type_name(j)));
    return j;
  }
  // The member `key` of object `j` (at `field`); nullptr when absent.
  static const json* member(const json& j, const char* key) {
    const auto it = j.find(key);
    return it == j.end() ? nullptr : &*it;
  }
  // An optional string member: "" when absent (or null, as Go decodes it).
  std::string opt_string(const json& j, const char* key, const std::string& field) const {
    const json* m = member(j, key);
    if (m == nullptr || m->is_null()) return {};
    if (!m->is_string()) fail(field, fmt::format("expected a string, got {}", json_type_name(*m)));
    return m->get<std::string>();
  }
  std::string required_string(const json& j, const char* key, const std::string& field) const {
    const json* m = member(j, key);
    if (m == nullptr || m->is_null()) fail(field, "required field is missing");
    std::string s = opt_string(j, key, field);
    if (s.empty()) fail(field, "must not be empty");
    return s;
  }
  // metadata of an object at `prefix` ("object" or "items[3]"); its name and namespace checked when
  // `named`; returns metadata.resourceVersion ("" when absent and not `need_rv`).
  std::string metadata(const json& obj, const std::string& prefix, bool named, bool need_rv) const {
    const json* meta = member(obj, "metadata");
    const std::string mfield = prefix + ".metadata";
    if (meta == nullptr || meta->is_null()) fail(mfield, "required field is missing");
    object(*meta, mfield);
    if (named) {
      required_string(*meta, "name", mfield + ".name");
      opt_string(*meta, "namespace", mfield + ".namespace");
    }
    if (need_rv) return required_string(*meta, "resourceVersion", mfield + ".resourceVersion");
    return opt_string(*meta, "resourceVersion", mfield + ".resourceVersion");
  }
};

}  // namespace

const char* kube_watch_type_name(KubeWatchType type) {
  switch (type) {
    case KubeWatchType::kAdded: return "ADDED";
    case KubeWatchType::kModified: return "MODIFIED";
    case KubeWatchType::kDeleted: return "DELETED";
    case KubeWatchType::kBookmark: return "BOOKMARK";
    case KubeWatchType::kError: return "ERROR";
  }
  return "?";
}

bool KubeStatus::expired() const { return code == 410 || reason == "Expired" || reason == "Gone"; }

KubeWatchEvent parse_watch_event(std::string_view line, const std::string& source, int line_no,
                                 const KubeWatchLimits& limits) {
  if (line.size() > limits.max_event_bytes)
    throw InputError(source, line_no, "",
                     limit_message(limits.max_event_bytes, "bytes in a watch event", "KubeWatchLimits::max_event_bytes"));
  json root = parse_json_line(line, source, line_no, json_limits(limits.max_event_bytes));
  const Checker c{source, line_no};
  c.object(root, "");
  KubeWatchEvent event;
  const std::string type = c.required_string(root, "type", "type");
  if (type == "ADDED") event.type = KubeWatchType::kAdded;
  else if (type == "MODIFIED") event.type = KubeWatchType::kModified;
  else if (type == "DELETED") event.type = KubeWatchType::kDeleted;
  else if (type == "BOOKMARK") event.type = KubeWatchType::kBookmark;
  else if (type == "ERROR") event.type = KubeWatchType::kError;
  else c.fail("type", fmt::format("unknown watch event type '{}' (expected ADDED, MODIFIED, DELETED, BOOKMARK, ERROR)", type));
  const json* obj = Checker::member(root, "object");
  if (obj == nullptr || obj->is_null()) c.fail("object", "required field is missing");
  c.object(*obj, "object");
  if (event.type == KubeWatchType::kError) {
    if (const json* code = Checker::member(*obj, "code"); code != nullptr && !code->is_null()) {
      if (!code->is_number_integer())
        c.fail("object.code", fmt::format("expected an integer, got {}", code->is_number() ? "a fraction" : json_type_name(*code)));
      event.status.code = code->get<int64_t>();
    }
    event.status.reason = c.opt_string(*obj, "reason", "object.reason");
    event.status.message = c.opt_string(*obj, "message", "object.message");
  } else {
    event.resource_version = c.metadata(*obj, "object", event.type != KubeWatchType::kBookmark, true);
  }
  event.object = std::move(*root.find("object"));
  return event;
}

KubeListPage parse_list_page(std::string_view body, const std::string& source, const KubeWatchLimits& limits) {
  if (body.size() > limits.max_list_page_bytes)
    throw InputError(source, 0, "",
                     limit_message(limits.max_list_page_bytes, "bytes in a list page", "KubeWatchLimits::max_list_page_bytes"));
  json root = parse_json_request(body, source, json_limits(limits.max_list_page_bytes));
  const Checker c{source, 0};
  c.object(root, "");
  KubeListPage page;
  page.kind = c.opt_string(root, "kind", "kind");
  const json* meta = Checker::member(root, "metadata");
  if (meta == nullptr || meta->is_null()) c.fail("metadata", "required field is missing");
  c.object(*meta, "metadata");
  page.resource_version = c.required_string(*meta, "resourceVersion", "metadata.resourceVersion");
  page.continue_token = c.opt_string(*meta, "continue", "metadata.continue");
  if (auto it = root.find("items"); it != root.end() && !it->is_null()) {
    if (!it->is_array()) c.fail("items", fmt::format("expected a list, got {}", json_type_name(*it)));
    page.items.reserve(it->size());
    for (size_t i = 0; i < it->size(); ++i) {
      const std::string field = fmt::format("items[{}]", i);
      c.object((*it)[i], field);
      c.metadata((*it)[i], field, true, false);
      page.items.push_back(std::move((*it)[i]));
    }
  }
  return page;
}

KubeStatus parse_status_body(std::string_view body, int http_status) {
  KubeStatus status;
  status.code = http_status;
  try {
    const json j = parse_json_request(body, "status", json_limits(kMiB));
    if (j.is_object()) {
      if (auto it = j.find("code"); it != j.end() && it->is_number_integer()) status.code = it->get<int64_t>();
      if (auto it = j.find("reason"); it != j.end() && it->is_string()) status.reason = it->get<std::string>();
      if (auto it = j.find("message"); it != j.end() && it->is_string()) status.message = it->get<std::string>();
      return status;
    }
  } catch (const InputError&) {  // not JSON, or larger than a Status can be
  }
  status.message = std::string(body.substr(0, 200));
  return status;
}

std::string kube_object_key(const json& object) {
  if (!object.is_object()) return {};
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return {};
  const auto name = meta->find("name");
  if (name == meta->end() || !name->is_string() || name->get_ref<const std::string&>().empty()) return {};
  const auto ns = meta->find("namespace");
  if (ns != meta->end() && ns->is_string() && !ns->get_ref<const std::string&>().empty())
    return ns->get<std::string>() + "/" + name->get<std::string>();
  return name->get<std::string>();
}

}  // namespace gpufleet::io
