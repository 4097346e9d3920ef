#include "live/cluster_cache.h"

#include <stdexcept>

namespace gpufleet::live {

const char* kind_name(ResourceKind kind) { return kind == ResourceKind::kNode ? "Node" : "Pod"; }
const char* resource_path_name(ResourceKind kind) { return kind == ResourceKind::kNode ? "nodes" : "pods"; }

struct ClusterCache::Impl {};

ClusterCache::ClusterCache(CacheOptions) : impl_(std::make_unique<Impl>()) {}
ClusterCache::~ClusterCache() = default;
void ClusterCache::replace(ResourceKind, std::vector<nlohmann::json>, const std::string&) { throw std::logic_error("not yet"); }
void ClusterCache::apply(ResourceKind, WatchEventType, const nlohmann::json&) { throw std::logic_error("not yet"); }
std::string ClusterCache::resource_version(ResourceKind) const { return {}; }
void ClusterCache::replace_all(const nlohmann::json&, const std::string&) { throw std::logic_error("not yet"); }
bool ClusterCache::assume_bound(const std::string&, const std::string&, const DeviceAssignment&) { return false; }
std::shared_ptr<const Snapshot> ClusterCache::snapshot() { return std::make_shared<Snapshot>(); }
bool ClusterCache::synced() const { return false; }
size_t ClusterCache::object_count(ResourceKind) const { return 0; }

}  // namespace gpufleet::live
