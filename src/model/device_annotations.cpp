#include "model/device_annotations.h"

#include <charconv>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace gpufleet {
namespace {

constexpr int32_t kMaxIndex = 1023;

std::string join(const std::vector<int32_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
  return out;
}

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

int32_t index_of(std::string_view s, std::string_view key) {
  int32_t v = -1;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < 0 || v > kMaxIndex)
    throw std::invalid_argument(fmt::format("annotation {}: '{}' is not a device index 0..{}", key, s, kMaxIndex));
  return v;
}

std::vector<int32_t> indices(const std::string& value, std::string_view key) {
  std::vector<int32_t> out;
  for (std::string_view part : split(value)) out.push_back(index_of(part, key));
  return out;
}

}  // namespace

std::map<std::string, std::string> device_annotation_values(const DeviceAssignment& devices) {
  std::map<std::string, std::string> out;
  if (!devices.gpus.empty()) out.emplace(kGpuIndexAnnotation, join(devices.gpus));
  if (!devices.shared_replicas.empty()) out.emplace(kSharedGpuIndexAnnotation, join(devices.shared_replicas));
  if (!devices.mig.empty()) {
    std::string v;
    for (size_t i = 0; i < devices.mig.size(); ++i)
      v += fmt::format("{}{}:{}:{}", i ? "," : "", devices.mig[i].gpu, devices.mig[i].start, devices.mig[i].profile);
    out.emplace(kMigDevicesAnnotation, std::move(v));
  }
  return out;
}

std::optional<DeviceAssignment> parse_device_annotations(const std::map<std::string, std::string>& annotations) {
  std::optional<DeviceAssignment> out;
  if (auto it = annotations.find(std::string(kGpuIndexAnnotation)); it != annotations.end())
    out.emplace().gpus = indices(it->second, kGpuIndexAnnotation);
  if (auto it = annotations.find(std::string(kSharedGpuIndexAnnotation)); it != annotations.end()) {
    if (!out) out.emplace();
    out->shared_replicas = indices(it->second, kSharedGpuIndexAnnotation);
  }
  if (auto it = annotations.find(std::string(kMigDevicesAnnotation)); it != annotations.end()) {
    if (!out) out.emplace();
    for (std::string_view part : split(it->second)) {
      const size_t a = part.find(':');
      const size_t b = a == std::string_view::npos ? a : part.find(':', a + 1);
      if (b == std::string_view::npos || b + 1 >= part.size())
        throw std::invalid_argument(fmt::format("annotation {}: '{}' is not gpu:start:profile", kMigDevicesAnnotation, part));
      out->mig.push_back({index_of(part.substr(0, a), kMigDevicesAnnotation), index_of(part.substr(a + 1, b - a - 1), kMigDevicesAnnotation),
                          std::string(part.substr(b + 1))});
    }
  }
  return out;
}

}  // namespace gpufleet
