// openb CSV readers: both pod layouts, any column order, CRLF, and one precise InputError per bad input.
#include "readers/traces/openb_csv.h"

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "util/input_error.h"

namespace gpufleet::io {
namespace {

constexpr const char* kPodHeader11 =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";

TEST(OpenbCsv, PodsElevenColumnLayout) {
  const std::string text = std::string(kPodHeader11) +
                           "openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
                           "openb-pod-0001,6000,12288,1,460,V100M16|V100M32,BE,Running,10,20,11\n"
                           "openb-pod-0002,4000,8192,0,0,G2,Burstable,Running,0,1,0\n"
                           "openb-pod-0003,88000,327680,8,1000,A100,Guaranteed,Pending,5,6,0\n"
                           "openb-pod-0004,0,0,2,1000,,,Running,0,1,0\n";
  const std::vector<Pod> pods = parse_openb_pods(text, "pods.csv");
  ASSERT_EQ(pods.size(), 5u);
  EXPECT_EQ(pods[0].name, "openb-pod-0000");
  EXPECT_EQ(pods[0].cpu_milli, 12000);
  EXPECT_EQ(pods[0].memory_bytes, 16384 * kBytesPerMib);
  EXPECT_EQ(pods[0].num_gpu, 1);
  EXPECT_EQ(pods[0].gpu_milli, 1000);
  EXPECT_EQ(pods[0].gpu_spec, "");
  EXPECT_EQ(pods[0].qos, QosClass::kLS);

  EXPECT_EQ(pods[1].gpu_milli, 460);
  EXPECT_EQ(pods[1].gpu_spec, "V100M16|V100M32");
  EXPECT_EQ(pods[1].qos, QosClass::kBE);

  // gpu_spec is kept only for GPU pods.
  EXPECT_EQ(pods[2].num_gpu, 0);
  EXPECT_EQ(pods[2].gpu_milli, 0);
  EXPECT_EQ(pods[2].gpu_spec, "");
  EXPECT_EQ(pods[2].qos, QosClass::kBurstable);

  EXPECT_EQ(pods[3].num_gpu, 8);
  EXPECT_EQ(pods[3].gpu_spec, "A100");
  EXPECT_EQ(pods[3].qos, QosClass::kGuaranteed);
  EXPECT_EQ(pods[3].gpu_request_milli(), 8000);

  EXPECT_EQ(pods[4].cpu_milli, 0);
  EXPECT_EQ(pods[4].num_gpu, 2);
  EXPECT_EQ(pods[4].qos, QosClass::kUnspecified);
}

TEST(OpenbCsv, PodsFiveColumnLayout) {
  const std::vector<Pod> pods = parse_openb_pods(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
      "p-a,32000,65536,4,1000\n"
      "p-b,500,256,1,125\n"
      "p-c,100,100,0,0\n",
      "multigpu.csv");
  ASSERT_EQ(pods.size(), 3u);
  EXPECT_EQ(pods[0].name, "p-a");
  EXPECT_EQ(pods[0].num_gpu, 4);
  EXPECT_EQ(pods[0].gpu_milli, 1000);
  EXPECT_EQ(pods[1].cpu_milli, 500);
  EXPECT_EQ(pods[1].memory_bytes, 256 * kBytesPerMib);
  EXPECT_EQ(pods[1].gpu_milli, 125);
  EXPECT_TRUE(pods[1].is_share_pod());
  EXPECT_EQ(pods[1].gpu_spec, "");
  EXPECT_EQ(pods[1].qos, QosClass::kUnspecified);
  EXPECT_FALSE(pods[2].is_gpu_pod());
}

TEST(OpenbCsv, PodColumnsInAnotherOrderWithExtras) {
  const std::vector<Pod> pods = parse_openb_pods(
      "gpu_spec,gpu_milli,extra,name,num_gpu,memory_mib,cpu_milli\n"
      "T4,300,zzz,x1,1,2048,1500\n"
      "T4,0,zzz,x2,0,1024,700\n",
      "reordered.csv");
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(pods[0].name, "x1");
  EXPECT_EQ(pods[0].cpu_milli, 1500);
  EXPECT_EQ(pods[0].memory_bytes, 2048 * kBytesPerMib);
  EXPECT_EQ(pods[0].num_gpu, 1);
  EXPECT_EQ(pods[0].gpu_milli, 300);
  EXPECT_EQ(pods[0].gpu_spec, "T4");
  EXPECT_EQ(pods[1].name, "x2");
  EXPECT_EQ(pods[1].cpu_milli, 700);
  EXPECT_EQ(pods[1].gpu_spec, "");
}

TEST(OpenbCsv, CrlfLineEndings) {
  // The last column carries no trailing '\r'.
  const std::vector<Pod> pods = parse_openb_pods(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\r\n"
      "a,1000,2000,1,500,P100\r\n"
      "b,1000,2000,1,1000,V100M32\r\n",
      "crlf.csv");
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(pods[0].gpu_spec, "P100");
  EXPECT_EQ(pods[1].gpu_spec, "V100M32");
  EXPECT_EQ(pods[1].gpu_milli, 1000);

  const std::vector<Node> nodes = parse_openb_nodes(
      "sn,cpu_milli,memory_mib,gpu,model\r\n"
      "n1,32000,131072,4,V100M16\r\n"
      "n2,96000,786432,0,\r\n",
      "nodes-crlf.csv");
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].gpu_model, "V100M16");
  EXPECT_EQ(nodes[1].gpu_model, "");
}

