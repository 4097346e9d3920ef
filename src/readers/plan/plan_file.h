// Reader for `gpufleet plan`'s price catalog and constraints (inputs/plan/plan_inputs.h). A file holds
// one PriceCatalog document, one PlanConstraints document, or both (`---` separated, any order):
//
//   apiVersion: plan.gpufleet.io/v1
//   kind: PriceCatalog
//   instanceTypes:                     # at least one, at most kMaxInstanceTypes; names unique
//   - name: p4d.24xlarge               # lowercase letters, digits, '-' and '.'; at most 63
//     gpu: {model: A100-40GB, count: 8}   # a GPU catalog model (model/gpu_catalog.h; any case or a
//                                      #   product label, kept canonical); count 1..kMaxGpusPerNode;
//                                      #   no `gpu`: a CPU-only type (for the pods without GPUs)
//     cpu: 95690m                      # allocatable per node, a Kubernetes quantity, > 0
//     memory: 1100Gi                   # allocatable per node, a Kubernetes quantity, > 0
//     offerings:                       # at least one, at most kMaxOfferingsPerType; zones unique
//     - zone: us-east-1a
//       onDemand: 32.77                # USD per node-hour, > 0 (at most kMaxUsdPerNodeHour)
//       spot: 13.11                    # optional; 0 < spot <= onDemand
//       spotInterruptionsPerNodeHour: 0.0002   # optional, only with spot; 0..60; default 0
//       reserved1y: 19.22              # optional, effective hourly; 0 < x <= onDemand
//       reserved3y: 11.57              # optional, the same
//       capacityBlock: 14.75           # optional, the same
//   ---
//   apiVersion: plan.gpufleet.io/v1
//   kind: PlanConstraints              # every key optional
//   slo:
//     productionP99PendingSeconds: 60  # default 60; >= 0
//   maxSpotShare: 0.5                  # share of the GPU-hours billed that may be spot; 0..1, default 1
//   allowedGpuModels: [A100-40GB, L4]  # default: every model; GPU catalog models, not empty, unique
//   zones: [us-east-1a]                # default: every zone; not empty, unique
//   commitments: [reserved1y, capacityBlock]   # default: all three; [] allows none
//   allowFp8: false                    # default false
//   budgetUsd: 50000                   # optional; > 0
//   minGpuAllocation: 0.85             # optional; (0, 1]: kept GPU-hours / GPU-hours billed
//
// `metadata` is accepted (and ignored) in both documents. When the file holds both documents, every
// model of allowedGpuModels must be the GPU of some instance type of the catalog, and every zone of
// zones the zone of some offering. Full description: docs/plan.md, "The price catalog and
// constraints".
//
// Errors throw InputError with file, line, column and field path (e.g.
// "instanceTypes[0].offerings[1].spot"): unknown keys (a likely typo is named, "did you mean 'spot'?"
// (util/edit_distance.h); otherwise the message lists the known keys), a missing
// name, cpu, memory, zone or onDemand, a `gpu` without model or count, an unknown GPU model (the message lists the catalog's), a
// GPU count outside 1..kMaxGpusPerNode, a CPU or memory that is not a positive quantity, an instance
// type name or a zone of one type given twice, an empty catalog or an instance type without
// offerings, prices that are not finite positive numbers or that contradict (spot, reserved1y,
// reserved3y or capacityBlock above onDemand; spotInterruptionsPerNodeHour without spot), an unknown
// commitment, a constraint value outside its range, a list of constraints that is empty (but
// commitments) or names an entry twice, a zone or GPU model in the constraints that the catalog does
// not have (both documents in the file), more instance types or offerings than the limits below, a
// second document of a kind, an empty file, and any document that is not a PriceCatalog or
// PlanConstraints of plan.gpufleet.io/v1 (named by its kind and apiVersion: a plan file holds
// nothing else, so nothing in it is skipped unread).
//
// Warnings (PlanFile::warnings, "file:line:column: field 'f': message"): a spot price without
// spotInterruptionsPerNodeHour (the plan takes those spot nodes to be never interrupted), and, with
// both documents, an allowed GPU model that has no offering in the allowed zones.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "inputs/plan/plan_inputs.h"

namespace gpufleet::io {

/// The apiVersion of both documents.
inline constexpr const char* kPlanApiVersion = "plan.gpufleet.io/v1";
/// The kinds of the two documents.
inline constexpr const char* kPriceCatalogKind = "PriceCatalog";
inline constexpr const char* kPlanConstraintsKind = "PlanConstraints";

/// Most instance types in one catalog (cloud providers list a few hundred GPU instance types in all).
inline constexpr size_t kMaxInstanceTypes = 1000;
/// Most offerings (zones) of one instance type (AWS has about 120 availability zones; one region at most 6).
inline constexpr size_t kMaxOfferingsPerType = 64;
/// The highest price accepted, USD per node-hour: an absurdity guard (the dearest GPU instances cost
/// about 100 USD per hour).
inline constexpr double kMaxUsdPerNodeHour = 1e6;
/// The highest budget accepted, USD: an absurdity guard.
inline constexpr double kMaxBudgetUsd = 1e15;

/// What a plan file holds (see above).
struct PlanFile {
  plan::PriceCatalog catalog;         ///< meaningful when has_catalog; catalog.source is the file
  plan::PlanConstraints constraints;  ///< the defaults when !has_constraints
  bool has_catalog = false;
  bool has_constraints = false;
  /// "file:line:column: field 'f': message": the catalog's in file order, then the constraints'
  std::vector<std::string> warnings;
};

/// Reads the documents of `text`; `source` names it in errors and origins. Throws InputError.
PlanFile parse_plan_text(std::string_view text, const std::string& source);

/// Reads the file at `path` (readers/formats/text_file.h, YamlLimits::max_file_bytes). Throws InputError.
PlanFile read_plan_file(const std::string& path);

}  // namespace gpufleet::io
