// MIG (Multi-Instance GPU) geometry of one GPU: which GPU-instance profiles fit together and where.
// No I/O.
//
// Placement rules (gpu-sharing.md s.1, from the NVIDIA MIG User Guide "Supported MIG Profiles" and
// `nvidia-smi mig -lgipp`):
//  1. An instance of profile P occupies memory slices [start, start + P.memory_slices) on the 8-slice
//     memory axis; `start` must be one of P's allowed starts (GpuModelInfo::mig_profiles).
//  2. Memory intervals of the instances on a GPU may not overlap.
//  3. The compute slices of all instances sum to at most 7 (kMigComputeSlices).
//  4. At most one "+me" (media-extensions) instance per GPU.
//  5. At most P.max_count instances of P and kMigMaxInstances instances in all (implied by 1-4 for
//     the A100-class geometry; checked anyway).
// Consequences: memory slice 7 is reachable only by 1g-large@6, 3g@4 or 7g@0; 7g excludes everything
// else. The model has no other constraint; confirm a layout with `nvidia-smi mig -lgipp` on the
// target driver. A GPU of a model that is not MIG-capable accepts no profile at all.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/gpu_catalog.h"

namespace gpufleet {

/// One MIG GPU instance: its profile name (e.g. "3g.40gb") and start on the memory axis (0..7).
struct MigInstance {
  std::string profile;
  int start = 0;
  bool operator==(const MigInstance&) const = default;
};

/// The MIG instances of one GPU of a given model. Keeps a reference to the model: use catalog entries
/// (gpu_catalog(), find_gpu_model()), which live for the whole program.
class MigLayout {
 public:
  explicit MigLayout(const GpuModelInfo& model) : model_(&model) {}

  const GpuModelInfo& model() const { return *model_; }

  /// Whether place(profile) would succeed. False for a profile the model does not have (including
  /// every profile on a model that is not MIG-capable).
  bool can_place(std::string_view profile) const;
  /// Places an instance of `profile` at the lowest allowed start whose memory slices are free and
  /// that keeps rules 3-5; returns that start, or nullopt (layout unchanged) when none exists.
  std::optional<int> place(std::string_view profile);
  /// Whether `profile` can go exactly at `start` (rules 1-5).
  bool can_place_at(std::string_view profile, int start) const;
  /// Places `profile` exactly at `start`, e.g. to replay a layout read from nvidia-smi. Returns false
  /// (layout unchanged) when can_place_at is false.
  bool place_at(std::string_view profile, int start);
  /// Removes the instance starting at `start`. Returns false (layout unchanged) when there is none.
  bool remove(int start);

  /// The instances, ordered by start.
  const std::vector<MigInstance>& instances() const { return instances_; }
  /// Sum of the instances' compute slices (0..7).
  int used_compute_slices() const;
  /// Bit i set = memory slice i is taken (i in 0..7).
  unsigned used_memory_mask() const;

 private:
  const GpuModelInfo* model_;
  std::vector<MigInstance> instances_;
};

/// Whether a mig-parted `mig-devices` request (profile -> count, e.g. {"3g.40gb": 1, "4g.40gb": 1})
/// fits on one GPU of `model`, and a placement that does (ordered by start). nullopt when it does not
/// fit, when a profile is not one of the model's (so always for a non-MIG model with a non-empty
/// request), or when it asks for more than kMigMaxInstances instances. Entries with count 0 are
/// ignored; an empty request fits (an empty layout). Throws std::invalid_argument for a negative
/// count. Search: instances ordered by profile size (memory slices, then compute slices, descending),
/// each tried at its allowed starts in ascending order, backtracking on a dead end; exhaustive, so
/// nullopt means that no placement exists.
std::optional<std::vector<MigInstance>> layout_for_counts(const GpuModelInfo& model,
                                                          const std::map<std::string, int>& counts);

}  // namespace gpufleet
