// Differential test: `gpufleet place` against a real kube-scheduler.
//
// A seeded generator writes small random clusters and workloads in Kubernetes YAML. Each case is one
// cluster (1 to 4 Nodes, or 2 to 30) and one pod (single-pod cases) or 2 to 6 pods (multi-pod cases). The
// generator draws from everything the two schedulers should agree on:
//  - Nodes: taints (NoSchedule, PreferNoSchedule, NoExecute, the unschedulable taint), spec.unschedulable
//    without the taint, labels (hostname, zone, tier, rank), allocatable cpu in cores and milli-cores,
//    memory at byte level (1000000Ki, 1500M, 977Mi, 191Mi), a pod capacity, nvidia.com/gpu counts;
//  - Pods: requests = limits at byte level (100M, 976Mi, 977Mi, 123456789), GPUs as counts (up to
//    12), an init container, tolerations (Equal, Exists, empty key, the unschedulable taint),
//    nodeSelector, required node affinity with every matchExpressions operator (In, NotIn, Exists,
//    DoesNotExist, Gt, Lt) including values kube cannot parse (Gt ["-1"], Gt ["4.5"],
//    NotIn ["-x"]), preferred node affinity, required and preferred pod anti-affinity and pod
//    affinity on hostname and zone (self-matching or not), containers without cpu or memory
//    requests (kube's non-zero requests when scoring).
// Every case runs through kube-scheduler v1.20 (the FGD authors' simulator, which embeds it and runs
// its default filter plugins over Node and Pod YAML without an API server; see its README) and
// through gpufleet's reader and `place` engine (io::read_place_inputs + place::place_workload, what
// `gpufleet place` runs, with --policy default-scheduler-v1.20, the release the simulator embeds).
// What is compared: whether each pod is schedulable and, when both place it, the node: kube's node
// must be among the nodes gpufleet scored best (Placement::top_nodes; the two break ties
// differently: the simulator patches kube's random choice into the smallest node name). For pod k of
// a multi-pod case, gpufleet sees pods 0..k-1 bound (spec.nodeName) where kube put them, and those
// kube could not place left out (the simulator deletes them), so each pod is compared on the same
// cluster.
//
// All cases go through one simulator run: each case has its own namespace (pod affinity terms
// default to the pod's namespace), its nodes a label gpufleet-case=<case> that its pods select, and
// its zone values prefixed by the case, so no case sees another's nodes or pods.
//
// What the simulator cannot compare (its README): kube v1.20 only; no API-server defaulting (so every
// container writes requests equal to its limits); nvidia.com/gpu is a plain count to it (no GPU
// models, MIG or time-slicing, which gpufleet's own tests check); node names come back prefixed
// ("0001-name"), so matchFields metadata.name terms cannot be compared (gpufleet's NodeAffinity
// tests check them); one attempt per pod, no retry, and pods of equal priority (no preemption is
// generated). Fields v1.20 does not know (sidecar init containers, namespaceSelector, pod overhead)
// are not generated. Reasons are not compared, only schedulability.
//
// Usage: kube_scheduler_diff [--single N] [--multi M] [--seed S] [--simon PATH] [--keep]
//                            [--feasibility-only] [--policy P]
// --feasibility-only compares schedulability alone (any policy would do). --policy: gpufleet's policy
// (default default-scheduler-v1.20; another one shows how far its node choice is from kube's).
// Defaults: 150 single-pod and 30 multi-pod cases, seed 1. The simulator is --simon, else
// $GPUFLEET_KUBE_SCHEDULER_SIM, else ../shared/tools/kube-scheduler-sim/simon beside the source tree;
// without it the run prints why and exits 77 (CTest: skipped). Exit 0 when every pod agrees, 1 when
// some disagree (each printed with its case, and the case files kept), 2 on usage errors.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "readers/k8s/place_inputs.h"
#include "place/place_workload.h"
#include "util/input_error.h"

namespace fs = std::filesystem;

namespace {

// The run's one generator (seeded, passed everywhere); draws are plain modulo of 64-bit outputs, so
// a seed gives the same cases with any standard library.
class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  size_t below(size_t n) { return static_cast<size_t>(g_() % n); }
  bool chance(double p) { return static_cast<double>(g_() % 1'000'000) < p * 1'000'000; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }

 private:
  std::mt19937_64 g_;
};

struct GenPod {
  std::string ns, name, labels;  // labels: YAML flow mapping body, e.g. "app: web"
  std::string spec;              // the spec's lines after nodeName, indented by 2
};

struct GenCase {
  std::string id;
  std::vector<std::string> node_names;
  std::string nodes_yaml;  // every Node, as documents
  std::vector<GenPod> pods;
};

