// Inputs that cannot hurt: the limits of readers/formats/input_limits.h enforced by every reader, the YAML trees
// built from libyaml (readers/formats/yaml_tree.h), the JSON request parser, and the input defects once found by
// fuzzing, each with the exact input that found it.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <sys/stat.h>

#include <gtest/gtest.h>

#include "readers/formats/csv_table.h"
#include "readers/k8s/device_setup.h"
#include "readers/traces/fgd_reference.h"
#include "readers/formats/input_limits.h"
#include "readers/formats/json_request.h"
#include "readers/k8s/k8s_yaml.h"
#include "readers/traces/openb_csv.h"
#include "readers/k8s/pool_file.h"
#include "readers/sim/sim_pools.h"
#include "readers/sim/workload_file.h"
#include "readers/formats/text_file.h"
#include "readers/formats/yaml_field.h"
#include "readers/formats/yaml_tree.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

// The message of the InputError that `f` throws; fails the test when it throws none.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return {};
}

// ---- YAML: the guard, through every YAML reader ----

// A stream holding only `,` made yaml-cpp 0.7's LoadAll yield empty documents without end
// (jbeder/yaml-cpp issue 1040); so did a UTF-8 BOM followed by UTF-16LE text.
TEST(YamlTree, LoopingInputsAreSyntaxErrorsInEveryReader) {
  const std::string bom_utf16 = std::string("\xEF\xBB\xBF") + std::string("k\0i\0n\0d\0:\0 \0N\0o\0d\0e\0\n\0", 20);
  // `&t:a,` and `!t a\n? b` made it loop too, though libyaml accepts them: found by fuzzing a
  // libyaml check in front of yaml-cpp, the reason the trees are now built from libyaml's events.
  for (const std::string& text : {std::string(","), std::string(",\n,"), std::string("- !+(.,.)"), bom_utf16}) {
    SCOPED_TRACE(text);
    for (const std::string& e :
         {error_of([&] { parse_k8s_text(text, "f.yaml"); }), error_of([&] { parse_pool_text(text, "f.yaml"); }),
          error_of([&] { parse_sim_cluster_text(text, "f.yaml"); }),
          error_of([&] { parse_sim_workload_text(text, "f.yaml", {"p"}); })}) {
      EXPECT_TRUE(e.rfind("f.yaml:1:", 0) == 0) << e;
      EXPECT_NE(e.find("YAML syntax error: "), std::string::npos) << e;
    }
  }
  EXPECT_EQ(error_of([] { parse_k8s_text(",", "f.yaml"); }),
            "f.yaml:1:1: YAML syntax error: did not find expected node content (while parsing a block node)");
  EXPECT_EQ(error_of([&] { parse_k8s_text(bom_utf16, "f.yaml"); }), "f.yaml:1:2: YAML syntax error: control characters are not allowed");
}

// Valid YAML on which yaml-cpp 0.7 looped too (found by fuzzing): now read like any other text.
TEST(YamlTree, InputsThatLoopedYamlCppAreReadNormally) {
  detail::Source src;
  src.file = "f.yaml";
  const std::vector<detail::YamlNode> anchor = detail::parse_yaml_stream("&t:a,", src, "");
  ASSERT_EQ(anchor.size(), 1u);
  EXPECT_EQ(anchor[0].type, detail::YamlType::kScalar);
  EXPECT_EQ(anchor[0].scalar, ":a,");
  EXPECT_EQ(error_of([] { parse_k8s_text("&t:a,", "f.yaml"); }), "f.yaml:1:1: expected a Kubernetes object (a mapping), got a scalar");
  EXPECT_EQ(error_of([] { parse_k8s_text("!t a\n? b", "f.yaml"); }).rfind("f.yaml:", 0), 0u);
}

