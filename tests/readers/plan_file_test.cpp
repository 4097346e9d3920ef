// The plan file reader (readers/plan/plan_file.h): the price catalog and the constraints read to
// exact values with their origins, the defaults, the errors with their positions, the limits, the
// warnings, the examples, and the fuzz seeds replayed (fuzz/corpus/plan_file_fuzz: valid seeds parse,
// bad-* ones are InputErrors).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/expect_input_error.h"
#include "readers/plan/plan_file.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using plan::Commitment;
using testing::expect_input_error;

constexpr int64_t kGi = int64_t{1} << 30;

// docs/plan.md's example, with a second instance type (so that L4 is in the catalog) and a second zone.
constexpr const char* kFull = R"(apiVersion: plan.gpufleet.io/v1
kind: PriceCatalog
instanceTypes:
- name: p4d.24xlarge
  gpu: {model: A100-40GB, count: 8}
  cpu: 95690m
  memory: 1100Gi
  offerings:
  - zone: us-east-1a
    onDemand: 32.77
    spot: 13.11
    spotInterruptionsPerNodeHour: 0.0002
    reserved1y: 20.1
    reserved3y: 12.9
    capacityBlock: 14.75
  - zone: us-east-1b
    onDemand: 32.77
- name: g6.xlarge
  gpu: {model: l4, count: 1}
  cpu: "4"
  memory: 16Gi
  offerings:
  - {zone: us-east-1a, onDemand: 0.8048}
---
apiVersion: plan.gpufleet.io/v1
kind: PlanConstraints
slo:
  productionP99PendingSeconds: 30
maxSpotShare: 0.5
allowedGpuModels: [A100-40GB, L4]
zones: [us-east-1a]
commitments: [reserved1y, capacityBlock]
allowFp8: true
budgetUsd: 50000
)";

const std::string kCatalogHead = "apiVersion: plan.gpufleet.io/v1\nkind: PriceCatalog\ninstanceTypes:\n";
const std::string kConstraintsHead = "apiVersion: plan.gpufleet.io/v1\nkind: PlanConstraints\n";

// One instance type (lines 4-8), its offerings from line 9 on.
std::string type(const std::string& name = "g6.xlarge", const std::string& gpu = "{model: L4, count: 1}",
                 const std::string& cpu = "3920m") {
  return "- name: " + name + "\n  gpu: " + gpu + "\n  cpu: " + cpu + "\n  memory: 13Gi\n  offerings:\n";
}

// A catalog of one g6.xlarge whose only offering (line 9, from column 5) is `offering`.
std::string with_offering(const std::string& offering) { return kCatalogHead + type() + "  - " + offering + "\n"; }

const std::string kOneType = with_offering("{zone: us-east-1a, onDemand: 0.8048}");  // 9 lines

PlanFile parse(const std::string& text) { return parse_plan_text(text, "p.yaml"); }

void expect_origin(const sim::FieldOrigin& o, int line, int column, const std::string& field) {
  EXPECT_EQ(o.file, "p.yaml");
  EXPECT_EQ(o.line, line) << field;
  EXPECT_EQ(o.column, column) << field;
  EXPECT_EQ(o.field, field);
}

std::filesystem::path corpus() { return std::filesystem::path(GPUFLEET_SOURCE_DIR) / "fuzz" / "corpus" / "plan_file_fuzz"; }