std::string pod_yaml(const GenPod& p, const std::string& node_name) {
  std::string out = fmt::format("apiVersion: v1\nkind: Pod\nmetadata: {{name: {}, namespace: {}, labels: {{{}}}}}\nspec:\n",
                                p.name, p.ns, p.labels);
  if (!node_name.empty()) out += fmt::format("  nodeName: {}\n", node_name);
  return out + p.spec;
}

std::string resources(Rng& rng, bool gpus) {
  static const std::vector<std::string> cpus = {"100m", "500m", "1", "1500m", "2", "3"};
  static const std::vector<std::string> mems = {"100M", "976Mi", "977Mi", "512Mi", "1G", "123456789", "2Gi", "64Mi"};
  static const std::vector<std::string> gpu_counts = {"1", "1", "2", "4", "12"};
  std::vector<std::string> items;
  if (!rng.chance(0.1)) items.push_back("cpu: \"" + rng.pick(cpus) + "\"");
  if (!rng.chance(0.1)) items.push_back("memory: \"" + rng.pick(mems) + "\"");
  if (gpus && rng.chance(0.35)) items.push_back("nvidia.com/gpu: \"" + rng.pick(gpu_counts) + "\"");
  std::string body;
  for (const auto& i : items) body += (body.empty() ? "" : ", ") + i;
  return fmt::format("resources: {{requests: {{{0}}}, limits: {{{0}}}}}", body);
}

std::string requirement(Rng& rng) {
  switch (rng.below(7)) {
    case 0: return fmt::format("{{key: tier, operator: In, values: [{}]}}", rng.pick(std::vector<std::string>{"gold", "silver", "gold, silver", "\"-x\""}));
    case 1: return fmt::format("{{key: tier, operator: NotIn, values: [{}]}}", rng.pick(std::vector<std::string>{"gold", "silver", "\"-x\"", "\"\""}));
    case 2: return fmt::format("{{key: {}, operator: Exists}}", rng.pick(std::vector<std::string>{"tier", "rank"}));
    case 3: return fmt::format("{{key: {}, operator: DoesNotExist}}", rng.pick(std::vector<std::string>{"tier", "rank"}));
    default:
      return fmt::format("{{key: rank, operator: {}, values: [\"{}\"]}}", rng.chance(0.5) ? "Gt" : "Lt",
                         rng.pick(std::vector<std::string>{"3", "5", "7", "0", "-1", "4.5", "+2", "10"}));
  }
}

std::string node_affinity(Rng& rng) {
  std::string terms;
  const size_t n_terms = 1 + rng.below(2);
  for (size_t t = 0; t < n_terms; ++t) {
    std::string exprs;
    const size_t n = 1 + rng.below(2);
    for (size_t e = 0; e < n; ++e) exprs += (e ? ", " : "") + requirement(rng);
    terms += (t ? ", " : "") + fmt::format("{{matchExpressions: [{}]}}", exprs);
  }
  std::string out = fmt::format("    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms: [{}]\n", terms);
  if (rng.chance(0.3))
    out += fmt::format("      preferredDuringSchedulingIgnoredDuringExecution: [{{weight: 10, preference: {{matchExpressions: [{}]}}}}]\n",
                       requirement(rng));
  return out;
}

std::string pod_affinity_term(Rng& rng) {
  return fmt::format("{{labelSelector: {{matchLabels: {{app: {}}}}}, topologyKey: {}}}",
                     rng.pick(std::vector<std::string>{"web", "cache", "db"}),
                     rng.chance(0.5) ? "kubernetes.io/hostname" : "topology.kubernetes.io/zone");
}

