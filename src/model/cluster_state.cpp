#include "model/cluster_state.h"

#include <algorithm>
#include <atomic>
#include <bit>

#include <fmt/format.h>

#include "model/mig.h"

namespace gpufleet {
namespace {

// Memo keys (anti_affinity_version, node_set_version) are drawn from one process-wide sequence, so
// two states never share one unless one is a copy of the other with the same pods or nodes (then
// whatever the key stands for is the same).
uint64_t next_memo_version() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

bool same_request(const Pod& a, const Pod& b) {
  return a.cpu_milli == b.cpu_milli && a.memory_bytes == b.memory_bytes && a.num_gpu == b.num_gpu &&
         a.gpu_milli == b.gpu_milli && a.shared_replicas == b.shared_replicas && a.mig_requests == b.mig_requests &&
         a.gpu_memory_share == b.gpu_memory_share;
}

}  // namespace

// ---- nodes and slots ---------------------------------------------------------------------------

ClusterState::ChangeLog::ChangeLog() : identity(next_memo_version()) {}
ClusterState::ChangeLog::ChangeLog(const ChangeLog& other)
    : identity(next_memo_version()), base(other.base + other.nodes.size()) {}
ClusterState::ChangeLog& ClusterState::ChangeLog::operator=(const ChangeLog& other) {
  identity = next_memo_version();
  base = other.base + other.nodes.size();
  nodes.clear();
  return *this;
}

void ClusterState::log_change(NodeId n) {
  auto& log = change_log_.nodes;
  log.push_back(n);
  const size_t keep = std::max<size_t>(65536, 2 * nodes_.size());
  if (log.size() > 2 * keep) {  // drop the oldest, keeping `keep`: amortized O(1) per change
    const size_t drop = log.size() - keep;
    log.erase(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(drop));
    change_log_.base += drop;
  }
  ++changes_;
}

std::optional<std::span<const NodeId>> ClusterState::changes_since(uint64_t since) const {
  if (since < change_log_.base || since > changes_) return std::nullopt;
  const auto& log = change_log_.nodes;
  return std::span<const NodeId>(log.data() + (since - change_log_.base), log.size() - (since - change_log_.base));
}

ClusterState::ClusterState() : node_set_version_(next_memo_version()), anti_version_(next_memo_version()) {}

ClusterState::ClusterState(std::vector<Node> nodes) : ClusterState() {
  // Capacity first for every node, then the GPU sharing set-up of each (the errors' order).
  for (const Node& node : nodes)
    if (std::string why = check_capacity(node); !why.empty()) throw std::invalid_argument(why);
  grow_slots(nodes.size());
  std::vector<int32_t> mig_milli;
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (std::string why = check_node(nodes[n], mig_milli); !why.empty()) throw std::invalid_argument(why);
    model_id_[n] = register_gpu_model(nodes[n].gpu_model);
    install_node(static_cast<NodeId>(n), std::move(nodes[n]), mig_milli);
  }
  std::fill(versions_.begin(), versions_.end(), uint64_t{1});
  version_high_ = 1;
}

std::string ClusterState::check_capacity(const Node& node) {
  if (node.cpu_milli < 0 || node.memory_bytes < 0 || node.gpu_count < 0 || node.max_pods < 0)
    return fmt::format("node {}: negative capacity", node.name);
  if (node.gpu_count > kMaxGpusPerNode)
    return fmt::format("node {}: {} GPUs, more than {} per node", node.name, node.gpu_count, kMaxGpusPerNode);
  return {};
}

std::string ClusterState::check_node(const Node& node, std::vector<int32_t>& mig_milli) {
  mig_milli.clear();
  if (std::string why = check_capacity(node); !why.empty()) return why;
  if (node.time_slicing && node.time_slicing->replicas < 1)
    return fmt::format("node {}: time-slicing replicas {} is below 1", node.name, node.time_slicing->replicas);
  if (node.time_slicing && node.time_slicing->mps() && std::any_of(node.mig.begin(), node.mig.end(), [](const GpuMig& g) { return g.enabled; }))
    return fmt::format("node {}: sharing using MPS is not supported for MIG devices", node.name);
  if (!node.mig.empty() && node.mig.size() != static_cast<size_t>(node.gpu_count))
    return fmt::format("node {}: MIG set-up for {} GPUs, the node has {}", node.name, node.mig.size(), node.gpu_count);
  if (!node.gpu_numa_node.empty() && node.gpu_numa_node.size() != static_cast<size_t>(node.gpu_count))
    return fmt::format("node {}: NUMA layout for {} GPUs, the node has {}", node.name, node.gpu_numa_node.size(),
                       node.gpu_count);
  for (size_t g = 0; g < node.gpu_numa_node.size(); ++g)
    if (node.gpu_numa_node[g] < 0 || node.gpu_numa_node[g] >= kMaxNumaNodesPerNode)
      return fmt::format("node {}: GPU {} on NUMA node {}, outside 0..{}", node.name, g, node.gpu_numa_node[g],
                         kMaxNumaNodesPerNode - 1);
  if (node.gpu_memory_mib < 0) return fmt::format("node {}: negative GPU memory", node.name);
  if (node.hami) {
    if (node.hami->split_count < 1 || node.hami->cores < 1)
      return fmt::format("node {}: HAMi split count {} or cores {} below 1", node.name, node.hami->split_count, node.hami->cores);
    if (node.time_slicing || std::any_of(node.mig.begin(), node.mig.end(), [](const GpuMig& g) { return g.enabled; }))
      return fmt::format("node {}: a HAMi node with a device-plugin MIG or time-slicing set-up", node.name);
  }
  const GpuModelInfo* model = nullptr;
  for (size_t g = 0; g < node.mig.size(); ++g) {
    const GpuMig& gm = node.mig[g];
    if (!gm.enabled) {
      if (!gm.instances.empty())
        return fmt::format("node {}: GPU {} has MIG instances but MIG is not enabled", node.name, g);
      continue;
    }
    if (model == nullptr) {
      model = find_gpu_model(node.gpu_model);
      if (model == nullptr || !model->mig_capable)
        return fmt::format("node {}: GPU model '{}' is {}", node.name, node.gpu_model,
                           model == nullptr ? "unknown, MIG needs a catalog model" : "not MIG-capable");
    }
    MigLayout layout(*model);
    for (const MigInstance& i : gm.instances) {
      if (!layout.place_at(i.profile, i.start))
        return fmt::format("node {}: GPU {}: MIG instance {} at memory slice {} does not fit the {} placement rules",
                           node.name, g, i.profile, i.start, model->name);
      mig_milli.push_back(mig_device_gpu_milli(model->find_mig_profile(i.profile)->compute_slices));
    }
  }
  return {};
}