// std::string_view() has no data (nullptr), which libyaml asserted on and aborted (found by
// sim_run_fuzz, whose workload is empty after a separator on the last line): read as "", an empty stream.
TEST(YamlTree, AnEmptyViewWithoutDataIsAnEmptyStream) {
  detail::Source src;
  src.file = "f.yaml";
  EXPECT_TRUE(detail::parse_yaml_stream(std::string_view(), src, "").empty());
  const auto outcome = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const InputError& e) {
      return e.what();
    }
    return "accepted";
  };
  const std::string_view none;
  EXPECT_EQ(outcome([&] { parse_k8s_text(none, "f.yaml"); }), outcome([&] { parse_k8s_text("", "f.yaml"); }));
  EXPECT_EQ(outcome([&] { parse_pool_text(none, "f.yaml"); }), outcome([&] { parse_pool_text("", "f.yaml"); }));
  EXPECT_EQ(outcome([&] { parse_sim_cluster_text(none, "f.yaml"); }), outcome([&] { parse_sim_cluster_text("", "f.yaml"); }));
  EXPECT_EQ(outcome([&] { parse_sim_workload_text(none, "f.yaml", {"p"}); }),
            outcome([&] { parse_sim_workload_text("", "f.yaml", {"p"}); }));
}

// "Billion laughs": each level of aliases multiplies the tree by 9. Refused at the first alias.
TEST(YamlTree, AliasesAreRefusedAtTheAlias) {
  const std::string laughs =
      "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
      "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n";
  EXPECT_EQ(error_of([&] { parse_k8s_text(laughs, "f.yaml"); }),
            "f.yaml:2:8: YAML alias '*a' is not supported: write the value out (an alias can multiply the work of "
            "reading a file)");
  EXPECT_NE(error_of([&] { parse_pool_text(laughs, "f.yaml"); }).find("alias '*a'"), std::string::npos);
  // An anchor alone builds nothing twice: accepted.
  const K8sObjects objs = parse_k8s_text("apiVersion: v1\nkind: Pod\nmetadata: &m {name: p}\nspec: {containers: [{name: c}]}\n", "f.yaml");
  EXPECT_EQ(objs.pods.size(), 1u);
}

TEST(YamlTree, EachLimitIsAnErrorNamingIt) {
  detail::Source src;
  src.file = "f.yaml";
  YamlLimits tight;
  tight.max_documents = 2;
  tight.max_depth = 3;
  tight.max_nodes = 10;
  tight.max_scalar_bytes = 8;
  EXPECT_EQ(detail::parse_yaml_stream("a: 1\n---\nb: 2\n", src, "", tight).size(), 2u);
  EXPECT_EQ(error_of([&] { detail::parse_yaml_stream("a\n---\nb\n---\nc\n", src, "", tight); }),
            "f.yaml:4:1: more than 2 documents (limit YamlLimits::max_documents, docs/input-limits.md)");
  EXPECT_EQ(detail::parse_yaml_stream("a: {b: [c]}\n", src, "", tight).size(), 1u);  // depth 3: fine
  EXPECT_EQ(error_of([&] { detail::parse_yaml_stream("a: {b: [[c]]}\n", src, "", tight); }),
            "f.yaml:1:9: more than 3 levels of nesting (limit YamlLimits::max_depth, docs/input-limits.md)");
  EXPECT_EQ(error_of([&] { detail::parse_yaml_stream("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]", src, "", tight); }),
            "f.yaml:1:29: more than 10 nodes (limit YamlLimits::max_nodes, docs/input-limits.md)");
  EXPECT_EQ(error_of([&] { detail::parse_yaml_stream("k: 123456789\n", src, "", tight); }),
            "f.yaml:1:4: more than 8 bytes in a scalar (limit YamlLimits::max_scalar_bytes, docs/input-limits.md)");
  // The default depth limit, through a reader: 65 nested lists.
  EXPECT_NE(error_of([] { parse_k8s_text(std::string(65, '[') + std::string(65, ']'), "f.yaml"); })
                .find("more than 64 levels of nesting (limit YamlLimits::max_depth"),
            std::string::npos);
}

TEST(YamlTree, TextThatIsNotUtf8IsRefusedAtItsCharacter) {
  EXPECT_EQ(error_of([] { parse_k8s_text("kind: Pod\nmetadata: {name: \"caf\xe9\"}\n", "f.yaml"); }),
            "f.yaml:2:22: YAML syntax error: invalid trailing UTF-8 octet");
}

// ---- CSV ----