TEST(PlanFileReader, ReadsTheFullExample) {
  const PlanFile f = parse(kFull);
  ASSERT_TRUE(f.has_catalog);
  ASSERT_TRUE(f.has_constraints);
  EXPECT_TRUE(f.warnings.empty());
  EXPECT_EQ(f.catalog.source, "p.yaml");
  ASSERT_EQ(f.catalog.instance_types.size(), 2u);

  const plan::InstanceType& p4d = f.catalog.instance_types[0];
  EXPECT_EQ(p4d.name, "p4d.24xlarge");
  EXPECT_EQ(p4d.gpu_model, "A100-40GB");
  EXPECT_EQ(p4d.gpus, 8);
  EXPECT_EQ(p4d.cpu_milli, 95690);
  EXPECT_EQ(p4d.memory_bytes, 1100 * kGi);
  expect_origin(p4d.origin, 4, 9, "instanceTypes[0].name");
  ASSERT_EQ(p4d.offerings.size(), 2u);
  const plan::Offering& a = p4d.offerings[0];
  EXPECT_EQ(a.zone, "us-east-1a");
  EXPECT_DOUBLE_EQ(a.on_demand_usd_per_hour, 32.77);
  EXPECT_EQ(a.spot_usd_per_hour, 13.11);
  EXPECT_DOUBLE_EQ(a.spot_interruptions_per_hour, 0.0002);
  EXPECT_EQ(a.reserved_1y_usd_per_hour, 20.1);
  EXPECT_EQ(a.reserved_3y_usd_per_hour, 12.9);
  EXPECT_EQ(a.capacity_block_usd_per_hour, 14.75);
  EXPECT_EQ(a.commitment_usd_per_hour(Commitment::kReserved3y), 12.9);
  expect_origin(a.origin, 9, 11, "instanceTypes[0].offerings[0].zone");
  const plan::Offering& b = p4d.offerings[1];
  EXPECT_EQ(b.zone, "us-east-1b");
  EXPECT_DOUBLE_EQ(b.on_demand_usd_per_hour, 32.77);
  EXPECT_FALSE(b.spot_usd_per_hour);
  EXPECT_DOUBLE_EQ(b.spot_interruptions_per_hour, 0);
  EXPECT_FALSE(b.reserved_1y_usd_per_hour);
  EXPECT_FALSE(b.reserved_3y_usd_per_hour);
  EXPECT_FALSE(b.capacity_block_usd_per_hour);
  expect_origin(b.origin, 16, 11, "instanceTypes[0].offerings[1].zone");

  const plan::InstanceType& g6 = f.catalog.instance_types[1];
  EXPECT_EQ(g6.name, "g6.xlarge");
  EXPECT_EQ(g6.gpu_model, "L4");  // "l4" canonicalised, as node pools do
  EXPECT_EQ(g6.gpus, 1);
  EXPECT_EQ(g6.cpu_milli, 4000);
  EXPECT_EQ(g6.memory_bytes, 16 * kGi);
  expect_origin(g6.origin, 18, 9, "instanceTypes[1].name");
  ASSERT_EQ(g6.offerings.size(), 1u);
  EXPECT_DOUBLE_EQ(g6.offerings[0].on_demand_usd_per_hour, 0.8048);
  expect_origin(g6.offerings[0].origin, 23, 12, "instanceTypes[1].offerings[0].zone");

  const plan::PlanConstraints& c = f.constraints;
  EXPECT_EQ(c.production_p99_pending_s, 30);
  expect_origin(c.production_p99_pending_origin, 28, 32, "slo.productionP99PendingSeconds");
  EXPECT_DOUBLE_EQ(c.max_spot_share, 0.5);
  expect_origin(c.max_spot_share_origin, 29, 15, "maxSpotShare");
  EXPECT_EQ(c.allowed_gpu_models, (std::vector<std::string>{"A100-40GB", "L4"}));
  EXPECT_EQ(c.allowed_zones, (std::vector<std::string>{"us-east-1a"}));
  EXPECT_EQ(c.allowed_commitments, (std::vector<Commitment>{Commitment::kReserved1y, Commitment::kCapacityBlock}));
  EXPECT_TRUE(c.allow_fp8);
  EXPECT_EQ(c.budget_usd, 50000);
  expect_origin(c.budget_origin, 34, 12, "budgetUsd");
  expect_origin(c.origin, 25, 1, "");
}