int32_t ClusterState::register_gpu_model(std::string_view model) {
  auto it = std::find(models_.begin(), models_.end(), model);
  if (it != models_.end()) return static_cast<int32_t>(it - models_.begin());
  models_.emplace_back(model);
  journal(RegisterModelChange{});
  return static_cast<int32_t>(models_.size() - 1);
}

void ClusterState::grow_slots(size_t count) {
  if (count <= nodes_.size()) return;
  const uint64_t version = ++version_high_;
  log_change(kSlotCountChange);
  nodes_.resize(count);
  usage_.resize(count);
  versions_.resize(count, version);
  bound_.resize(count);
  gpu_offset_.resize(count, 0);
  model_id_.resize(count, -1);
  sharing_.resize(count, 0);
  anti_pos_.resize(count, 0);
  live_.resize((count + 63) / 64, 0);
}

void ClusterState::shrink_slots(size_t count) {
  log_change(kSlotCountChange);
  nodes_.resize(count);
  usage_.resize(count);
  versions_.resize(count);
  bound_.resize(count);
  gpu_offset_.resize(count);
  model_id_.resize(count);
  sharing_.resize(count);
  anti_pos_.resize(count);
  live_.resize((count + 63) / 64);
  if (count % 64 != 0) live_.back() &= (uint64_t{1} << (count % 64)) - 1;
}

NodeId ClusterState::lowest_free_slot() const {
  for (size_t w = 0; w < live_.size(); ++w) {
    if (live_[w] == ~uint64_t{0}) continue;
    const size_t n = w * 64 + static_cast<size_t>(std::countr_one(live_[w]));
    if (n < nodes_.size()) return static_cast<NodeId>(n);
  }
  return static_cast<NodeId>(nodes_.size());
}

NodeId ClusterState::add_node(Node node, std::optional<NodeId> slot) {
  const NodeId n = slot ? *slot : lowest_free_slot();
  if (n == UINT32_MAX) throw InvariantViolation(fmt::format("add_node {}: slot {} is not a node id", node.name, n));
  if (has_node(n))
    throw InvariantViolation(fmt::format("add_node {}: slot {} holds node {}", node.name, n, nodes_[n].name));
  std::vector<int32_t> mig_milli;
  if (std::string why = check_node(node, mig_milli); !why.empty()) throw std::invalid_argument(why);
  const size_t slots_before = nodes_.size();
  grow_slots(size_t{n} + 1);
  model_id_[n] = register_gpu_model(node.gpu_model);
  install_node(n, std::move(node), mig_milli);
  journal(AddNodeChange{n, slots_before});
  return n;
}

