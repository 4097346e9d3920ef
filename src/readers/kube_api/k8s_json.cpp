#include "readers/kube_api/k8s_json.h"

#include <set>

#include <fmt/format.h>

#include "readers/formats/input_limits.h"
#include "readers/k8s/k8s_yaml.h"
#include "readers/formats/text_file.h"
#include "readers/formats/yaml_field.h"
#include "readers/formats/yaml_tree.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using detail::YamlNode;
using detail::YamlType;

nlohmann::json to_json(const YamlNode& node, const detail::Source& src, const std::string& path) {
  switch (node.type) {
    case YamlType::kNull: return nullptr;
    case YamlType::kScalar: return node.scalar;
    case YamlType::kSequence: {
      nlohmann::json out = nlohmann::json::array();
      for (size_t i = 0; i < node.items.size(); ++i) out.push_back(to_json(node.items[i], src, fmt::format("{}[{}]", path, i)));
      return out;
    }
    case YamlType::kMapping: {
      nlohmann::json out = nlohmann::json::object();
      for (const detail::YamlEntry& e : node.entries) {
        if (e.key.type != YamlType::kScalar) src.fail(e.key.mark, path, "a mapping key must be a scalar");
        const std::string field = path.empty() ? e.key.scalar : path + "." + e.key.scalar;
        out[e.key.scalar] = to_json(e.value, src, field);
      }
      return out;
    }
  }
  return nullptr;
}

bool is_list(const nlohmann::json& object) {
  const auto kind = object.find("kind");
  if (kind == object.end() || !kind->is_string()) return false;
  const std::string& k = kind->get_ref<const std::string&>();
  return k == "List" || (k.size() > 4 && k.ends_with("List"));
}

}  // namespace

std::vector<nlohmann::json> read_k8s_json_objects(const std::vector<std::string>& paths) {
  std::vector<nlohmann::json> out;
  const size_t max_objects = kObjectLimits.max_nodes + kObjectLimits.max_pods;
  for (const std::string& file : k8s_input_files(paths)) {
    const std::string text = read_yaml_file(file);
    detail::Source src;
    src.file = file;
    for (const YamlNode& doc : detail::parse_yaml_stream(text, src, "")) {
      if (doc.type == YamlType::kNull) continue;
      if (doc.type != YamlType::kMapping) src.fail(doc.mark, "", "expected a Kubernetes object (a mapping)");
      // A List's items (a List in a List too, as the Kubernetes reader unpacks them), in order.
      const auto add = [&](auto& self, nlohmann::json object) -> void {
        if (object.is_object() && is_list(object)) {
          // The API's typed lists (NodeList, PodList) leave their items' kind out.
          const std::string list_kind = object["kind"].get<std::string>();
          const std::string item_kind = list_kind == "List" ? "" : list_kind.substr(0, list_kind.size() - 4);
          const auto it = object.find("items");
          if (it == object.end() || !it->is_array()) return;
          for (nlohmann::json& item : *it) {
            if (item.is_object() && !item.contains("kind") && !item_kind.empty()) item["kind"] = item_kind;
            self(self, std::move(item));
          }
          return;
        }
        if (out.size() >= max_objects) src.fail(doc.mark, "", limit_message(max_objects, "objects", "ObjectLimits::max_nodes + max_pods"));
        out.push_back(std::move(object));
      };
      add(add, to_json(doc, src, ""));
    }
  }
  return out;
}

std::vector<nlohmann::json> k8s_list_items(nlohmann::json list, const std::string& source, std::map<std::string, size_t>* skipped) {
  const auto items = list.is_object() ? list.find("items") : list.end();
  if (!list.is_object() || items == list.end() || !items->is_array())
    throw InputError(source, 0, "items", "expected a Kubernetes List (kubectl get nodes,pods -o json) with an items array");
  const size_t max_objects = kObjectLimits.max_nodes + kObjectLimits.max_pods;
  if (items->size() > max_objects)
    throw InputError(source, 0, "items", limit_message(max_objects, "objects", "ObjectLimits::max_nodes + max_pods"));
  const auto list_kind = list.find("kind");
  const std::string typed = list_kind != list.end() && list_kind->is_string() ? list_kind->get<std::string>() : "";
  const std::string item_kind = typed == "NodeList" ? "Node" : typed == "PodList" ? "Pod" : "";
  std::vector<nlohmann::json> out;
  std::set<std::string> seen;  // "Node/name", "Pod/namespace/name"
  for (size_t i = 0; i < items->size(); ++i) {
    nlohmann::json& item = (*items)[i];
    if (!item.is_object()) throw InputError(source, 0, fmt::format("items[{}]", i), "expected an object");
    const auto kind = item.find("kind");
    std::string k = kind != item.end() && kind->is_string() ? kind->get<std::string>() : item_kind;
    if (k != "Node" && k != "Pod") {
      if (skipped != nullptr) ++(*skipped)[k];
      continue;
    }
    const auto meta = item.find("metadata");
    const nlohmann::json* name = nullptr;
    if (meta != item.end() && meta->is_object())
      if (const auto n = meta->find("name"); n != meta->end()) name = &*n;
    if (name == nullptr || !name->is_string() || name->get_ref<const std::string&>().empty())
      throw InputError(source, 0, fmt::format("items[{}].metadata.name", i), "a Node or Pod needs a name");
    std::string key = k + "/";
    if (k == "Pod") {
      const auto ns = meta->find("namespace");
      key += (ns != meta->end() && ns->is_string() && !ns->get_ref<const std::string&>().empty() ? ns->get<std::string>() : "default") + "/";
    }
    key += name->get<std::string>();
    if (!seen.insert(key).second)
      throw InputError(source, 0, fmt::format("items[{}].metadata.name", i), fmt::format("duplicate {} '{}'", k, key.substr(k.size() + 1)));
    item["kind"] = k;
    out.push_back(std::move(item));
  }
  return out;
}

}  // namespace gpufleet::io