TEST(PlanFileReader, ConstraintsDefaultAndDocumentsStandAlone) {
  const PlanFile only = parse(kConstraintsHead);
  EXPECT_FALSE(only.has_catalog);
  ASSERT_TRUE(only.has_constraints);
  const plan::PlanConstraints& c = only.constraints;
  EXPECT_EQ(c.production_p99_pending_s, 60);
  EXPECT_FALSE(c.production_p99_pending_origin.known());
  EXPECT_DOUBLE_EQ(c.max_spot_share, 1);
  EXPECT_TRUE(c.allowed_gpu_models.empty());
  EXPECT_TRUE(c.allowed_zones.empty());
  EXPECT_EQ(c.allowed_commitments.size(), 3u);
  EXPECT_FALSE(c.allow_fp8);
  EXPECT_FALSE(c.budget_usd);
  expect_origin(c.origin, 1, 1, "");
  // Without a catalog in the file, models and zones are not checked against one.
  const PlanFile unchecked = parse(kConstraintsHead + "allowedGpuModels: [T4]\nzones: [eu-west-1a]\ncommitments: []\n");
  EXPECT_EQ(unchecked.constraints.allowed_zones, (std::vector<std::string>{"eu-west-1a"}));
  EXPECT_TRUE(unchecked.constraints.allowed_commitments.empty());  // [] allows none
  const PlanFile catalog = parse(kOneType);
  EXPECT_TRUE(catalog.has_catalog);
  EXPECT_FALSE(catalog.has_constraints);
  // The documents in either order.
  const PlanFile both = parse(kConstraintsHead + "zones: [us-east-1a]\n---\n" + kOneType);
  EXPECT_TRUE(both.has_catalog && both.has_constraints);
}