// A float cell cast to int64_t before the range check was undefined behaviour; now every out-of-range
// or non-finite value is a plain error.
TEST(CsvLimits, FloatCellsOutOfRangeAreErrorsNotCasts) {
  const std::string header = "sn,cpu_milli,memory_mib,gpu,model\n";  // rows "d,4,<memory>,0,"
  EXPECT_EQ(error_of([&] { parse_openb_nodes(header + "d,4,2e44,0,", "n.csv"); }),
            "n.csv:2: field 'memory_mib': 2e44 is out of range [1, 1099511627776]");
  EXPECT_EQ(error_of([&] { parse_openb_nodes(header + "d,4,1e30,0,", "n.csv"); }),
            "n.csv:2: field 'memory_mib': 1e30 is out of range [1, 1099511627776]");
  EXPECT_EQ(error_of([&] { parse_openb_nodes(header + "d,-1e30,4,0,", "n.csv"); }), "n.csv:2: field 'cpu_milli': -1e30 is negative");
  for (const char* cell : {"nan", "inf", "-inf", "NaN", "1e400"})
    EXPECT_EQ(error_of([&] { parse_openb_nodes(header + "d,4," + cell + ",0,", "n.csv"); }),
              std::string("n.csv:2: field 'memory_mib': '") + cell + "' is not an integer");
  EXPECT_EQ(parse_openb_nodes(header + "d,4,1e3,0,", "n.csv")[0].memory_bytes, 1000 * kBytesPerMib);  // integral decimals stay accepted
}

// The duplicate-column check was quadratic (80,000 names took 6 s); now a hash set, and the header
// is capped by CsvLimits::max_columns and max_line_bytes before it is split.
TEST(CsvLimits, WideHeadersAndLongLinesAreRefusedQuickly) {
  std::string wide;
  for (int i = 0; i < 80000; ++i) wide += (i ? ",c" : "c") + std::to_string(i);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of([&] { parse_openb_nodes(wide + "\n", "n.csv"); }),
            "n.csv:1: more than 65536 bytes in a line (limit CsvLimits::max_line_bytes, docs/input-limits.md)");
  std::string columns;
  for (int i = 0; i < 3000; ++i) columns += (i ? ",c" : "c") + std::to_string(i);
  EXPECT_EQ(error_of([&] { parse_openb_pods(columns + "\n", "p.csv"); }),
            "p.csv:1: more than 1024 columns (limit CsvLimits::max_columns, docs/input-limits.md)");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));

  CsvLimits tight;
  tight.max_columns = 3;
  tight.max_rows = 2;
  EXPECT_EQ(error_of([&] { detail::CsvTable("a,b,a\n", "t.csv", tight); }), "t.csv:1: field 'a': column appears twice in the header");
  detail::CsvTable t("a,b\n1,2\n\n3,4\n5,6\n", "t.csv", tight);
  EXPECT_TRUE(t.next_row());
  EXPECT_TRUE(t.next_row());
  EXPECT_EQ(error_of([&] { t.next_row(); }), "t.csv:5: more than 2 data rows (limit CsvLimits::max_rows, docs/input-limits.md)");
}

TEST(CsvLimits, FgdReferenceUsesTheSameTable) {
  std::string header = "workload,sc_policy,tune,seed";
  for (int i = 0; i <= 130; ++i) header += "," + std::to_string(i);
  std::string row = "openb_pod_list_default,06-FGD,1.3,42";
  for (int i = 0; i <= 130; ++i) row += i == 7 ? "," : "," + std::to_string(i * 0.5);
  const std::vector<pack::ReferenceRun> runs = parse_fgd_reference(header + "\n" + row + "\n", "ref.csv");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].policy, "fgd");
  EXPECT_EQ(runs[0].seed, 42);
  ASSERT_EQ(runs[0].curve.size(), 131u);
  EXPECT_DOUBLE_EQ(runs[0].curve[130], 65.0);
  EXPECT_TRUE(std::isnan(runs[0].curve[7]));
  EXPECT_EQ(error_of([&] { parse_fgd_reference(header + "\nw,06-FGD,1.3,4.5" + row.substr(row.find(",42") + 3) + "\n", "ref.csv"); }),
            "ref.csv:2: field 'seed': '4.5' is not an integer");
  EXPECT_EQ(error_of([&] { parse_fgd_reference(header + "\nw,06-FGD,nan,42" + row.substr(row.find(",42") + 3) + "\n", "ref.csv"); }),
            "ref.csv:2: field 'tune': 'nan' is not a number");
}

// ---- Kubernetes objects ----

