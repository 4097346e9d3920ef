#include "server/extender_json.h"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpufleet::server {
namespace {

nlohmann::json string_map(const std::map<std::string, std::string>& m) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [k, v] : m) out[k] = v;
  return out;
}

// Appends `text` as a JSON string, as nlohmann::json's dump() writes it ('"', '\\' and the control
// characters escaped; \b \f \n \r \t, else \u00xx). Text with a non-ASCII byte goes through
// nlohmann::json itself (which checks its UTF-8).
void append_string(std::string& out, std::string_view text) {
  for (const char c : text)
    if (static_cast<unsigned char>(c) >= 0x80) {
      out += nlohmann::json(std::string(text)).dump();
      return;
    }
  out += '"';
  const auto plain = [](char c) { return c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20; };
  if (std::all_of(text.begin(), text.end(), plain)) {  // the usual case (node names, reasons): one append
    out += text;
    out += '"';
    return;
  }
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\u00";
          out += kHex[(c >> 4) & 0xf];
          out += kHex[c & 0xf];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void append_map(std::string& out, const std::map<std::string, std::string>& m) {
  out += '{';
  bool first = true;
  for (const auto& [k, v] : m) {
    if (!first) out += ',';
    first = false;
    append_string(out, k);
    out += ':';
    append_string(out, v);
  }
  out += '}';
}

}  // namespace

std::string filter_result_json(const io::ExtenderArgs& args, const live::FilterAnswer& answer) {
  if (args.node_cache_capable) {  // written directly, in the key order nlohmann::json's dump() has
    std::string out;
    size_t size = 128 + answer.error.size() + answer.note.size();
    for (const std::string& name : answer.passed) size += name.size() + 3;
    for (const auto* m : {&answer.failed, &answer.failed_unresolvable})
      for (const auto& [k, v] : *m) size += k.size() + v.size() + 6;
    out.reserve(size);
    out += "{\"Error\":";
    append_string(out, answer.error);
    out += ",\"FailedAndUnresolvableNodes\":";
    append_map(out, answer.failed_unresolvable);
    out += ",\"FailedNodes\":";
    append_map(out, answer.failed);
    out += ",\"NodeNames\":[";
    for (size_t i = 0; i < answer.passed.size(); ++i) {
      if (i) out += ',';
      append_string(out, answer.passed[i]);
    }
    out += "],\"Nodes\":null";
    if (!answer.note.empty()) {
      out += ",\"gpufleetNote\":";
      append_string(out, answer.note);
    }
    out += '}';
    return out;
  }
  nlohmann::json out;
  {
    // Echo the passing Node objects (kube-scheduler reads Nodes.items when NodeNames is null).
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < args.node_names.size(); ++i) index.emplace(args.node_names[i], i);
    nlohmann::json items = nlohmann::json::array();
    for (const std::string& name : answer.passed) items.push_back(args.node_items.at(index.at(name)));
    out["Nodes"] = {{"metadata", nlohmann::json::object()}, {"items", std::move(items)}};
    out["NodeNames"] = nullptr;
  }
  out["FailedNodes"] = string_map(answer.failed);
  out["FailedAndUnresolvableNodes"] = string_map(answer.failed_unresolvable);
  out["Error"] = answer.error;
  if (!answer.note.empty()) out["gpufleetNote"] = answer.note;  // ignored by kube-scheduler (unknown field)
  return out.dump();
}

std::string filter_response(const live::Snapshot& snapshot, std::string_view body) {
  const io::ExtenderArgs args = io::parse_extender_args(body, "request body");
  return filter_result_json(args, live::extender_filter(snapshot, args.pod, args.node_names));
}

std::string prioritize_result_json(const std::vector<live::HostScore>& scores) {
  std::string out;
  size_t size = 2;
  for (const live::HostScore& s : scores) size += s.host.size() + 40;  // {"Host":"","Score":} and the digits
  out.reserve(size);
  out += '[';
  for (size_t i = 0; i < scores.size(); ++i) {
    out += i ? ",{\"Host\":" : "{\"Host\":";
    append_string(out, scores[i].host);
    out += ",\"Score\":";
    out += std::to_string(scores[i].score);
    out += '}';
  }
  out += ']';
  return out;
}

std::string prioritize_response(const live::Snapshot& snapshot, std::string_view body) {
  const io::ExtenderArgs args = io::parse_extender_args(body, "request body");
  return prioritize_result_json(live::extender_prioritize(snapshot, args.pod, args.node_names));
}

}  // namespace gpufleet::server