TEST(PlanFileReader, CatalogErrorsNameTheField) {
  const std::string o = "instanceTypes[0].offerings[0].";
  expect_input_error([&] { parse(with_offering("{zone: us-east-1a, onDemand: 1, spott: 0.5}")); }, "p.yaml", 9, 37, o + "spott",
                     "unknown key 'spott': did you mean 'spot'?");
  expect_input_error([&] { parse(with_offering("{zone: us-east-1a, onDemand: 1, price: 0.5}")); }, "p.yaml", 9, 37, o + "price",
                     "unknown key 'price' (expected zone, onDemand, spot, spotInterruptionsPerNodeHour, reserved1y, reserved3y, "
                     "capacityBlock)");
  expect_input_error([&] { parse(with_offering("{zone: us-east-1a, onDemand: 1, spot: 2}")); }, "p.yaml", 9, 43, o + "spot",
                     "spot 2 is above onDemand 1");
  expect_input_error([&] { parse(with_offering("{zone: us-east-1a, onDemand: 1, reserved1y: 1.5}")); }, "p.yaml", 9, 49,
                     o + "reserved1y", "reserved1y 1.5 is above onDemand 1");
  expect_input_error([&] { parse(with_offering("{zone: us-east-1a, onDemand: 1, reserved3y: 1.5}")); }, "p.yaml", 9, 49,
                     o + "reserved3y", "reserved3y 1.5 is above onDemand 1");
  expect_input_error([&] { parse(with_offering("{zone: us-east-1a, onDemand: 1, capacityBlock: 3}")); }, "p.yaml", 9, 52,
                     o + "capacityBlock", "capacityBlock 3 is above onDemand 1");
  expect_input_error([&] { parse(with_offering("{zone: us-east-1a, onDemand: 1, spotInterruptionsPerNodeHour: 0.1}")); }, "p.yaml", 9,
                     37, o + "spotInterruptionsPerNodeHour", "spotInterruptionsPerNodeHour needs a spot price in the same offering");
  expect_input_error([&] { parse(with_offering("{zone: us-east-1a, onDemand: 1, spot: 0.5, spotInterruptionsPerNodeHour: 61}")); },
                     "p.yaml", 9, 78, o + "spotInterruptionsPerNodeHour", "61 is above the maximum of 60 per node-hour");
  expect_input_error([&] { parse(with_offering("{zone: us-east-1a, onDemand: 1, spot: 0.5, spotInterruptionsPerNodeHour: -1}")); },
                     "p.yaml", 9, 78, o + "spotInterruptionsPerNodeHour", "-1 is negative");
  // Non-finite and non-positive prices.
  expect_input_error([&] { parse(with_offering("{zone: us-east-1a, onDemand: .inf}")); }, "p.yaml", 9, 34, o + "onDemand",
                     "'.inf' is not a number");
  expect_input_error([&] { parse(with_offering("{zone: us-east-1a, onDemand: nan}")); }, "p.yaml", 9, 34, o + "onDemand",
                     "'nan' is not a number");
  expect_input_error([&] { parse(with_offering("{zone: us-east-1a, onDemand: 1e400}")); }, "p.yaml", 9, 34, o + "onDemand",
                     "'1e400' is not a number");
  expect_input_error([&] { parse(with_offering("{zone: us-east-1a, onDemand: 0}")); }, "p.yaml", 9, 34, o + "onDemand",
                     "0 must be positive");
  expect_input_error([&] { parse(with_offering("{zone: us-east-1a, onDemand: 1, spot: -0.1}")); }, "p.yaml", 9, 43, o + "spot",
                     "-0.1 must be positive");
  expect_input_error([&] { parse(with_offering("{zone: us-east-1a, onDemand: 2e6}")); }, "p.yaml", 9, 34, o + "onDemand",
                     "2e6 is above the maximum of 1e+06 USD per node-hour");
  expect_input_error([&] { parse(with_offering("{zone: us-east-1a}")); }, "p.yaml", 9, 5, o + "onDemand", "required field is missing");
  expect_input_error([&] { parse(with_offering("{onDemand: 1}")); }, "p.yaml", 9, 5, o + "zone", "required field is missing");
  // Duplicates: a zone within one type, an instance type name.
  expect_input_error([&] { parse(kOneType + "  - {zone: us-east-1a, onDemand: 1}\n"); }, "p.yaml", 10, 12,
                     "instanceTypes[0].offerings[1].zone", "zone 'us-east-1a' is listed twice for this instance type (first at line 9)");
  expect_input_error([&] { parse(kOneType + type() + "  - {zone: us-east-1a, onDemand: 1}\n"); }, "p.yaml", 10, 9,
                     "instanceTypes[1].name", "instance type 'g6.xlarge' is listed twice (first at line 4)");
  // The same zone in two types is fine.
  EXPECT_NO_THROW(parse(kOneType + type("g6.2xlarge") + "  - {zone: us-east-1a, onDemand: 1}\n"));
  // Empty catalog, a type without offerings.
  expect_input_error([&] { parse("apiVersion: plan.gpufleet.io/v1\nkind: PriceCatalog\ninstanceTypes: []\n"); }, "p.yaml", 3, 16,
                     "instanceTypes", "the catalog has no instance types");
  expect_input_error([&] { parse("apiVersion: plan.gpufleet.io/v1\nkind: PriceCatalog\n"); }, "p.yaml", 1, 1, "instanceTypes",
                     "required field is missing");
  expect_input_error([&] { parse(kCatalogHead + type() + "  - {zone: us-east-1a, onDemand: 1}\n" + "- name: t4\n  gpu: {model: T4, count: 1}\n  cpu: 1\n  memory: 1Gi\n  offerings: []\n"); },
                     "p.yaml", 14, 14, "instanceTypes[1].offerings", "instance type t4 has no offerings");
  // The instance type's own fields.
  expect_input_error([&] { parse(kCatalogHead + type("g6.xlarge", "{model: Z100, count: 1}") + "  - {zone: a, onDemand: 1}\n"); },
                     "p.yaml", 5, 16, "instanceTypes[0].gpu.model", "unknown GPU model 'Z100' (known: T4, L4, L40S, A10G, A100-40GB");
  expect_input_error([&] { parse(kCatalogHead + type("g6.xlarge", "{model: L4, count: 17}") + "  - {zone: a, onDemand: 1}\n"); },
                     "p.yaml", 5, 27, "instanceTypes[0].gpu.count", "17 is out of range [1, 16]");
  expect_input_error([&] { parse(kCatalogHead + type("g6.xlarge", "{model: L4, count: 1, memory: 24Gi}") + "  - {zone: a, onDemand: 1}\n"); },
                     "p.yaml", 5, 30, "instanceTypes[0].gpu.memory", "unknown key 'memory' (expected model, count)");
  expect_input_error([&] { parse(kCatalogHead + type("g6.xlarge", "{model: L4, count: 1}", "0") + "  - {zone: a, onDemand: 1}\n"); },
                     "p.yaml", 6, 8, "instanceTypes[0].cpu", "must be positive");
  expect_input_error([&] { parse(kCatalogHead + type("g6.xlarge", "{model: L4, count: 1}", "four") + "  - {zone: a, onDemand: 1}\n"); },
                     "p.yaml", 6, 8, "instanceTypes[0].cpu", "'four' is not a valid quantity");
  expect_input_error([&] { parse(kCatalogHead + type("G6.xlarge") + "  - {zone: a, onDemand: 1}\n"); }, "p.yaml", 4, 9,
                     "instanceTypes[0].name", "'G6.xlarge' is not an instance type name");
  expect_input_error([&] { parse(kCatalogHead + "- {name: g6.xlarge, gpus: 1}\n"); }, "p.yaml", 4, 21, "instanceTypes[0].gpus",
                     "unknown key 'gpus': did you mean 'gpu'?");
  // No gpu: a CPU-only type, which still needs its memory.
  expect_input_error([&] { parse(kCatalogHead + "- {name: c7i.large, cpu: 1}\n"); }, "p.yaml", 4, 3, "instanceTypes[0].memory",
                     "required field is missing");
  expect_input_error([&] { parse(kCatalogHead + type("g6.xlarge", "{count: 1}") + "  - {zone: a, onDemand: 1}\n"); }, "p.yaml", 5, 8,
                     "instanceTypes[0].gpu.model", "required field is missing");
  // A blank gpu is an error, not a CPU-only type.
  for (const char* blank : {"", "~", "null"})
    expect_input_error([&] { parse(kCatalogHead + type("g6.xlarge", blank) + "  - {zone: a, onDemand: 1}\n"); }, "p.yaml", 5,
                       std::string(blank).empty() ? 7 : 8, "instanceTypes[0].gpu", "has no value");
}