GenCase make_case(Rng& rng, const std::string& id, bool multi) {
  GenCase c;
  c.id = id;
  static const std::vector<std::string> cpus = {"1", "2", "4", "3500m", "8", "16"};
  static const std::vector<std::string> mems = {"1000000Ki", "2Gi", "1500M", "977Mi", "4Gi", "191Mi", "8Gi", "16Gi"};
  static const std::vector<std::string> taints = {"{key: dedicated, value: ml, effect: NoSchedule}",
                                                  "{key: spot, value: \"true\", effect: PreferNoSchedule}",
                                                  "{key: maint, effect: NoExecute}",
                                                  "{key: node.kubernetes.io/unschedulable, effect: NoSchedule}"};
  const size_t nodes = rng.chance(0.5) ? 1 + rng.below(4) : 2 + rng.below(29);
  for (size_t j = 0; j < nodes; ++j) c.node_names.push_back(fmt::format("{}-n{}", id, j));
  for (const std::string& name : c.node_names) {
    std::string labels = fmt::format("kubernetes.io/hostname: {0}, gpufleet-case: {1}", name, id);
    if (rng.chance(0.7)) labels += fmt::format(", topology.kubernetes.io/zone: {}-z{}", id, rng.below(2));
    if (rng.chance(0.6)) labels += fmt::format(", tier: {}", rng.chance(0.5) ? "gold" : "silver");
    if (rng.chance(0.6)) labels += fmt::format(", rank: \"{}\"", 1 + rng.below(9));
    std::string node_taints;
    for (const std::string& t : taints)
      if (rng.chance(0.1)) node_taints += (node_taints.empty() ? "" : ", ") + t;
    std::string spec = node_taints.empty() ? "" : fmt::format("taints: [{}]", node_taints);
    if (rng.chance(0.1)) spec += std::string(spec.empty() ? "" : ", ") + "unschedulable: true";
    std::string alloc = fmt::format("cpu: \"{}\", memory: \"{}\", pods: \"{}\"", rng.pick(cpus), rng.pick(mems),
                                    rng.pick(std::vector<std::string>{"110", "110", "110", "2", "3"}));
    if (rng.chance(0.4)) alloc += fmt::format(", nvidia.com/gpu: \"{}\"", rng.pick(std::vector<std::string>{"1", "2", "4", "8", "16"}));
    c.nodes_yaml += fmt::format("---\napiVersion: v1\nkind: Node\nmetadata:\n  name: {}\n  labels: {{{}}}\nspec: {{{}}}\nstatus:\n"
                                "  allocatable: {{{}}}\n  capacity: {{{}}}\n",
                                name, labels, spec, alloc, alloc);
  }
  const size_t pods = multi ? 2 + rng.below(5) : 1;
  static const std::vector<std::string> tolerations = {
      "{key: dedicated, operator: Equal, value: ml, effect: NoSchedule}", "{key: dedicated, operator: Exists}",
      "{key: maint, operator: Exists, effect: NoExecute}",
      "{key: node.kubernetes.io/unschedulable, operator: Exists, effect: NoSchedule}", "{operator: Exists}"};
  for (size_t k = 0; k < pods; ++k) {
    GenPod p;
    p.ns = id;
    p.name = fmt::format("p{}", k);
    p.labels = fmt::format("app: {}", rng.pick(std::vector<std::string>{"web", "cache", "db"}));
    std::string spec = fmt::format("  nodeSelector: {{gpufleet-case: {}{}}}\n", id, rng.chance(0.15) ? ", tier: gold" : "");
    std::string tol;
    for (size_t i = 0; i < tolerations.size(); ++i)
      if (rng.chance(i == 4 ? 0.03 : 0.2)) tol += (tol.empty() ? "" : ", ") + tolerations[i];
    if (!tol.empty()) spec += fmt::format("  tolerations: [{}]\n", tol);
    std::string affinity;
    if (rng.chance(0.3)) affinity += node_affinity(rng);
    // podAntiAffinity, then podAffinity: required terms, then preferred ones (weights 1..100).
    std::string anti = rng.chance(multi ? 0.35 : 0.1) ? pod_affinity_term(rng) : "";
    std::string aff = rng.chance(multi ? 0.3 : 0.1) ? pod_affinity_term(rng) : "";
    const auto preferred = [&] {
      return rng.chance(multi ? 0.25 : 0.1)
                 ? fmt::format("{{weight: {}, podAffinityTerm: {}}}", rng.pick(std::vector<std::string>{"1", "10", "50", "100"}),
                               pod_affinity_term(rng))
                 : std::string();
    };
    const std::string anti_preferred = preferred(), aff_preferred = preferred();
    for (const auto& [kind, required, soft] : {std::tuple{"podAntiAffinity", anti, anti_preferred}, std::tuple{"podAffinity", aff, aff_preferred}}) {
      if (required.empty() && soft.empty()) continue;
      affinity += fmt::format("    {}:\n", kind);
      if (!required.empty()) affinity += fmt::format("      requiredDuringSchedulingIgnoredDuringExecution: [{}]\n", required);
      if (!soft.empty()) affinity += fmt::format("      preferredDuringSchedulingIgnoredDuringExecution: [{}]\n", soft);
    }
    if (!affinity.empty()) spec += "  affinity:\n" + affinity;
    if (rng.chance(0.25)) spec += fmt::format("  initContainers: [{{name: init, image: x, {}}}]\n", resources(rng, true));
    spec += fmt::format("  containers: [{{name: c, image: x, {}}}", resources(rng, true));
    if (rng.chance(0.3)) spec += fmt::format(", {{name: d, image: x, {}}}", resources(rng, false));
    spec += "]\n";
    p.spec = std::move(spec);
    c.pods.push_back(std::move(p));
  }
  return c;
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// kube's outcome per "ns/name": the node (without simon's "NNNN-" prefix), or "" when it failed.
std::map<std::string, std::string> run_simon(const std::string& simon, const fs::path& dir, const std::vector<GenCase>& cases) {
  const fs::path cluster = dir / "simon" / "cluster";
  fs::create_directories(cluster / "node");
  fs::create_directories(cluster / "pod");
  size_t node_file = 0, pod_file = 0;
  for (const GenCase& c : cases) {
    std::istringstream docs(c.nodes_yaml);
    std::string line, doc;
    const auto flush = [&] {
      if (doc.find("kind: Node") != std::string::npos) write(cluster / "node" / fmt::format("n{:06}.yaml", node_file++), doc);
      doc.clear();
    };
    while (std::getline(docs, line)) {
      if (line == "---") flush();
      else doc += line + "\n";
    }
    flush();
    for (const GenPod& p : c.pods) write(cluster / "pod" / fmt::format("p{:06}.yaml", pod_file++), pod_yaml(p, ""));
  }
  write(dir / "simon" / "simon.yaml",
        fmt::format("apiVersion: simon/v1alpha1\nkind: Config\nmetadata: {{name: diff}}\nspec:\n  cluster:\n    customConfig: {}\n",
                    cluster.string()));
  write(dir / "simon" / "scheduler-config.yaml",
        "apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 100\n"
        "profiles:\n- schedulerName: simon-scheduler\n  plugins:\n    bind:\n      disabled:\n      - name: DefaultBinder\n"
        "      enabled:\n      - name: Simon\n");
  const fs::path log = dir / "simon" / "simon.log";
  const std::string cmd = fmt::format("cd '{}' && '{}' apply -f simon.yaml -s scheduler-config.yaml > '{}' 2>&1", (dir / "simon").string(),
                                      simon, log.string());
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("the simulator failed; see " + log.string());
  std::map<std::string, std::string> out;
  std::ifstream in(log);
  std::string line;
  static const std::regex scheduled(R"(pod\(([^)]+)\) is scheduled to node\(\d+-([^)]+)\))");
  static const std::regex failed(R"(failed to schedule pod\(([^)]+)\))");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, scheduled)) out[m[1]] = m[2];
    else if (std::regex_search(line, m, failed)) out[m[1]] = "";
  }
  return out;
}