TEST(OpenbCsv, Nodes) {
  const std::vector<Node> nodes = parse_openb_nodes(
      "sn,cpu_milli,memory_mib,gpu,model\n"
      "openb-node-0227,64000,262144,2,P100\n"
      "openb-node-0001,96000,786432,0,\n"
      "openb-node-0500,128000,1048576,16,A100\n",
      "nodes.csv");
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].name, "openb-node-0227");
  EXPECT_EQ(nodes[0].cpu_milli, 64000);
  EXPECT_EQ(nodes[0].memory_bytes, 262144 * kBytesPerMib);
  EXPECT_EQ(nodes[0].gpu_count, 2);
  EXPECT_EQ(nodes[0].gpu_model, "P100");
  EXPECT_EQ(nodes[1].gpu_count, 0);
  EXPECT_EQ(nodes[1].gpu_model, "");
  EXPECT_EQ(nodes[2].gpu_count, 16);

  const std::vector<Node> reordered = parse_openb_nodes(
      "model,gpu,sn,memory_mib,cpu_milli\n"
      "T4,1,n9,4096,8000\n",
      "nodes2.csv");
  ASSERT_EQ(reordered.size(), 1u);
  EXPECT_EQ(reordered[0].name, "n9");
  EXPECT_EQ(reordered[0].cpu_milli, 8000);
  EXPECT_EQ(reordered[0].memory_bytes, 4096 * kBytesPerMib);
  EXPECT_EQ(reordered[0].gpu_count, 1);
  EXPECT_EQ(reordered[0].gpu_model, "T4");
}

TEST(OpenbCsv, IntegralDecimalsAccepted) {
  const std::vector<Pod> pods = parse_openb_pods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000.0,512,1,1000.0\n", "dec.csv");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].cpu_milli, 1000);
  EXPECT_EQ(pods[0].gpu_milli, 1000);
}

TEST(OpenbCsv, BlankLinesAreSkippedButCounted) {
  const std::vector<Pod> pods =
      parse_openb_pods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n\np1,1,1,0,0\n\n\np2,2,2,0,0\n", "blank.csv");
  ASSERT_EQ(pods.size(), 2u);
  try {
    parse_openb_pods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n\np1,1,1,0,0\n\nbad,x,1,0,0\n", "blank.csv");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 5);
    EXPECT_EQ(e.field(), "cpu_milli");
  }
}

struct BadCase {
  const char* what;
  bool nodes;  // parse as a node list (else a pod list)
  std::string text;
  int line;
  std::string field;
};

constexpr const char* kPods5 = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n";
constexpr const char* kNodes = "sn,cpu_milli,memory_mib,gpu,model\n";