void ClusterState::install_node(NodeId n, Node node, const std::vector<int32_t>& mig_milli) {
  const auto gpus = static_cast<size_t>(node.gpu_count);
  // The per-GPU block: a freed one of the same size, else appended.
  uint32_t offset = 0;
  if (gpus > 0) {
    if (free_gpu_blocks_.size() > gpus && !free_gpu_blocks_[gpus].empty()) {
      offset = free_gpu_blocks_[gpus].back();
      free_gpu_blocks_[gpus].pop_back();
    } else {
      offset = static_cast<uint32_t>(gpu_free_.size());
      gpu_free_.resize(offset + gpus);
      gpu_kind_.resize(offset + gpus);
      replicas_used_.resize(offset + gpus);
      mig_first_.resize(offset + gpus);
      share_memory_used_.resize(offset + gpus);
      share_cores_used_.resize(offset + gpus);
      share_pods_.resize(offset + gpus);
    }
    std::fill_n(gpu_free_.begin() + offset, gpus, kGpuMilliPerGpu);
    const GpuKind kind = node.time_slicing ? GpuKind::kTimeSliced : GpuKind::kPlain;  // MIG GPUs below
    std::fill_n(gpu_kind_.begin() + offset, gpus, static_cast<uint8_t>(kind));
    std::fill_n(replicas_used_.begin() + offset, gpus, 0);
    std::fill_n(mig_first_.begin() + offset, gpus, 0u);
    std::fill_n(share_memory_used_.begin() + offset, gpus, int64_t{0});
    std::fill_n(share_cores_used_.begin() + offset, gpus, 0);
    std::fill_n(share_pods_.begin() + offset, gpus, 0);
  }
  // The per-MIG-instance block, likewise.
  const size_t instances = mig_milli.size();
  if (instances > 0) {
    uint32_t first = 0;
    if (free_mig_blocks_.size() > instances && !free_mig_blocks_[instances].empty()) {
      first = free_mig_blocks_[instances].back();
      free_mig_blocks_[instances].pop_back();
    } else {
      first = static_cast<uint32_t>(mig_taken_.size());
      mig_taken_.resize(first + instances);
      mig_milli_.resize(first + instances);
    }
    std::fill_n(mig_taken_.begin() + first, instances, uint8_t{0});
    std::copy(mig_milli.begin(), mig_milli.end(), mig_milli_.begin() + first);
    uint32_t next = first;
    for (size_t g = 0; g < node.mig.size(); ++g) {
      mig_first_[offset + g] = next;
      if (node.mig[g].enabled) gpu_kind_[offset + g] = static_cast<uint8_t>(GpuKind::kMig);
      next += static_cast<uint32_t>(node.mig[g].instances.size());
    }
  } else {
    for (size_t g = 0; g < node.mig.size(); ++g)
      if (node.mig[g].enabled) gpu_kind_[offset + g] = static_cast<uint8_t>(GpuKind::kMig);
  }
  gpu_offset_[n] = offset;
  sharing_[n] = node.has_gpu_sharing() ? 1 : 0;
  gpu_capacity_milli_ += static_cast<int64_t>(gpus) * kGpuMilliPerGpu;
  usage_[n] = Usage{.gpu_free_total_milli = node.gpu_count * kGpuMilliPerGpu};
  versions_[n] = ++version_high_;
  log_change(n);
  anti_pos_[n] = 0;
  nodes_[n] = std::move(node);
  live_[n >> 6] |= uint64_t{1} << (n & 63);
  ++live_count_;
  node_set_version_ = next_memo_version();
}

Node ClusterState::remove_node(NodeId n) {
  if (!has_node(n)) throw InvariantViolation(fmt::format("remove_node: slot {} holds no node", n));
  if (!bound_[n].empty())
    throw InvariantViolation(fmt::format("remove_node {}: {} pods are bound to it", nodes_[n].name, bound_[n].size()));
  Node node = uninstall_node(n);
  if (!journal_.marks.empty()) journal(RemoveNodeChange{n, node});
  return node;
}

void ClusterState::set_unschedulable(NodeId n, bool unschedulable) {
  if (!has_node(n)) throw InvariantViolation(fmt::format("set_unschedulable: slot {} holds no node", n));
  if (nodes_[n].unschedulable == unschedulable) return;
  journal(UnschedulableChange{n, nodes_[n].unschedulable});
  nodes_[n].unschedulable = unschedulable;
  touch(n);
}

Node ClusterState::uninstall_node(NodeId n) {
  Node node = std::move(nodes_[n]);
  nodes_[n] = Node{};
  const auto gpus = static_cast<size_t>(node.gpu_count);
  const uint32_t offset = gpu_offset_[n];
  if (gpus > 0) {
    if (free_gpu_blocks_.size() <= gpus) free_gpu_blocks_.resize(gpus + 1);
    free_gpu_blocks_[gpus].push_back(offset);
  }
  size_t instances = 0;
  for (const GpuMig& gm : node.mig) instances += gm.instances.size();
  if (instances > 0) {
    if (free_mig_blocks_.size() <= instances) free_mig_blocks_.resize(instances + 1);
    free_mig_blocks_[instances].push_back(mig_first_[offset]);
  }
  gpu_capacity_milli_ -= static_cast<int64_t>(gpus) * kGpuMilliPerGpu;
  usage_[n] = Usage{};
  versions_[n] = ++version_high_;
  log_change(n);
  std::vector<BoundPod>().swap(bound_[n]);
  gpu_offset_[n] = 0;
  model_id_[n] = -1;
  sharing_[n] = 0;
  live_[n >> 6] &= ~(uint64_t{1} << (n & 63));
  --live_count_;
  node_set_version_ = next_memo_version();
  return node;
}

// ---- forks -------------------------------------------------------------------------------------

ClusterState::Fork ClusterState::fork() {
  const uint64_t id = journal_.next_id++;
  journal_.marks.push_back({id, journal_.changes.size(), last_bind_seq_});
  return Fork(this, id);
}

ClusterState::Fork::~Fork() {
  if (state_ != nullptr) state_->end_fork(id_, false, true);
}

bool ClusterState::Fork::open() const { return state_ != nullptr && state_->fork_open(id_); }

void ClusterState::Fork::commit() {
  if (state_ == nullptr) throw std::logic_error("ClusterState::Fork::commit: the fork has ended");
  state_->end_fork(id_, true, false);
  state_ = nullptr;
}

void ClusterState::Fork::discard() {
  if (state_ == nullptr) throw std::logic_error("ClusterState::Fork::discard: the fork has ended");
  state_->end_fork(id_, false, false);
  state_ = nullptr;
}

bool ClusterState::fork_open(uint64_t id) const {
  return std::any_of(journal_.marks.begin(), journal_.marks.end(), [id](const Journal::Mark& m) { return m.id == id; });
}