TEST(PlanFileReader, ACpuOnlyTypeHasNoGpus) {
  const PlanFile f = parse(kCatalogHead + "- {name: c7i.large, cpu: 1900m, memory: 3Gi, offerings: [{zone: a, onDemand: 0.08925}]}\n");
  ASSERT_EQ(f.catalog.instance_types.size(), 1u);
  EXPECT_EQ(f.catalog.instance_types[0].gpus, 0);
  EXPECT_EQ(f.catalog.instance_types[0].gpu_model, "");
  EXPECT_EQ(f.catalog.instance_types[0].cpu_milli, 1900);
}

TEST(PlanFileReader, ConstraintErrorsNameTheField) {
  expect_input_error([] { parse(kConstraintsHead + "maxSpotShares: 0.5\n"); }, "p.yaml", 3, 1, "maxSpotShares",
                     "unknown key 'maxSpotShares': did you mean 'maxSpotShare'?");
  expect_input_error([] { parse(kConstraintsHead + "minGpuAllocation: 0\n"); }, "p.yaml", 3, 19, "minGpuAllocation",
                     "0 is outside (0, 1]");
  expect_input_error([] { parse(kConstraintsHead + "minGpuAllocation: 1.5\n"); }, "p.yaml", 3, 19, "minGpuAllocation",
                     "1.5 is outside (0, 1]");
  EXPECT_DOUBLE_EQ(*parse(kConstraintsHead + "minGpuAllocation: 0.85\n").constraints.min_gpu_allocation, 0.85);
  expect_input_error([] { parse(kConstraintsHead + "spotShare: 0.5\n"); }, "p.yaml", 3, 1, "spotShare",
                     "unknown key 'spotShare' (expected apiVersion, kind, metadata, slo, maxSpotShare, allowedGpuModels, zones, "
                     "commitments, allowFp8, budgetUsd, minGpuAllocation)");
  expect_input_error([] { parse(kConstraintsHead + "maxSpotShare: 1.5\n"); }, "p.yaml", 3, 15, "maxSpotShare", "1.5 is outside [0, 1]");
  expect_input_error([] { parse(kConstraintsHead + "slo: {productionP99PendingSeconds: -1}\n"); }, "p.yaml", 3, 36,
                     "slo.productionP99PendingSeconds", "-1 is negative");
  expect_input_error([] { parse(kConstraintsHead + "slo: {p99: 1}\n"); }, "p.yaml", 3, 7, "slo.p99",
                     "unknown key 'p99' (expected productionP99PendingSeconds)");
  expect_input_error([] { parse(kConstraintsHead + "commitments: [reserved2y]\n"); }, "p.yaml", 3, 15, "commitments[0]",
                     "unknown commitment 'reserved2y' (expected reserved1y, reserved3y, capacityBlock)");
  expect_input_error([] { parse(kConstraintsHead + "commitments: [reserved1y, reserved1y]\n"); }, "p.yaml", 3, 27, "commitments[1]",
                     "'reserved1y' is listed twice (first at [0])");
  expect_input_error([] { parse(kConstraintsHead + "allowedGpuModels: []\n"); }, "p.yaml", 3, 19, "allowedGpuModels",
                     "an empty list allows nothing: leave the key out to allow everything");
  expect_input_error([] { parse(kConstraintsHead + "allowedGpuModels: [L4, l4]\n"); }, "p.yaml", 3, 24, "allowedGpuModels[1]",
                     "'L4' is listed twice (first at [0])");
  expect_input_error([] { parse(kConstraintsHead + "allowedGpuModels: [V100]\n"); }, "p.yaml", 3, 20, "allowedGpuModels[0]",
                     "unknown GPU model 'V100'");
  expect_input_error([] { parse(kConstraintsHead + "allowedGpuModels: L4\n"); }, "p.yaml", 3, 19, "allowedGpuModels",
                     "expected a list, got a scalar");
  expect_input_error([] { parse(kConstraintsHead + "zones: [a, a]\n"); }, "p.yaml", 3, 12, "zones[1]", "'a' is listed twice (first at [0])");
  expect_input_error([] { parse(kConstraintsHead + "budgetUsd: 0\n"); }, "p.yaml", 3, 12, "budgetUsd", "0 must be positive");
  expect_input_error([] { parse(kConstraintsHead + "budgetUsd: .nan\n"); }, "p.yaml", 3, 12, "budgetUsd", "'.nan' is not a number");
  expect_input_error([] { parse(kConstraintsHead + "allowFp8: maybe\n"); }, "p.yaml", 3, 11, "allowFp8", "'maybe' is not a boolean");
}