std::string pods5(const std::string& rows) { return kPods5 + rows; }
std::string nodes(const std::string& rows) { return kNodes + rows; }

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.what; }

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, ThrowsInputErrorWithLineAndField) {
  const BadCase& c = GetParam();
  const std::string source = c.nodes ? "bad-nodes.csv" : "bad-pods.csv";
  try {
    if (c.nodes) {
      parse_openb_nodes(c.text, source);
    } else {
      parse_openb_pods(c.text, source);
    }
    FAIL() << c.what << ": no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), c.line) << c.what << ": " << e.what();
    EXPECT_EQ(e.field(), c.field) << c.what << ": " << e.what();
    EXPECT_EQ(e.file(), source) << c.what;
    EXPECT_NE(std::string(e.what()).find(source), std::string::npos) << c.what << ": " << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    OpenbCsv, BadInput,
    ::testing::Values(
        BadCase{"truncated row", false, pods5("p1,1,1,0,0\np2,100,200\n"), 3, "num_gpu"},
        BadCase{"row with extra field", false, pods5("p1,1,1,0,0,9\n"), 2, ""},
        BadCase{"non-number cpu", false, pods5("p1,abc,1,0,0\n"), 2, "cpu_milli"},
        BadCase{"empty number", false, pods5("p1,,1,0,0\n"), 2, "cpu_milli"},
        BadCase{"fractional number", false, pods5("p1,1.5,1,0,0\n"), 2, "cpu_milli"},
        BadCase{"negative memory", false, pods5("p1,1,1,0,0\np2,1,-5,0,0\n"), 3, "memory_mib"},
        BadCase{"negative cpu", false, pods5("p1,-1,1,0,0\n"), 2, "cpu_milli"},
        BadCase{"num_gpu 9", false, pods5("p1,1,1,9,1000\n"), 2, "num_gpu"},
        BadCase{"gpu_milli 1001", false, pods5("p1,1,1,1,1001\n"), 2, "gpu_milli"},
        BadCase{"num_gpu 0 with gpu_milli 500", false, pods5("p1,1,1,0,500\n"), 2, "gpu_milli"},
        BadCase{"num_gpu 1 with gpu_milli 0", false, pods5("p1,1,1,1,0\n"), 2, "num_gpu"},
        BadCase{"2 GPUs with gpu_milli 500", false, pods5("p1,1,1,0,0\np2,1,1,0,0\np3,1,1,2,500\n"), 4, "gpu_milli"},
        BadCase{"missing num_gpu column", false, "name,cpu_milli,memory_mib,gpu_milli\np1,1,1,0\n", 1, "num_gpu"},
        BadCase{"missing name column", false, "cpu_milli,memory_mib,num_gpu,gpu_milli\n1,1,0,0\n", 1, "name"},
        BadCase{"duplicate pod name", false, pods5("p1,1,1,0,0\np2,1,1,0,0\np1,2,2,0,0\n"), 4, "name"},
        BadCase{"empty pod name", false, pods5(",1,1,0,0\n"), 2, "name"},
        BadCase{"empty pod file", false, "", 1, ""},
        BadCase{"pod header only", false, pods5(""), 2, ""},
        BadCase{"node with GPUs but no model", true, nodes("n1,1000,1000,2,\n"), 2, "model"},
        BadCase{"node with model but no GPUs", true, nodes("n1,1000,1000,0,T4\n"), 2, "gpu"},
        BadCase{"node with 0 cpu", true, nodes("n1,0,1000,0,\n"), 2, "cpu_milli"},
        BadCase{"node with 0 memory", true, nodes("n1,1000,0,0,\n"), 2, "memory_mib"},
        BadCase{"node with 17 GPUs", true, nodes("n1,1000,1000,17,A100\n"), 2, "gpu"},
        BadCase{"duplicate node name", true, nodes("n1,1000,1000,0,\nn1,1000,1000,0,\n"), 3, "sn"},
        BadCase{"missing model column", true, "sn,cpu_milli,memory_mib,gpu\nn1,1,1,0\n", 1, "model"},
        BadCase{"truncated node row", true, nodes("n1,1000\n"), 2, "memory_mib"},
        BadCase{"empty node file", true, "", 1, ""},
        BadCase{"node header only", true, nodes(""), 2, ""},
        BadCase{"unknown qos", false, std::string(kPodHeader11) + "p1,1,1,0,0,,LS,Running,0,1,0\np2,1,1,0,0,,Platinum,Running,0,1,0\n",
                3, "qos"},
        BadCase{"qos in the wrong case", false, std::string(kPodHeader11) + "p1,1,1,0,0,,ls,Running,0,1,0\n", 2, "qos"},
        BadCase{"unknown pod_phase", false, std::string(kPodHeader11) + "p1,1,1,0,0,,BE,Completed,0,1,0\n", 2, "pod_phase"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return "case" + std::to_string(info.index); });

TEST(OpenbCsv, UnknownQosAndPodPhaseMessagesListTheValidValues) {
  try {
    parse_openb_pods(std::string(kPodHeader11) + "p1,1,1,0,0,,Platinum,Running,0,1,0\n", "pods.csv");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "pods.csv:2: field 'qos': unknown qos 'Platinum' (expected LS, BE, Burstable or Guaranteed, or empty)");
  }
  try {
    parse_openb_trace(std::string(kPodHeader11) + "p1,1,1,0,0,,LS,Done,0,1,0\n", "trace.csv");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.field(), "pod_phase");
    EXPECT_NE(std::string(e.what()).find("unknown pod_phase 'Done' (expected Running, Failed, Pending or Succeeded"),
              std::string::npos)
        << e.what();
  }
}

TEST(OpenbCsv, ReadMissingFileThrowsInputError) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "gpufleet-openb-test-does-not-exist" / "pods.csv").string();
  try {
    read_openb_pods(path);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), 0);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
  }
  EXPECT_THROW(read_openb_nodes(path), InputError);
}

}  // namespace
}  // namespace gpufleet::io