void ClusterState::end_fork(uint64_t id, bool keep, bool from_destructor) {
  auto& marks = journal_.marks;
  auto it = std::find_if(marks.begin(), marks.end(), [id](const Journal::Mark& m) { return m.id == id; });
  if (it == marks.end()) {
    if (from_destructor) return;
    throw std::logic_error("ClusterState::Fork: the fork has ended with the fork it was opened in");
  }
  if (it + 1 != marks.end() && !from_destructor)
    throw std::logic_error("ClusterState::Fork: a fork opened inside this one is still open");
  const Journal::Mark mark = *it;
  marks.erase(it, marks.end());
  if (!keep) {
    while (journal_.changes.size() > mark.start) {
      undo(journal_.changes.back());
      journal_.changes.pop_back();
    }
    last_bind_seq_ = mark.last_bind_seq;
  }
  if (marks.empty()) journal_.changes.clear();
}

void ClusterState::undo(Change& change) {
  if (auto* c = std::get_if<BindChange>(&change)) {
    auto& bound = bound_[c->n];
    auto it = std::lower_bound(bound.begin(), bound.end(), c->bind_seq,
                               [](const BoundPod& b, uint64_t seq) { return b.bind_seq < seq; });
    unbind(c->n, static_cast<size_t>(it - bound.begin()), nullptr);
  } else if (auto* u = std::get_if<UnbindChange>(&change)) {
    do_bind(u->n, u->bound.pod, u->bound.devices(), u->bound.bind_seq);
    if (u->anti_at != 0) {  // back to its index in anti_nodes_, the node there back to the end
      const uint32_t at = u->anti_at - 1;
      std::swap(anti_nodes_[at], anti_nodes_.back());
      anti_pos_[anti_nodes_[at]] = at + 1;
      anti_pos_[anti_nodes_.back()] = static_cast<uint32_t>(anti_nodes_.size());
    }
  } else if (auto* a = std::get_if<AddNodeChange>(&change)) {
    uninstall_node(a->n);
    if (a->slots_before < nodes_.size()) shrink_slots(a->slots_before);
  } else if (auto* r = std::get_if<RemoveNodeChange>(&change)) {
    std::vector<int32_t> mig_milli;
    check_node(r->node, mig_milli);
    const auto model = std::find(models_.begin(), models_.end(), r->node.gpu_model);  // registered before
    model_id_[r->n] = static_cast<int32_t>(model - models_.begin());
    install_node(r->n, std::move(r->node), mig_milli);
  } else if (auto* f = std::get_if<UnschedulableChange>(&change)) {
    nodes_[f->n].unschedulable = f->was;
    touch(f->n);
  } else if (auto* d = std::get_if<DraDeallocateChange>(&change)) {
    for (const DraDeviceResult& r : d->claim.allocation.devices)
      if (!r.shared()) dra_devices_[dra_device_id(r.driver, r.pool, r.device)] = d->key;
    add_dra_shares(d->claim.allocation, +1);
    dra_claims_.emplace(d->key, std::move(d->claim));
    ++dra_version_;
  } else {
    models_.pop_back();
  }
}

// ---- usage -------------------------------------------------------------------------------------

int32_t ClusterState::replicas_free(NodeId n) const {
  const Node& node = nodes_[n];
  if (!node.time_slicing) return 0;
  int32_t free = 0;
  for (int32_t g = 0; g < node.gpu_count; ++g)
    if (gpu_kind(n, g) == GpuKind::kTimeSliced) free += node.time_slicing->replicas - replicas_used(n, g);
  return free;
}

int32_t ClusterState::mig_free_count(NodeId n, std::string_view profile) const {
  const Node& node = nodes_[n];
  int32_t free = 0;
  for (size_t g = 0; g < node.mig.size(); ++g) {
    const auto& instances = node.mig[g].instances;
    for (size_t i = 0; i < instances.size(); ++i)
      if (instances[i].profile == profile && !mig_device_taken(n, static_cast<int32_t>(g), i)) ++free;
  }
  return free;
}

int64_t ClusterState::mig_slot(NodeId n, const MigDevice& d) const {
  const Node& node = nodes_[n];
  if (d.gpu < 0 || static_cast<size_t>(d.gpu) >= node.mig.size()) return -1;
  const auto& instances = node.mig[static_cast<size_t>(d.gpu)].instances;
  for (size_t i = 0; i < instances.size(); ++i)
    if (instances[i].start == d.start && instances[i].profile == d.profile)
      return static_cast<int64_t>(mig_first_[gpu_offset_[n] + static_cast<size_t>(d.gpu)] + i);
  return -1;
}

int32_t ClusterState::gpu_fully_free_count(NodeId n) const {
  int32_t count = 0;
  for (int32_t left : gpu_free_milli(n)) count += left == kGpuMilliPerGpu;
  return count;
}

int ClusterState::kind_index(const Pod& pod) {
  if (!pod.is_gpu_pod()) return -1;
  if (pod.gpu_milli < kGpuMilliPerGpu) return 0;
  return std::clamp(pod.num_gpu, 1, kMaxGpusPerPod);
}

std::string ClusterState::check_plain_gpus(NodeId n, const Pod& pod, std::span<const int32_t> gpus) const {
  auto free = gpu_free_milli(n);
  for (size_t i = 0; i < gpus.size(); ++i) {
    const int32_t g = gpus[i];
    if (g < 0 || g >= nodes_[n].gpu_count) return fmt::format("GPU index {} out of range", g);
    for (size_t j = 0; j < i; ++j)
      if (gpus[j] == g) return fmt::format("GPU index {} given twice", g);
    if (gpu_kind(n, g) != GpuKind::kPlain) return fmt::format("GPU {} has MIG enabled", g);
    if (free[static_cast<size_t>(g)] < pod.gpu_milli)
      return fmt::format("GPU {} has only {} milli free", g, free[static_cast<size_t>(g)]);
  }
  return {};
}