// replicas x count overflowed int64_t in the reader (4294967296 squared). The labels are validated
// where they are interpreted (readers/k8s/device_setup.h), at the label.
TEST(K8sLimits, HugeTimeSlicingLabelsAreErrorsAtTheLabel) {
  const auto node = [](const std::string& replicas, const std::string& count) {
    return "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels:\n"
           "    nvidia.com/gpu.product: Tesla-T4\n"
           "    nvidia.com/gpu.replicas: \"" + replicas + "\"\n    nvidia.com/gpu.count: \"" + count + "\"\n"
           "status:\n  allocatable: {cpu: \"8\", memory: 32Gi, nvidia.com/gpu: \"8\"}\n";
  };
  const auto setup = [](const std::string& text) {
    K8sObjects objs = parse_k8s_text(text, "n.yaml");
    apply_device_setup(objs);
    return objs;
  };
  EXPECT_EQ(error_of([&] { setup(node("4294967296", "4294967296")); }),
            "n.yaml:8:27: field 'metadata.labels.nvidia.com/gpu.count': node n: label nvidia.com/gpu.count is '4294967296', "
            "expected an integer in [0, 16]");
  EXPECT_EQ(error_of([&] { setup(node("4294967296", "2")); }),
            "n.yaml:7:30: field 'metadata.labels.nvidia.com/gpu.replicas': node n: label nvidia.com/gpu.replicas is "
            "'4294967296', expected an integer in [1, 1048576]");
  const K8sObjects objs = setup(node("4", "2"));  // 8 advertised = 4 replicas x 2 GPUs
  ASSERT_EQ(objs.nodes.size(), 1u);
  EXPECT_EQ(objs.nodes[0].gpu_count, 2);
}

TEST(K8sLimits, PodsAcrossControllersAndNodesAreCapped) {
  ObjectLimits tight;
  tight.max_pods = 10;
  tight.max_nodes = 1;
  std::string text;
  for (int i = 0; i < 2; ++i)
    text += "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d" + std::to_string(i) +
            "}\nspec:\n  replicas: 6\n  template: {spec: {containers: [{name: c}]}}\n";
  // Refused at the second controller's replicas, before any of its pods is built.
  EXPECT_EQ(error_of([&] { parse_k8s_text(text, "d.yaml", tight); }),
            "d.yaml:13:13: field 'spec.replicas': more than 10 pods, counting every controller's replicas (limit "
            "ObjectLimits::max_pods, docs/input-limits.md)");
  const std::string node = "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: 1, memory: 1Gi}}\n";
  EXPECT_EQ(error_of([&] { parse_k8s_text(node + "---\n" + node, "n.yaml", tight); }),
            "n.yaml:8:18: field 'metadata.name': more than 1 nodes (limit ObjectLimits::max_nodes, docs/input-limits.md)");
}

// ---- files and messages ----

TEST(InputFiles, TooLargeIsRefusedBeforeReading) {
  const std::string path = (std::filesystem::temp_directory_path() / "gpufleet_limit_test.csv").string();
  {
    std::ofstream out(path);
    out << std::string(2000, 'x');
  }
  EXPECT_EQ(read_text_file(path, 2000, "L").size(), 2000u);
  EXPECT_EQ(error_of([&] { read_text_file(path, 1999, "CsvLimits::max_file_bytes"); }),
            path + ": more than 1999 bytes in the file (limit CsvLimits::max_file_bytes, docs/input-limits.md)");
  std::filesystem::remove(path);
}

// Only regular files are read: a device or FIFO is refused before a byte is read (the fuzz targets
// and the workload file name files by path, and /dev/zero was read to the 1 GiB trace limit, a FIFO
// without a writer blocked forever), and so are directories and missing files, each by name.
TEST(InputFiles, OnlyRegularFilesAreRead) {
  const auto dir = std::filesystem::temp_directory_path() / "gpufleet_regular_file_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string fifo = (dir / "fifo.csv").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error_of([&] { read_csv_file(fifo); }),
            fifo + ": is not a regular file (a device, FIFO or socket); give a file");
  EXPECT_EQ(error_of([&] { read_text_file("/dev/zero", 1 << 30, "L"); }),
            "/dev/zero: is not a regular file (a device, FIFO or socket); give a file");
  EXPECT_EQ(error_of([&] { read_yaml_file("/dev/null"); }),
            "/dev/null: is not a regular file (a device, FIFO or socket); give a file");
  EXPECT_EQ(error_of([&] { read_yaml_file(dir.string()); }), dir.string() + ": is a directory, expected a file");
  EXPECT_EQ(error_of([&] { read_yaml_file((dir / "none.yaml").string()); }),
            (dir / "none.yaml").string() + ": cannot open file: no such file");
  EXPECT_EQ(error_of([&] { read_yaml_file((dir / "none" / "x.yaml").string()); }),
            (dir / "none" / "x.yaml").string() + ": cannot open file: no such file");
  // A link to a regular file is read; a link to a device is refused like the device.
  {
    std::ofstream((dir / "a.yaml").string()) << "a: 1\n";
  }
  std::filesystem::create_symlink(dir / "a.yaml", dir / "link.yaml");
  EXPECT_EQ(read_yaml_file((dir / "link.yaml").string()), "a: 1\n");
  std::filesystem::create_symlink("/dev/zero", dir / "zero.yaml");
  EXPECT_EQ(error_of([&] { read_yaml_file((dir / "zero.yaml").string()); }),
            (dir / "zero.yaml").string() + ": is not a regular file (a device, FIFO or socket); give a file");
  std::filesystem::remove_all(dir);
}

