// Kubernetes text loaded once and read before other text (readers/k8s/k8s_preloaded.h): the same
// objects and checks as the two texts joined, errors in the second text at its own positions.
#include "readers/k8s/k8s_preloaded.h"

#include <string>

#include <gtest/gtest.h>

#include "readers/k8s/k8s_yaml.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

const std::string kStatic = R"(apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
preemptionPolicy: Never
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: standard}
value: 5
globalDefault: true
)";

const std::string kPods =
    R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"},"spec":{"priorityClassName":"high","containers":[{"name":"c"}]}})"
    "\n---\n"
    R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"b"},"spec":{"containers":[{"name":"c"}]}})";

TEST(PreloadedK8sText, ReadsAsTheJoinedTexts) {
  const PreloadedK8sText first(kStatic, "static");
  const K8sObjects joined = parse_k8s_text(kStatic + "\n---\n" + kPods, "object");
  for (int round = 0; round < 2; ++round) {  // loaded once, read again and again
    const K8sObjects read = parse_k8s_text_after(first, kPods, "object");
    ASSERT_EQ(read.pods.size(), 2u);
    EXPECT_EQ(read.pods[0].name, "a");
    EXPECT_EQ(read.pods[0].priority, 1000);  // its class, among the first text's
    EXPECT_FALSE(read.pods[0].preempt_lower_priority);
    EXPECT_EQ(read.pods[1].priority, 5);  // the global default
    EXPECT_EQ(read.pods[1].priority_class_name, "standard");
    ASSERT_EQ(read.priority_classes.size(), 2u);
    EXPECT_EQ(read.priority_classes[1].name, "standard");
    ASSERT_EQ(joined.pods.size(), 2u);
    EXPECT_EQ(read.pods[0].priority, joined.pods[0].priority);
    EXPECT_EQ(read.pods[1].priority, joined.pods[1].priority);
    EXPECT_EQ(read.warnings, joined.warnings);
  }
}

TEST(PreloadedK8sText, ErrorsAtTheSecondTextsPositions) {
  const PreloadedK8sText first(kStatic, "static");
  try {
    parse_k8s_text_after(first, "kind: Pod\napiVersion: v1\nmetadata: {name: x}\nspec:\n  priorityClassName: low\n  containers: [{name: c}]\n",
                         "object");
    ADD_FAILURE() << "an unknown PriorityClass was read";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "object");
    EXPECT_EQ(e.line(), 5);
    EXPECT_EQ(e.field(), "spec.priorityClassName");
    EXPECT_NE(std::string(e.what()).find("unknown PriorityClass 'low'"), std::string::npos) << e.what();
  }
  // A duplicate across the two texts is refused, as in one text.
  EXPECT_THROW(parse_k8s_text_after(first, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1\n", "object"),
               InputError);
  // A YAML error of the first text is the constructor's.
  EXPECT_THROW(PreloadedK8sText("a: [", "static"), InputError);
}

}  // namespace
}  // namespace gpufleet::io