struct Tally {
  size_t pods = 0, agree = 0, placed = 0;
  size_t choices = 0, choices_agree = 0, tied = 0;  // pods both placed with 2+ feasible nodes
  std::vector<std::string> disagreements;
};

// gpufleet's answer for pod k of a case, with the earlier pods bound where kube put them.
void compare_case(const GenCase& c, const std::map<std::string, std::string>& kube, const fs::path& dir, bool choice,
                  const std::string& policy, Tally& t) {
  for (size_t k = 0; k < c.pods.size(); ++k) {
    const GenPod& pod = c.pods[k];
    const std::string key = pod.ns + "/" + pod.name;
    const auto it = kube.find(key);
    if (it == kube.end()) {
      t.disagreements.push_back(fmt::format("{}: the simulator did not report it", key));
      continue;
    }
    std::string yaml = c.nodes_yaml;
    for (size_t j = 0; j < k; ++j) {
      const auto earlier = kube.find(c.pods[j].ns + "/" + c.pods[j].name);
      if (earlier != kube.end() && !earlier->second.empty()) yaml += "---\n" + pod_yaml(c.pods[j], earlier->second);
    }
    yaml += "---\n" + pod_yaml(pod, "");
    const fs::path file = dir / "gpufleet" / fmt::format("{}-{}.yaml", c.id, pod.name);
    write(file, yaml);
    std::string ours;
    bool ours_placed = false;
    std::vector<std::string> top;
    try {
      const gpufleet::io::PlaceInputs in = gpufleet::io::read_place_inputs({file.string()}, {});
      gpufleet::place::PlaceOptions options;
      options.policy = policy;
      options.record_top_nodes = true;
      const gpufleet::place::PlaceResult r = gpufleet::place::place_workload(in.input, options);
      for (const auto& p : r.placements)
        if (p.pod == key) ours_placed = true, ours = "placed on " + p.node, top = p.top_nodes;
        else if (p.prebound) continue;
      for (const auto& u : r.pending)
        if (u.pod == key) ours = "pending: " + u.reason;
        else ours += fmt::format(" [earlier pod {} refused: {}]", u.pod, u.reason);
    } catch (const std::exception& e) {
      ours = std::string("input refused: ") + e.what();
    }
    ++t.pods;
    const bool kube_placed = !it->second.empty();
    t.placed += kube_placed;
    bool agree = kube_placed == ours_placed && ours.find("[earlier pod") == std::string::npos;
    if (agree && kube_placed && choice) {
      ++t.choices;
      t.tied += top.size() > 1;
      if (std::find(top.begin(), top.end(), it->second) != top.end()) {
        ++t.choices_agree;
      } else {
        agree = false;
        std::string best;
        for (const std::string& n : top) best += (best.empty() ? "" : ", ") + n;
        ours += " (best scored: " + best + ")";
      }
    }
    if (agree) {
      ++t.agree;
      fs::remove(file);
    } else {
      t.disagreements.push_back(fmt::format("{}: kube {}, gpufleet {} (case file {})", key,
                                            kube_placed ? "placed it on " + it->second : "could not place it", ours, file.string()));
    }
  }
}