TEST(PlanFileReader, ConstraintsNameOnlyWhatTheCatalogHas) {
  // kOneType is lines 1-9 (g6.xlarge, L4, us-east-1a); "---" line 10; the constraints from line 11.
  expect_input_error([] { parse(kOneType + "---\n" + kConstraintsHead + "allowedGpuModels: [L4, T4]\n"); }, "p.yaml", 13, 24,
                     "allowedGpuModels[1]", "GPU model 'T4' is not the GPU of any instance type of the catalog (its models: L4)");
  expect_input_error([] { parse(kOneType + "---\n" + kConstraintsHead + "zones: [us-east-1b]\n"); }, "p.yaml", 13, 9, "zones[0]",
                     "zone 'us-east-1b' is in no offering of the catalog (its zones: us-east-1a)");
  // Constraints first: checked all the same, at the constraints' positions.
  expect_input_error([] { parse(kConstraintsHead + "zones: [us-east-1b]\n---\n" + kOneType); }, "p.yaml", 3, 9, "zones[0]",
                     "zone 'us-east-1b' is in no offering of the catalog");
}

TEST(PlanFileReader, DocumentsOfOtherKindsAreRefused) {
  expect_input_error([] { parse("apiVersion: v1\nkind: ConfigMap\n"); }, "p.yaml", 2, 7, "kind",
                     "kind 'ConfigMap' (v1) is not read from a plan file (expected PriceCatalog or PlanConstraints, plan.gpufleet.io/v1)");
  expect_input_error([] { parse(kOneType + "---\napiVersion: sim.gpufleet.io/v1\nkind: Workload\n"); }, "p.yaml", 12, 7, "kind",
                     "kind 'Workload' (sim.gpufleet.io/v1) is not read from a plan file");
  expect_input_error([] { parse("apiVersion: plan.gpufleet.io/v1\nkind: Plan\n"); }, "p.yaml", 2, 7, "kind",
                     "kind 'Plan' (plan.gpufleet.io/v1) is not read from a plan file");
  expect_input_error([] { parse("apiVersion: plan.gpufleet.io/v1\nspec: {}\n"); }, "p.yaml", 1, 1, "kind",
                     "a document without kind in a plan file");
  expect_input_error([] { parse("apiVersion: plan.gpufleet.io/v2\nkind: PriceCatalog\n"); }, "p.yaml", 1, 13, "apiVersion",
                     "apiVersion 'plan.gpufleet.io/v2' is not supported for kind PriceCatalog (expected plan.gpufleet.io/v1)");
  expect_input_error([] { parse("kind: PlanConstraints\n"); }, "p.yaml", 1, 7, "kind",
                     "kind PlanConstraints needs apiVersion plan.gpufleet.io/v1 (apiVersion is missing)");
  expect_input_error([] { parse("- a list\n"); }, "p.yaml", 1, 1, "", "expected a mapping, got a list");
  expect_input_error([] { parse(kOneType + "---\n" + kOneType); }, "p.yaml", 12, 7, "kind", "a second PriceCatalog document (one per file)");
  expect_input_error([] { parse(kConstraintsHead + "---\n" + kConstraintsHead); }, "p.yaml", 5, 7, "kind",
                     "a second PlanConstraints document (one per file)");
  expect_input_error([] { parse("# nothing\n---\n"); }, "p.yaml", 0, 0, "kind",
                     "the file is empty: expected a PriceCatalog or a PlanConstraints (plan.gpufleet.io/v1)");
  expect_input_error([] { read_plan_file("/nonexistent/plan.yaml"); }, "/nonexistent/plan.yaml", 0, 0, "", "");
}

