// The filter verb's answer (server/extender_json.h): written directly in the nodeCacheCapable form,
// byte for byte what nlohmann::json's dump() of ExtenderFilterResult writes.
#include "server/extender_json.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace gpufleet::server {
namespace {

TEST(ExtenderJson, FilterResultNodeNames) {
  io::ExtenderArgs args;
  args.node_cache_capable = true;
  live::FilterAnswer answer;
  answer.passed = {"n1", "n3"};
  answer.failed = {{"n2", "Insufficient nvidia.com/gpu"}};
  answer.failed_unresolvable = {{"n4", "node(s) not in gpufleet's cache"}};
  EXPECT_EQ(filter_result_json(args, answer),
            R"({"Error":"","FailedAndUnresolvableNodes":{"n4":"node(s) not in gpufleet's cache"},)"
            R"("FailedNodes":{"n2":"Insufficient nvidia.com/gpu"},"NodeNames":["n1","n3"],"Nodes":null})");
  // Escapes, control characters, non-ASCII text and the note, as nlohmann::json writes them.
  answer.passed = {"n\"1", "n\\2", "caf\xc3\xa9"};
  answer.failed = {{"tab\tnode", "line\nbreak \x01\x1f \b\f\r"}};
  answer.error = "a \"quoted\" error";
  answer.note = "note \x7f";
  const nlohmann::json expected = {{"Nodes", nullptr},
                                   {"NodeNames", answer.passed},
                                   {"FailedNodes", answer.failed},
                                   {"FailedAndUnresolvableNodes", answer.failed_unresolvable},
                                   {"Error", answer.error},
                                   {"gpufleetNote", answer.note}};
  EXPECT_EQ(filter_result_json(args, answer), expected.dump());
  // Nothing passed, nothing failed.
  EXPECT_EQ(filter_result_json(args, live::FilterAnswer{}),
            R"({"Error":"","FailedAndUnresolvableNodes":{},"FailedNodes":{},"NodeNames":[],"Nodes":null})");
}

TEST(ExtenderJson, FilterResultEchoesNodes) {
  io::ExtenderArgs args;
  args.node_cache_capable = false;
  args.node_names = {"a", "b"};
  args.node_items = nlohmann::json::array({{{"metadata", {{"name", "a"}}}}, {{"metadata", {{"name", "b"}}}}});
  live::FilterAnswer answer;
  answer.passed = {"b"};
  answer.failed = {{"a", "Insufficient cpu"}};
  EXPECT_EQ(filter_result_json(args, answer),
            R"({"Error":"","FailedAndUnresolvableNodes":{},"FailedNodes":{"a":"Insufficient cpu"},)"
            R"("NodeNames":null,"Nodes":{"items":[{"metadata":{"name":"b"}}],"metadata":{}}})");
}

}  // namespace
}  // namespace gpufleet::server
