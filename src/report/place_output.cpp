#include "report/place_output.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "model/quantity.h"
#include "report/queue_output.h"

namespace gpufleet::io {
namespace {

double allocation_pct(const place::PlaceResult& r) {
  if (r.gpu_capacity_milli <= 0) return 0.0;
  return std::round(10000.0 * static_cast<double>(r.gpu_used_milli) / static_cast<double>(r.gpu_capacity_milli)) / 100.0;
}

nlohmann::ordered_json unplaced_json(const std::vector<place::Unplaced>& list) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& u : list) out.push_back({{"pod", u.pod}, {"reason", u.reason}});
  return out;
}

/// "0-7" for a contiguous run, else "0,2,5".
std::string gpu_list(const std::vector<int32_t>& gpus) {
  bool contiguous = gpus.size() > 2;
  for (size_t i = 1; i < gpus.size() && contiguous; ++i) contiguous = gpus[i] == gpus[i - 1] + 1;
  if (contiguous) return fmt::format("{}-{}", gpus.front(), gpus.back());
  return fmt::format("{}", fmt::join(gpus, ","));
}

// A consumed capacity (milli-units) as Kubernetes prints a quantity: whole units in binary SI
// ("20Gi", "4"), else in milli ("500m").
std::string consumed_text(int64_t milli) {
  return milli % 1000 == 0 ? format_quantity(milli / 1000, QuantityUnit::kBytes) : format_quantity(milli, QuantityUnit::kMilli);
}

}  // namespace