TEST(PlanFileReader, Warnings) {
  // A spot price without an interruption rate.
  const PlanFile spot = parse(with_offering("{zone: us-east-1a, onDemand: 1, spot: 0.4}"));
  EXPECT_EQ(spot.warnings, (std::vector<std::string>{
                               "p.yaml:9:43: field 'instanceTypes[0].offerings[0].spot': no spotInterruptionsPerNodeHour: spot g6.xlarge "
                               "nodes in us-east-1a are taken never to be interrupted"}));
  // An allowed GPU model without an offering in the allowed zones (L4 only in us-east-1a, T4 in us-east-1b).
  const std::string catalog = kOneType + "- name: g4dn.xlarge\n  gpu: {model: T4, count: 1}\n  cpu: 3920m\n  memory: 13Gi\n  offerings:\n" +
                              "  - {zone: us-east-1b, onDemand: 0.526}\n";
  const PlanFile zones = parse(catalog + "---\n" + kConstraintsHead + "allowedGpuModels: [T4, L4]\nzones: [us-east-1b]\n");
  EXPECT_EQ(zones.warnings,
            (std::vector<std::string>{"p.yaml:19:24: field 'allowedGpuModels[1]': GPU model 'L4' has no offering in the allowed zones "
                                      "(us-east-1b): the plan cannot buy it"}));
  EXPECT_TRUE(parse(catalog + "---\n" + kConstraintsHead + "allowedGpuModels: [T4]\nzones: [us-east-1b]\n").warnings.empty());
}

TEST(PlanFileReader, EntriesAreBounded) {
  std::string types = kCatalogHead;
  for (size_t i = 0; i <= kMaxInstanceTypes; ++i)
    types += "- {name: t" + std::to_string(i) + ", gpu: {model: L4, count: 1}, cpu: 1, memory: 1Gi, offerings: [{zone: a, onDemand: 1}]}\n";
  expect_input_error([&] { parse(types); }, "p.yaml", 4, 1, "instanceTypes",
                     "more than 1000 instance types (limit kMaxInstanceTypes, docs/input-limits.md)");
  std::string offerings = kCatalogHead + type();
  for (size_t i = 0; i <= kMaxOfferingsPerType; ++i) offerings += "  - {zone: z" + std::to_string(i) + ", onDemand: 1}\n";
  expect_input_error([&] { parse(offerings); }, "p.yaml", 9, 3, "instanceTypes[0].offerings",
                     "more than 64 offerings in one instance type (limit kMaxOfferingsPerType, docs/input-limits.md)");
}