std::string find_simon(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* env = std::getenv("GPUFLEET_KUBE_SCHEDULER_SIM"); env && *env) return env;
  return (fs::path(GPUFLEET_SOURCE_DIR) / ".." / "shared" / "tools" / "kube-scheduler-sim" / "simon").lexically_normal().string();
}

}  // namespace

int main(int argc, char** argv) {
  size_t single = 150, multi = 30;
  uint64_t seed = 1;
  std::string simon;
  bool keep = false, choice = true;
  std::string policy = "default-scheduler-v1.20";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "kube_scheduler_diff: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    try {
      if (a == "--single") single = std::stoul(value());
      else if (a == "--multi") multi = std::stoul(value());
      else if (a == "--seed") seed = std::stoull(value());
      else if (a == "--simon") simon = value();
      else if (a == "--keep") keep = true;
      else if (a == "--feasibility-only") choice = false;
      else if (a == "--policy") policy = value();
      else throw std::invalid_argument(a);
    } catch (const std::exception&) {
      std::fprintf(stderr, "usage: kube_scheduler_diff [--single N] [--multi M] [--seed S] [--simon PATH] [--keep] [--feasibility-only] [--policy P]\n");
      return 2;
    }
  }
  simon = find_simon(simon);
  if (!fs::exists(simon)) {
    std::printf("kube_scheduler_diff skipped: no kube-scheduler simulator at %s (set GPUFLEET_KUBE_SCHEDULER_SIM or --simon)\n",
                simon.c_str());
    return 77;
  }
  Rng rng(seed);
  std::vector<GenCase> cases;
  for (size_t i = 0; i < single + multi; ++i) cases.push_back(make_case(rng, fmt::format("c{}", i), i >= single));
  char tmpl[] = "/tmp/gpufleet_kube_diff_XXXXXX";
  const fs::path dir = ::mkdtemp(tmpl);
  fs::create_directories(dir / "gpufleet");
  Tally singles, multis;
  try {
    const auto kube = run_simon(simon, dir, cases);
    for (size_t i = 0; i < cases.size(); ++i) compare_case(cases[i], kube, dir, choice, policy, i < single ? singles : multis);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kube_scheduler_diff: %s (files in %s)\n", e.what(), dir.c_str());
    return 1;
  }
  std::printf("kube_scheduler_diff: seed %llu; %zu single-pod cases: %zu/%zu pods agree (%zu placed by kube); "
              "%zu multi-pod cases: %zu/%zu pods agree (%zu placed by kube)\n",
              static_cast<unsigned long long>(seed), single, singles.agree, singles.pods, singles.placed, multi, multis.agree,
              multis.pods, multis.placed);
  if (choice)
    std::printf("kube_scheduler_diff: node choice (kube's node among gpufleet's best scored, %s): "
                "single %zu/%zu (%zu with tied nodes), multi %zu/%zu (%zu with tied nodes)\n", policy.c_str(),
                singles.choices_agree, singles.choices, singles.tied, multis.choices_agree, multis.choices, multis.tied);
  size_t shown = 0;
  for (const Tally* t : {&singles, &multis})
    for (const std::string& d : t->disagreements)
      if (shown++ < 40) std::printf("DISAGREE %s\n", d.c_str());
  const bool ok = singles.disagreements.empty() && multis.disagreements.empty();
  if (ok && !keep) fs::remove_all(dir);
  else std::printf("case files: %s\n", dir.c_str());
  return ok ? 0 : 1;
}