std::string ClusterState::check(NodeId n, const Pod& pod, std::span<const int32_t> gpus, std::span<const int32_t> shared,
                                std::span<const MigDevice> mig) const {
  if (n >= nodes_.size()) return fmt::format("node id {} out of range", n);
  if (!has_node(n)) return fmt::format("slot {} holds no node", n);
  const Node& node = nodes_[n];
  if (pod.cpu_milli < 0 || pod.memory_bytes < 0 || pod.gpu_milli < 0 || pod.gpu_milli > kGpuMilliPerGpu)
    return "pod request out of range";
  if (pod.cpu_milli > cpu_free_milli(n)) return "insufficient cpu";
  if (pod.memory_bytes > memory_free_bytes(n)) return "insufficient memory";
  if (usage_[n].pods >= node.max_pods) return "too many pods";
  if (pod.gpu_memory_share) {
    if (!shared.empty() || !mig.empty() || pod.has_device_requests() || pod.num_gpu != 0)
      return "a memory-share pod with device-plugin GPU requests";
    return check_memory_share(n, pod, gpus);
  }
  const size_t want = pod.is_gpu_pod() ? static_cast<size_t>(pod.num_gpu) : 0;
  if (gpus.size() != want) return fmt::format("{} GPU indices given, pod needs {}", gpus.size(), want);
  if (sharing_[n] != 0 || !shared.empty() || !mig.empty() || pod.has_device_requests())
    return check_sharing(n, pod, gpus, shared, mig);
  if (std::string why = check_plain_gpus(n, pod, gpus); !why.empty()) return why;
  return {};
}

// The device part of check() when the node shares GPUs or the pod asks for shared devices.
std::string ClusterState::check_sharing(NodeId n, const Pod& pod, std::span<const int32_t> gpus,
                                        std::span<const int32_t> shared, std::span<const MigDevice> mig) const {
  const Node& node = nodes_[n];
  if (pod.shared_replicas < 0) return "pod request out of range";
  if (shared.size() != static_cast<size_t>(pod.shared_replicas))
    return fmt::format("{} shared replicas given, pod needs {}", shared.size(), pod.shared_replicas);
  int64_t mig_wanted = 0;
  for (const MigRequest& r : pod.mig_requests) {
    if (r.count < 1) return "pod request out of range";
    mig_wanted += r.count;
  }
  if (static_cast<int64_t>(mig.size()) != mig_wanted)
    return fmt::format("{} MIG devices given, pod needs {}", mig.size(), mig_wanted);

  const bool sliced = node.time_slicing.has_value();
  const bool renamed = sliced && node.time_slicing->renamed;
  // Replicas: count per GPU, each a time-sliced GPU with room (R - used) for its count.
  auto check_replicas = [&](std::span<const int32_t> list) -> std::string {
    std::array<int32_t, kMaxGpusPerNode> taking{};
    for (const int32_t g : list) {
      if (g < 0 || g >= node.gpu_count) return fmt::format("GPU index {} out of range", g);
      if (gpu_kind(n, g) != GpuKind::kTimeSliced) return fmt::format("GPU {} is not time-sliced", g);
      if (++taking[static_cast<size_t>(g)] + replicas_used(n, g) > node.time_slicing->replicas)
        return fmt::format("GPU {} has only {} of {} replicas free", g, node.time_slicing->replicas - replicas_used(n, g),
                           node.time_slicing->replicas);
    }
    return {};
  };

  if (!gpus.empty()) {
    if (sliced && renamed)
      return "nvidia.com/gpu is not advertised: the node's time-sliced GPUs are renamed nvidia.com/gpu.shared";
    if (sliced) {
      if (pod.gpu_milli != kGpuMilliPerGpu) return "a fraction of a GPU on a time-sliced node";
      if (std::string why = check_replicas(gpus); !why.empty()) return why;
    } else {
      if (std::string why = check_plain_gpus(n, pod, gpus); !why.empty()) return why;
    }
  }
  if (!shared.empty()) {
    if (!renamed) return "nvidia.com/gpu.shared is not advertised: the node has no renamed time-sliced GPUs";
    if (std::string why = check_replicas(shared); !why.empty()) return why;
  }
  for (size_t i = 0; i < mig.size(); ++i) {
    const MigDevice& d = mig[i];
    const int64_t slot = mig_slot(n, d);
    if (slot < 0) return fmt::format("GPU {} has no MIG instance {} at memory slice {}", d.gpu, d.profile, d.start);
    if (mig_taken_[static_cast<size_t>(slot)] != 0)
      return fmt::format("MIG device {} at GPU {} slice {} is taken", d.profile, d.gpu, d.start);
    for (size_t j = 0; j < i; ++j)
      if (mig[j].gpu == d.gpu && mig[j].start == d.start)
        return fmt::format("MIG device at GPU {} slice {} given twice", d.gpu, d.start);
  }
  for (const MigRequest& r : pod.mig_requests) {
    const auto given = std::count_if(mig.begin(), mig.end(), [&](const MigDevice& d) { return d.profile == r.profile; });
    if (given != r.count) return fmt::format("{} MIG devices {} given, pod needs {}", given, r.profile, r.count);
  }
  return {};
}

// ---- memory-based sharing -----------------------------------------------------------------------