TEST(PlanFileReader, InstanceTypesThatNameOnePoolAreRefused) {
  const std::string text =
      "apiVersion: plan.gpufleet.io/v1\nkind: PriceCatalog\ninstanceTypes:\n"
      "- name: g4dn.xlarge\n  gpu: {model: T4, count: 1}\n  cpu: 3920m\n  memory: 14Gi\n  offerings: [{zone: z, onDemand: 0.5}]\n"
      "- name: g4dn-xlarge\n  gpu: {model: T4, count: 1}\n  cpu: 3920m\n  memory: 14Gi\n  offerings: [{zone: z, onDemand: 0.5}]\n";
  expect_input_error([&] { parse_plan_text(text, "c.yaml"); }, "c.yaml", 9, 9, "instanceTypes[1].name",
                     "instance type 'g4dn-xlarge' and 'g4dn.xlarge' (line 4) would name the same node pool 'g4dn-xlarge'");
}

TEST(PlanFileReader, ExamplesParse) {
  const auto dir = std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples" / "plan";
  const PlanFile catalog = read_plan_file((dir / "catalog.yaml").string());
  ASSERT_TRUE(catalog.has_catalog);
  EXPECT_FALSE(catalog.has_constraints);
  EXPECT_TRUE(catalog.warnings.empty());
  std::vector<std::string> names;
  for (const plan::InstanceType& t : catalog.catalog.instance_types) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"p4d.24xlarge", "p5.48xlarge", "g5.xlarge", "g5.12xlarge", "g5.48xlarge", "g6.xlarge",
                                             "g6.12xlarge", "g6.48xlarge", "g6e.xlarge", "g4dn.xlarge", "g4dn.metal", "g4dn.12xlarge",
                                             "c7i.24xlarge", "c7i.12xlarge", "m7i.24xlarge"}));
  const plan::InstanceType& p4d = catalog.catalog.instance_types[0];
  EXPECT_EQ(p4d.cpu_milli, 95690);
  EXPECT_DOUBLE_EQ(p4d.offerings[0].on_demand_usd_per_hour, 32.77);
  EXPECT_EQ(p4d.offerings[0].capacity_block_usd_per_hour, 14.75);
  const plan::InstanceType& p5 = catalog.catalog.instance_types[1];
  EXPECT_EQ(p5.gpu_model, "H100-80GB");
  EXPECT_EQ(p5.offerings[0].spot_usd_per_hour, 19.66);
  EXPECT_EQ(p5.offerings[0].capacity_block_usd_per_hour, 39.33);
  EXPECT_EQ(catalog.catalog.instance_types[2].offerings.size(), 2u);  // g5.xlarge in us-east-1a and 1b

  const PlanFile constraints = read_plan_file((dir / "constraints.yaml").string());
  ASSERT_TRUE(constraints.has_constraints);
  EXPECT_EQ(constraints.constraints.production_p99_pending_s, 60);
  EXPECT_DOUBLE_EQ(constraints.constraints.max_spot_share, 0.5);
  EXPECT_EQ(constraints.constraints.allowed_commitments, (std::vector<Commitment>{Commitment::kReserved1y, Commitment::kCapacityBlock}));
}

TEST(PlanFileReader, FuzzSeedsReplay) {
  int good = 0, bad = 0;
  for (const auto& e : std::filesystem::directory_iterator(corpus())) {
    const std::string name = e.path().filename().string();
    if (name.rfind("bad-", 0) == 0) {
      EXPECT_THROW(read_plan_file(e.path().string()), InputError) << name;
      ++bad;
    } else {
      EXPECT_NO_THROW(read_plan_file(e.path().string())) << name;
      ++good;
    }
  }
  EXPECT_EQ(good, 2);
  EXPECT_EQ(bad, 3);
}

}  // namespace
}  // namespace gpufleet::io
