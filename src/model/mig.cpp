#include "model/mig.h"

#include <algorithm>
#include <stdexcept>

namespace gpufleet {
namespace {

unsigned interval_mask(int start, int width) { return ((1u << width) - 1u) << start; }

// What the instances already on a GPU take, for the rules in mig.h.
struct Occupancy {
  unsigned memory_mask = 0;  // rule 2
  int compute = 0;           // rule 3
  int media = 0;             // rule 4
  int total = 0;             // rule 5
};

Occupancy occupancy_of(const GpuModelInfo& model, const std::vector<MigInstance>& instances) {
  Occupancy o;
  for (const MigInstance& i : instances) {
    const MigProfile* p = model.find_mig_profile(i.profile);
    if (p == nullptr) continue;  // cannot happen: only known profiles are placed
    o.memory_mask |= interval_mask(i.start, p->memory_slices);
    o.compute += p->compute_slices;
    o.media += p->media_extensions ? 1 : 0;
    o.total += 1;
  }
  return o;
}

// Rules 1-5 of mig.h for one more instance of `p` at `start`; `same_profile` = instances of p present.
bool fits(const MigProfile& p, int start, const Occupancy& o, int same_profile) {
  // Rule 1: an allowed start (gpu-sharing.md s.1 "{allowed starts}:size" from nvidia-smi mig -lgipp).
  if (std::find(p.starts.begin(), p.starts.end(), start) == p.starts.end()) return false;
  if (start < 0 || start + p.memory_slices > kMigMemorySlices) return false;
  // Rule 2: memory intervals may not overlap.
  if ((o.memory_mask & interval_mask(start, p.memory_slices)) != 0) return false;
  // Rule 3: sum of compute slices <= 7.
  if (o.compute + p.compute_slices > kMigComputeSlices) return false;
  // Rule 4: +me profiles take the media engines, at most one per GPU.
  if (p.media_extensions && o.media >= 1) return false;
  // Rule 5: per-profile and per-GPU instance limits ([mig-doc] "Supported GPUs": 7 per GPU).
  if (same_profile >= p.max_count || o.total >= kMigMaxInstances) return false;
  return true;
}

int count_profile(const std::vector<MigInstance>& instances, std::string_view profile) {
  return static_cast<int>(std::count_if(instances.begin(), instances.end(),
                                        [&](const MigInstance& i) { return i.profile == profile; }));
}

std::optional<int> lowest_start(const GpuModelInfo& model, const std::vector<MigInstance>& instances,
                                std::string_view profile) {
  const MigProfile* p = model.find_mig_profile(profile);
  if (p == nullptr) return std::nullopt;
  const Occupancy o = occupancy_of(model, instances);
  const int same = count_profile(instances, profile);
  for (int start : p->starts)  // ascending
    if (fits(*p, start, o, same)) return start;
  return std::nullopt;
}

void insert_sorted(std::vector<MigInstance>& instances, MigInstance instance) {
  const auto at = std::find_if(instances.begin(), instances.end(),
                               [&](const MigInstance& i) { return i.start > instance.start; });
  instances.insert(at, std::move(instance));
}

// Depth-first search for layout_for_counts: places wanted[index..] on top of `o`.
struct Search {
  const std::vector<const MigProfile*>& wanted;  // largest first; equal profiles adjacent
  std::vector<int> starts;                       // chosen start per wanted entry
  std::vector<int> placed_of_profile;            // per wanted entry: earlier entries of the same profile

  bool run(size_t index, const Occupancy& o) {
    if (index == wanted.size()) return true;
    const MigProfile& p = *wanted[index];
    // Identical instances are interchangeable: place them at increasing starts only.
    const bool same_as_previous = index > 0 && wanted[index - 1] == &p;
    const int min_start = same_as_previous ? starts[index - 1] + 1 : 0;
    for (int start : p.starts) {
      if (start < min_start || !fits(p, start, o, placed_of_profile[index])) continue;
      Occupancy next = o;
      next.memory_mask |= interval_mask(start, p.memory_slices);
      next.compute += p.compute_slices;
      next.media += p.media_extensions ? 1 : 0;
      next.total += 1;
      starts[index] = start;
      if (run(index + 1, next)) return true;
    }
    return false;
  }
};

}  // namespace

bool MigLayout::can_place(std::string_view profile) const {
  return lowest_start(*model_, instances_, profile).has_value();
}

std::optional<int> MigLayout::place(std::string_view profile) {
  const std::optional<int> start = lowest_start(*model_, instances_, profile);
  if (start) insert_sorted(instances_, MigInstance{std::string(profile), *start});
  return start;
}

bool MigLayout::can_place_at(std::string_view profile, int start) const {
  const MigProfile* p = model_->find_mig_profile(profile);
  return p != nullptr && fits(*p, start, occupancy_of(*model_, instances_), count_profile(instances_, profile));
}

bool MigLayout::place_at(std::string_view profile, int start) {
  if (!can_place_at(profile, start)) return false;
  insert_sorted(instances_, MigInstance{std::string(profile), start});
  return true;
}

bool MigLayout::remove(int start) {
  const auto it =
      std::find_if(instances_.begin(), instances_.end(), [&](const MigInstance& i) { return i.start == start; });
  if (it == instances_.end()) return false;
  instances_.erase(it);
  return true;
}

int MigLayout::used_compute_slices() const { return occupancy_of(*model_, instances_).compute; }

unsigned MigLayout::used_memory_mask() const { return occupancy_of(*model_, instances_).memory_mask; }

std::optional<std::vector<MigInstance>> layout_for_counts(const GpuModelInfo& model,
                                                          const std::map<std::string, int>& counts) {
  std::vector<const MigProfile*> wanted;
  int total = 0;
  for (const auto& [name, count] : counts) {
    if (count < 0)
      throw std::invalid_argument("mig-devices: negative count " + std::to_string(count) + " for profile \"" + name +
                                  "\"");
    if (count == 0) continue;
    const MigProfile* p = model.find_mig_profile(name);
    if (p == nullptr) return std::nullopt;  // not a profile of this model (or the model has no MIG)
    total += std::min(count, kMigMaxInstances + 1);
    if (total > kMigMaxInstances) return std::nullopt;  // rule 5
    for (int i = 0; i < count; ++i) wanted.push_back(p);
  }
  // Larger profiles first: they have the fewest allowed starts, so dead ends show up early.
  // Ties keep the catalog's profile order, which keeps equal profiles adjacent and the result stable.
  auto rank = [&](const MigProfile* p) { return p - model.mig_profiles.data(); };
  std::stable_sort(wanted.begin(), wanted.end(), [&](const MigProfile* a, const MigProfile* b) {
    if (a->memory_slices != b->memory_slices) return a->memory_slices > b->memory_slices;
    if (a->compute_slices != b->compute_slices) return a->compute_slices > b->compute_slices;
    return rank(a) < rank(b);
  });

  Search search{wanted, std::vector<int>(wanted.size(), 0), std::vector<int>(wanted.size(), 0)};
  for (size_t i = 1; i < wanted.size(); ++i)
    if (wanted[i] == wanted[i - 1]) search.placed_of_profile[i] = search.placed_of_profile[i - 1] + 1;
  if (!search.run(0, Occupancy{})) return std::nullopt;

  std::vector<MigInstance> layout;
  layout.reserve(wanted.size());
  for (size_t i = 0; i < wanted.size(); ++i) insert_sorted(layout, MigInstance{wanted[i]->name, search.starts[i]});
  return layout;
}

}  // namespace gpufleet