// A text of UTF-8 continuation bytes only has no character boundary to cut at; the search for one
// recursed without end (found by fuzzing the CSV readers).
TEST(InputFiles, EchoedContinuationBytesAreCutToo) {
  const InputError e("f.csv", 1, "", std::string(5000, '\x80'));
  EXPECT_LT(std::string(e.what()).size(), 2000u);
}

TEST(InputFiles, EchoedInputIsCutInTheMiddle) {
  const InputError e("f.csv", 3, "name", "'" + std::string(50'000'000, 'a') + "' is not an integer");
  const std::string what = e.what();
  EXPECT_LT(what.size(), InputError::kMaxMessageBytes + 60);
  EXPECT_EQ(what.rfind("f.csv:3: field 'name': 'aaa", 0), 0u);
  EXPECT_NE(what.find("...[49999"), std::string::npos);
  EXPECT_EQ(what.substr(what.size() - 19), "' is not an integer");
}

// ---- JSON request bodies ----

TEST(JsonRequest, ParsesWithinLimits) {
  const nlohmann::json j = parse_json_request(R"({"Pod": {"metadata": {"name": "p"}}, "NodeNames": ["a", "b"]})", "body");
  EXPECT_EQ(j["NodeNames"][1], "b");
  EXPECT_EQ(error_of([] { parse_json_request("{\"a\":\n tru!}", "body"); }).rfind("body:2:", 0), 0u);
  EXPECT_NE(error_of([] { parse_json_request("{\"a\":\n tru!}", "body"); }).find("JSON syntax error: syntax error while parsing value"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_json_request("\"\xe9\"", "body"); }).find("JSON syntax error"), std::string::npos);
  // nlohmann::json throws out_of_range, not parse_error, for a number beyond a double (found by fuzzing).
  EXPECT_EQ(error_of([] { parse_json_request("[1e999]", "body"); }), "body: JSON syntax error: number overflow parsing '1e999'");

  JsonRequestLimits tight;
  tight.max_body_bytes = 40;
  tight.max_depth = 2;
  tight.max_values = 5;
  tight.max_string_bytes = 4;
  EXPECT_EQ(error_of([&] { parse_json_request(std::string(41, ' '), "body", tight); }),
            "body: more than 40 bytes in the body (limit JsonRequestLimits::max_body_bytes, docs/input-limits.md)");
  EXPECT_EQ(parse_json_request("[[1]]", "body", tight), nlohmann::json::parse("[[1]]"));
  EXPECT_EQ(error_of([&] { parse_json_request("[[[1]]]", "body", tight); }),
            "body: more than 2 levels of nesting (limit JsonRequestLimits::max_depth, docs/input-limits.md)");
  EXPECT_EQ(error_of([&] { parse_json_request("[1,2,3,4,5]", "body", tight); }),
            "body: more than 5 values (limit JsonRequestLimits::max_values, docs/input-limits.md)");
  EXPECT_EQ(error_of([&] { parse_json_request("[\"abcde\"]", "body", tight); }),
            "body: more than 4 bytes in a string (limit JsonRequestLimits::max_string_bytes, docs/input-limits.md)");
  EXPECT_EQ(error_of([&] { parse_json_request("{\"abcde\": 1}", "body", tight); }),
            "body: more than 4 bytes in a string (limit JsonRequestLimits::max_string_bytes, docs/input-limits.md)");
}

}  // namespace
}  // namespace gpufleet::io