CardRefusal ClusterState::memory_share_refusal(NodeId n, int32_t g, const GpuMemoryShare& request) const {
  const size_t at = gpu_offset_[n] + static_cast<size_t>(g);
  const int64_t card = nodes_[n].gpu_memory_mib;
  const int64_t used = share_memory_used_[at];
  // Only memory-share pods on it: its used gpu_milli is theirs.
  if (gpu_kind_[at] != static_cast<uint8_t>(GpuKind::kPlain) ||
      kGpuMilliPerGpu - gpu_free_[at] != memory_share_gpu_milli(used, card))
    return CardRefusal::kNotShareable;
  if (card <= 0) return CardRefusal::kInsufficientMemory;  // memory unknown
  const HamiDevices* hami = nodes_[n].hami ? &*nodes_[n].hami : nullptr;
  if (hami != nullptr && share_pods_[at] >= hami->split_count) return CardRefusal::kTimeSlicingExhausted;
  if (card - used < memory_share_request_mib(request, card)) return CardRefusal::kInsufficientMemory;
  if (hami == nullptr) return CardRefusal::kFits;
  const int32_t cores = std::min(request.cores_percentage, 100);  // device.go Fit clamps gpucores to 100
  if (hami->cores - share_cores_used_[at] < cores) return CardRefusal::kInsufficientCore;
  if (hami->cores == 100 && cores == 100 && share_pods_[at] > 0) return CardRefusal::kExclusiveConflict;
  if (share_cores_used_[at] == hami->cores && cores == 0) return CardRefusal::kComputeUnitsExhausted;
  return CardRefusal::kFits;
}

std::string ClusterState::check_memory_share(NodeId n, const Pod& pod, std::span<const int32_t> gpus) const {
  const GpuMemoryShare& request = *pod.gpu_memory_share;
  if (request.cards < 1 || request.memory_mib < 0 || request.cores_percentage < 0 || request.memory_percentage < 1 ||
      request.memory_percentage > 100)
    return "pod request out of range";
  if (!memory_share_node_fits(n, request))
    return fmt::format("the node is not shared by {}", gpu_memory_scheduler_name(request.scheduler));
  if (gpus.size() != static_cast<size_t>(request.cards))
    return fmt::format("{} cards given, pod needs {}", gpus.size(), request.cards);
  for (size_t i = 0; i < gpus.size(); ++i) {
    const int32_t g = gpus[i];
    if (g < 0 || g >= nodes_[n].gpu_count) return fmt::format("GPU index {} out of range", g);
    for (size_t j = 0; j < i; ++j)
      if (gpus[j] == g) return fmt::format("GPU index {} given twice", g);
    if (const CardRefusal why = memory_share_refusal(n, g, request); why != CardRefusal::kFits)
      return fmt::format("card {} refuses the pod ({})", g, static_cast<int>(why));
  }
  return {};
}

void ClusterState::apply_memory_share(NodeId n, const Pod& pod, std::span<const int32_t> gpus, int sign) {
  const GpuMemoryShare& request = *pod.gpu_memory_share;
  const int64_t card = nodes_[n].gpu_memory_mib;
  const int64_t memory = memory_share_request_mib(request, card);
  const int32_t cores = nodes_[n].hami ? std::min(request.cores_percentage, 100) : 0;
  Usage& u = usage_[n];
  for (int32_t g : gpus) {
    const size_t at = gpu_offset_[n] + static_cast<size_t>(g);
    const int32_t before = memory_share_gpu_milli(share_memory_used_[at], card);
    share_memory_used_[at] += sign * memory;
    share_cores_used_[at] += sign * cores;
    share_pods_[at] += sign;
    const int32_t taken = memory_share_gpu_milli(share_memory_used_[at], card) - before;
    gpu_free_[at] -= taken;
    u.gpu_free_total_milli -= taken;
    gpu_used_milli_ += taken;
  }
}

bool ClusterState::can_allocate(NodeId n, const Pod& pod, const DeviceAssignment& devices) const {
  if (!devices.claims.empty() && !check_claims(devices.claims).empty()) return false;
  return check(n, pod, devices.gpus, devices.shared_replicas, devices.mig).empty();
}

uint64_t ClusterState::allocate(NodeId n, const Pod& pod, const DeviceAssignment& devices) {
  bind(n, pod, devices, last_bind_seq_ + 1);
  return ++last_bind_seq_;
}

void ClusterState::rebind(NodeId n, const BoundPod& bound) {
  const uint64_t seq = bound.bind_seq;
  bool ok = seq >= 1 && seq <= last_bind_seq_;
  if (ok && n < nodes_.size())
    for (const BoundPod& b : bound_[n]) ok = ok && b.bind_seq != seq;
  if (!ok) throw InvariantViolation(fmt::format("rebind {}: bind_seq {} was not released from this state", bound.pod.name, seq));
  bind(n, bound.pod, bound.devices(), seq);
}

BoundPod ClusterState::release(NodeId n, const Pod& pod) {
  if (!has_node(n)) throw InvariantViolation(fmt::format("release {}: slot {} holds no node", pod.name, n));
  const auto& bound = bound_[n];
  auto it = std::find_if(bound.begin(), bound.end(), [&](const BoundPod& b) {
    return b.pod.name == pod.name && b.pod.namespace_name == pod.namespace_name;
  });
  if (it == bound.end())
    throw InvariantViolation(fmt::format("release {} from {}: not bound there", pod.name, nodes_[n].name));
  if (!same_request(it->pod, pod))
    throw InvariantViolation(fmt::format("release {} from {}: bound with another request", pod.name, nodes_[n].name));
  uint32_t anti_at = 0;
  BoundPod out = unbind(n, static_cast<size_t>(it - bound.begin()), &anti_at);
  if (!journal_.marks.empty()) journal(UnbindChange{n, anti_at, out});
  return out;
}