std::string place_result_json(const place::PlaceResult& r, const std::vector<std::string>& warnings,
                              const std::vector<NodeCountMismatch>& node_warnings, const std::vector<NotModelled>& not_modelled) {
  nlohmann::ordered_json doc;
  doc["policy"] = r.policy;
  doc["nodes"] = r.node_count;
  nlohmann::ordered_json placements = nlohmann::ordered_json::array();
  for (const auto& p : r.placements) {
    nlohmann::ordered_json j;
    j["pod"] = p.pod;
    j["node"] = p.node;
    j["gpus"] = p.gpus;
    j["mig"] = p.mig ? nlohmann::ordered_json(*p.mig) : nlohmann::ordered_json(nullptr);
    j["preempted"] = p.preempted;
    j["priority"] = p.priority;
    j["prebound"] = p.prebound;
    if (!p.claims.empty()) {  // Dynamic Resource Allocation (only for pods with claims)
      nlohmann::ordered_json claims = nlohmann::ordered_json::array();
      for (const DraClaimAllocation& c : p.claims) {
        nlohmann::ordered_json devices = nlohmann::ordered_json::array();
        for (const DraDeviceResult& d : c.allocation.devices) {
          nlohmann::ordered_json device = {{"request", d.request}, {"driver", d.driver}, {"pool", d.pool}, {"device", d.device}};
          if (d.shared()) {  // consumable capacity (KEP-5075): resource/v1 shareID and consumedCapacity
            device["share_id"] = d.share_id;
            nlohmann::ordered_json consumed = nlohmann::ordered_json::object();
            for (const auto& [name, milli] : d.consumed_capacity_milli) consumed[name] = consumed_text(milli);
            device["consumed_capacity"] = std::move(consumed);
          }
          devices.push_back(std::move(device));
        }
        claims.push_back({{"claim", c.claim}, {"devices", std::move(devices)}});
      }
      j["resource_claims"] = std::move(claims);
    }
    if (p.mps)
      j["mps"] = {{"replicas", p.mps->replicas},
                  {"pinned_device_mem_limit_mib", p.mps->pinned_device_mem_limit_mib},
                  {"active_thread_percentage", p.mps->active_thread_percentage}};
    if (p.gpu_memory)
      j["gpu_memory"] = {{"scheduler", p.gpu_memory->scheduler},
                         {"memory_mib_per_gpu", p.gpu_memory->memory_mib},
                         {"cores_percentage_per_gpu", p.gpu_memory->cores_percentage}};
    placements.push_back(std::move(j));
  }
  doc["placements"] = std::move(placements);
  doc["pending"] = unplaced_json(r.pending);
  doc["quota_rejected"] = unplaced_json(r.quota_rejected);
  if (!r.admissions.empty()) {
    nlohmann::ordered_json admissions = nlohmann::ordered_json::array();
    for (const queue::EventRecord& a : r.admissions) admissions.push_back(queue_event_json(a, false));
    doc["admissions"] = std::move(admissions);
  }
  doc["gpu_allocation_pct"] = allocation_pct(r);
  doc["warnings"] = warnings;
  if (!node_warnings.empty()) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const NodeCountMismatch& m : node_warnings)
      list.push_back({{"node", m.node}, {"resource", m.resource}, {"advertised", m.advertised}, {"expected", m.expected},
                      {"gpus", m.gpus}, {"replicas", m.replicas}, {"strategy", m.strategy}, {"message", m.message}});
    doc["node_warnings"] = std::move(list);
  }
  if (!not_modelled.empty()) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const NotModelled& f : not_modelled)
      list.push_back({{"what", f.what}, {"objects", f.objects}, {"file", f.first.file}, {"line", f.first.line},
                      {"column", f.first.column}, {"field", f.first.field}, {"consequence", f.consequence}});
    doc["not_modelled"] = std::move(list);
  }
  // Names are not guaranteed UTF-8 (YAML may carry any bytes): replace invalid sequences (U+FFFD).
  return doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string place_result_text(const place::PlaceResult& r) {
  size_t width = 0;
  for (const auto& p : r.placements) width = std::max(width, p.pod.size());
  for (const auto& u : r.pending) width = std::max(width, u.pod.size());
  for (const auto& u : r.quota_rejected) width = std::max(width, u.pod.size());
  std::string out;
  for (const auto& p : r.placements) {
    out += fmt::format("{:<{}}  -> {}", p.pod, width, p.node);
    if (p.mig) out += fmt::format("  mig {} on gpu {}", *p.mig, gpu_list(p.gpus));
    else if (!p.gpus.empty()) out += fmt::format("  gpu{} {}", p.gpus.size() > 1 ? "s" : "", gpu_list(p.gpus));
    if (p.mps) {
      // Replicas held: one per GPU index listed.
      out += fmt::format("  mps {}/{}", p.gpus.empty() ? 1 : p.gpus.size(), p.mps->replicas);
      if (p.mps->pinned_device_mem_limit_mib > 0) out += fmt::format(" ({} MiB, {}% SMs per replica)", p.mps->pinned_device_mem_limit_mib, p.mps->active_thread_percentage);
    }
    for (const DraClaimAllocation& c : p.claims)  // Dynamic Resource Allocation: claim: driver/pool/device, ...
      for (size_t k = 0; k < c.allocation.devices.size(); ++k) {
        const DraDeviceResult& d = c.allocation.devices[k];
        out += fmt::format("{}{}", k == 0 ? fmt::format("  claim {}: ", c.claim) : ", ", dra_device_id(d.driver, d.pool, d.device));
        if (d.shared()) {  // a share of the device: what it consumes, "(memory 20Gi)"
          std::string consumed;
          for (const auto& [name, milli] : d.consumed_capacity_milli) consumed += fmt::format("{}{} {}", consumed.empty() ? "" : ", ", name, consumed_text(milli));
          out += fmt::format(" ({})", consumed.empty() ? "shared" : consumed);
        }
      }
    if (p.gpu_memory) {
      out += fmt::format("  {} {} MiB", p.gpu_memory->scheduler, p.gpu_memory->memory_mib);
      if (p.gpu_memory->scheduler == "HAMi") out += fmt::format(" {}% cores", p.gpu_memory->cores_percentage);
      out += p.gpus.size() > 1 ? " per gpu" : "";
    }
    if (p.prebound) out += "  (spec.nodeName)";
    if (!p.preempted.empty()) out += fmt::format("  preempted {}", fmt::join(p.preempted, ", "));
    out += "\n";
  }
  for (const auto& u : r.pending) out += fmt::format("{:<{}}  pending: {}\n", u.pod, width, u.reason);
  for (const auto& u : r.quota_rejected) out += fmt::format("{:<{}}  rejected: {}\n", u.pod, width, u.reason);
  for (const auto& a : r.admissions)
    if (a.type != "Pending") out += fmt::format("kueue: {} {} in {}{}{}\n", a.workload, a.type, a.cluster_queue, a.reason.empty() ? "" : ": ", a.reason);
  out += fmt::format("{} placed, {} pending, {} rejected by quota, {} preempted; GPU allocation {:.2f}% of {} GPUs on {} nodes ({})\n",
                     r.placements.size(), r.pending.size(), r.quota_rejected.size(), r.preemptions, allocation_pct(r),
                     r.gpu_capacity_milli / 1000, r.node_count, r.policy);
  return out;
}

}  // namespace gpufleet::io