void ClusterState::apply_devices(NodeId n, const Pod& pod, std::span<const int32_t> gpus,
                                 std::span<const int32_t> shared, std::span<const MigDevice> mig, int sign) {
  Usage& u = usage_[n];
  auto take = [&](size_t at, int32_t milli) {
    gpu_free_[at] -= sign * milli;
    u.gpu_free_total_milli -= sign * milli;
    gpu_used_milli_ += sign * milli;
  };
  const int32_t replica_milli = nodes_[n].time_slicing ? replica_gpu_milli(nodes_[n].time_slicing->replicas) : 0;
  for (int32_t g : gpus) {
    const size_t at = gpu_offset_[n] + static_cast<size_t>(g);
    if (gpu_kind_[at] == static_cast<uint8_t>(GpuKind::kTimeSliced)) {
      replicas_used_[at] += sign;
      take(at, replica_milli);
    } else {
      take(at, pod.gpu_milli);
    }
  }
  for (int32_t g : shared) {
    const size_t at = gpu_offset_[n] + static_cast<size_t>(g);
    replicas_used_[at] += sign;
    take(at, replica_milli);
  }
  for (const MigDevice& d : mig) {
    const auto slot = static_cast<size_t>(mig_slot(n, d));
    mig_taken_[slot] = sign > 0 ? 1 : 0;
    take(gpu_offset_[n] + static_cast<size_t>(d.gpu), mig_milli_[slot]);
  }
}

void ClusterState::set_dra_catalog(std::shared_ptr<const DraCatalog> catalog) {
  std::map<std::string, DraClaimState> claims;
  std::unordered_map<std::string, std::string> devices;
  dra_shares_.clear();
  if (catalog)
    for (const auto& [key, claim] : catalog->claims) {
      if (!claim.allocation) continue;
      for (const DraDeviceResult& d : claim.allocation->devices) {
        if (d.shared()) continue;
        const std::string id = dra_device_id(d.driver, d.pool, d.device);
        if (auto [it, fresh] = devices.try_emplace(id, key); !fresh)
          throw std::invalid_argument(fmt::format("ResourceClaims {} and {} are both allocated device {}", it->second, key, id));
      }
      claims[key] = DraClaimState{*claim.allocation, 0, true};
      add_dra_shares(*claim.allocation, +1);
    }
  for (const auto& [id, shares] : dra_shares_)
    if (auto it = devices.find(id); it != devices.end())
      throw std::invalid_argument(fmt::format("ResourceClaim {} is allocated device {}, which shared allocations hold too", it->second, id));
  dra_catalog_ = std::move(catalog);
  dra_claims_ = std::move(claims);
  dra_devices_ = std::move(devices);
  ++dra_version_;
}

bool ClusterState::deallocate_dra_claim(const std::string& key) {
  auto it = dra_claims_.find(key);
  if (it == dra_claims_.end() || it->second.pods > 0) return false;
  for (const DraDeviceResult& d : it->second.allocation.devices)
    if (!d.shared()) dra_devices_.erase(dra_device_id(d.driver, d.pool, d.device));
  add_dra_shares(it->second.allocation, -1);
  journal(DraDeallocateChange{key, std::move(it->second)});
  dra_claims_.erase(it);
  ++dra_version_;
  return true;
}

void ClusterState::add_dra_shares(const DraAllocation& allocation, int sign) {
  for (const DraDeviceResult& d : allocation.devices) {
    if (!d.shared()) continue;
    const std::string id = dra_device_id(d.driver, d.pool, d.device);
    DraShares& shares = dra_shares_[id];
    shares.allocations += sign;
    for (const auto& [name, milli] : d.consumed_capacity_milli) shares.consumed_milli[name] += sign * milli;
    if (shares.allocations <= 0) dra_shares_.erase(id);
  }
}

std::string ClusterState::check_claims(const std::vector<DraClaimAllocation>& claims) const {
  for (const DraClaimAllocation& c : claims) {
    if (const DraClaimState* held = dra_claim(c.claim)) {
      if (!(held->allocation == c.allocation)) return fmt::format("ResourceClaim {} is allocated other devices", c.claim);
      continue;
    }
    for (const DraDeviceResult& d : c.allocation.devices) {
      const std::string id = dra_device_id(d.driver, d.pool, d.device);
      if (const std::string* holder = dra_device_holder(id); holder && *holder != c.claim)
        return fmt::format("device {} is allocated to ResourceClaim {}", id, *holder);
      if (!d.shared() && dra_consumed_capacity(id) != nullptr) return fmt::format("device {} is shared by other allocations", id);
    }
  }
  return {};
}

void ClusterState::apply_claims(const std::vector<DraClaimAllocation>& claims, int sign) {
  for (const DraClaimAllocation& c : claims) {
    auto it = dra_claims_.find(c.claim);
    if (sign > 0) {
      if (it == dra_claims_.end()) {
        it = dra_claims_.emplace(c.claim, DraClaimState{c.allocation, 0, false}).first;
        for (const DraDeviceResult& d : c.allocation.devices)
          if (!d.shared()) dra_devices_[dra_device_id(d.driver, d.pool, d.device)] = c.claim;
        add_dra_shares(c.allocation, +1);
        ++dra_version_;
      }
      ++it->second.pods;
    } else if (it != dra_claims_.end()) {
      if (--it->second.pods <= 0 && !it->second.from_catalog) {
        for (const DraDeviceResult& d : it->second.allocation.devices)
          if (!d.shared()) dra_devices_.erase(dra_device_id(d.driver, d.pool, d.device));
        add_dra_shares(it->second.allocation, -1);
        dra_claims_.erase(it);
        ++dra_version_;
      }
    }
  }
}

void ClusterState::bind(NodeId n, const Pod& pod, const DeviceAssignment& devices, uint64_t bind_seq) {
  if (std::string why = devices.claims.empty() ? std::string() : check_claims(devices.claims); !why.empty())
    throw InvariantViolation(fmt::format("allocate {} on {}: {}", pod.name, n < nodes_.size() ? nodes_[n].name : "?", why));
  if (std::string why = check(n, pod, devices.gpus, devices.shared_replicas, devices.mig); !why.empty())
    throw InvariantViolation(fmt::format("allocate {} on {}: {}", pod.name, n < nodes_.size() ? nodes_[n].name : "?", why));
  do_bind(n, pod, devices, bind_seq);
  journal(BindChange{n, bind_seq});
}

void ClusterState::do_bind(NodeId n, const Pod& pod, const DeviceAssignment& devices, uint64_t bind_seq) {
  const std::vector<int32_t>& gpus = devices.gpus;
  Usage& u = usage_[n];
  u.cpu_used_milli += pod.cpu_milli;
  u.memory_used_bytes += pod.memory_bytes;
  u.nonzero_cpu_milli += pod.nonzero_cpu_request_milli();
  u.nonzero_memory_bytes += pod.nonzero_memory_request_bytes();
  if (pod.has_scored_affinity()) ++scored_affinity_pods_;
  u.pods += 1;
  if (sharing_[n] == 0 && devices.shared_replicas.empty() && devices.mig.empty()) {
    for (int32_t g : gpus) {
      gpu_free_[gpu_offset_[n] + static_cast<size_t>(g)] -= pod.gpu_milli;
      u.gpu_free_total_milli -= pod.gpu_milli;
      gpu_used_milli_ += pod.gpu_milli;
    }
  } else {
    apply_devices(n, pod, gpus, devices.shared_replicas, devices.mig, +1);
  }
  if (pod.gpu_memory_share) apply_memory_share(n, pod, gpus, +1);
  if (int k = kind_index(pod); k >= 0) ++u.gpu_pod_kinds[static_cast<size_t>(k)];
  if (!pod.constraints.required_anti_affinity.empty()) {
    if (u.anti_affinity_pods++ == 0) {
      anti_nodes_.push_back(n);
      anti_pos_[n] = static_cast<uint32_t>(anti_nodes_.size());
    }
    ++anti_affinity_pods_;
    anti_version_ = next_memo_version();
  }
  touch(n);
  // Keep pods_on(n) in binding order: a new pod goes last, a rebound one back to its place.
  auto& bound = bound_[n];
  auto at = bound.end();
  if (!bound.empty() && bound.back().bind_seq > bind_seq)
    at = std::upper_bound(bound.begin(), bound.end(), bind_seq,
                          [](uint64_t seq, const BoundPod& b) { return seq < b.bind_seq; });
  bound.insert(at, BoundPod{pod, gpus, devices.shared_replicas, devices.mig, bind_seq, devices.claims});
  if (!devices.claims.empty()) apply_claims(devices.claims, +1);
}

BoundPod ClusterState::unbind(NodeId n, size_t i, uint32_t* anti_at) {
  Usage& u = usage_[n];
  auto& bound = bound_[n];
  BoundPod out = std::move(bound[i]);
  bound.erase(bound.begin() + static_cast<std::ptrdiff_t>(i));
  const Pod& pod = out.pod;
  if (!pod.constraints.required_anti_affinity.empty()) {
    if (--u.anti_affinity_pods == 0) {  // swap-remove n from anti_nodes_
      const uint32_t at = anti_pos_[n] - 1;
      if (anti_at != nullptr) *anti_at = at + 1;
      anti_nodes_[at] = anti_nodes_.back();
      anti_pos_[anti_nodes_[at]] = at + 1;
      anti_nodes_.pop_back();
      anti_pos_[n] = 0;
    }
    --anti_affinity_pods_;
    anti_version_ = next_memo_version();
  }
  u.cpu_used_milli -= pod.cpu_milli;
  u.memory_used_bytes -= pod.memory_bytes;
  u.nonzero_cpu_milli -= pod.nonzero_cpu_request_milli();
  u.nonzero_memory_bytes -= pod.nonzero_memory_request_bytes();
  if (pod.has_scored_affinity()) --scored_affinity_pods_;
  u.pods -= 1;
  if (sharing_[n] == 0 && out.shared_replicas.empty() && out.mig.empty()) {
    for (int32_t g : out.gpus) {
      gpu_free_[gpu_offset_[n] + static_cast<size_t>(g)] += pod.gpu_milli;
      u.gpu_free_total_milli += pod.gpu_milli;
      gpu_used_milli_ -= pod.gpu_milli;
    }
  } else {
    apply_devices(n, pod, out.gpus, out.shared_replicas, out.mig, -1);
  }
  if (pod.gpu_memory_share) apply_memory_share(n, pod, out.gpus, -1);
  if (int k = kind_index(pod); k >= 0) --u.gpu_pod_kinds[static_cast<size_t>(k)];
  if (!out.claims.empty()) apply_claims(out.claims, -1);
  touch(n);
  return out;
}

}  // namespace gpufleet
