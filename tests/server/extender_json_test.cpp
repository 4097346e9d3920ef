// The filter and prioritize verbs' answers (server/extender_json.h): written directly (filter in the
// nodeCacheCapable form), byte for byte what nlohmann::json's dump() of ExtenderFilterResult and
// HostPriorityList writes.
#include "server/extender_json.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "live/cluster_cache.h"
#include "util/input_error.h"

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

// The old writer: the HostPriorityList as a JSON tree, dumped.
std::string prioritize_tree_dump(const std::vector<live::HostScore>& scores) {
  nlohmann::json out = nlohmann::json::array();
  for (const live::HostScore& s : scores) out.push_back({{"Host", s.host}, {"Score", s.score}});
  return out.dump();
}

TEST(ExtenderJson, PrioritizeResultAsTheTreeWrites) {
  EXPECT_EQ(prioritize_result_json({}), "[]");
  EXPECT_EQ(prioritize_result_json({{"n1", 10}, {"n2", 0}, {"n3", 4}}),
            R"([{"Host":"n1","Score":10},{"Host":"n2","Score":0},{"Host":"n3","Score":4}])");
  // Escapes, control characters, non-ASCII names (UTF-8 of two, three and four bytes), extreme scores.
  const std::vector<std::vector<live::HostScore>> cases = {
      {{"n\"1", 1}, {"n\\2", 2}, {"tab\tnode", 3}, {"line\nbreak \x01\x1f \b\f\r \x7f", 9}},
      {{"caf\xc3\xa9", 10}, {"\xe8\x8a\x82\xe7\x82\xb9-1", 5}, {"\xf0\x9f\x9a\x80\"q", 0}},
      {{"a", std::numeric_limits<int64_t>::min()}, {"b", std::numeric_limits<int64_t>::max()}, {"c", -1}},
      {{"only", 10}}};
  for (const auto& scores : cases) EXPECT_EQ(prioritize_result_json(scores), prioritize_tree_dump(scores));
  EXPECT_EQ(prioritize_result_json({{"caf\xc3\xa9", 10}, {"n\"1", 0}}), "[{\"Host\":\"caf\xc3\xa9\",\"Score\":10},{\"Host\":\"n\\\"1\",\"Score\":0}]");
  // Text that is not UTF-8 is refused as the tree's dump() refuses it.
  EXPECT_THROW(prioritize_tree_dump({{"bad\xff", 1}}), nlohmann::json::type_error);
  EXPECT_THROW(prioritize_result_json({{"bad\xff", 1}}), nlohmann::json::type_error);
}

nlohmann::json node_object(const std::string& name, int gpus) {
  const nlohmann::json resources = {{"cpu", "32"}, {"memory", "256Gi"}, {"nvidia.com/gpu", std::to_string(gpus)}, {"pods", "110"}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"resourceVersion", "1"}}},
          {"status", {{"allocatable", resources}, {"capacity", resources}}}};
}

// The old /prioritize handler: the same reading and decision, the answer as a JSON tree, dumped.
std::string prioritize_tree_response(const live::Snapshot& snapshot, std::string_view body) {
  const io::ExtenderArgs args = io::parse_extender_args(body, "request body");
  return prioritize_tree_dump(live::extender_prioritize(snapshot, args.pod, args.node_names));
}

// The answer or the error's message.
std::string answer_or_error(const std::function<std::string()>& run) {
  try {
    return run();
  } catch (const InputError& e) {
    return std::string("InputError: ") + e.what();
  }
}

// Whole requests, through the fast reading (a pod seen before) and the full one: the answers and the
// errors are byte for byte the old handler's.
TEST(ExtenderJson, PrioritizeResponseAsTheOldHandler) {
  live::ClusterCache cache(live::CacheOptions{});
  cache.replace_all({{"apiVersion", "v1"},
                     {"kind", "List"},
                     {"metadata", {{"resourceVersion", "1"}}},
                     {"items", nlohmann::json::array({node_object("a", 8), node_object("b", 4)})}},
                    "test");
  const auto snapshot = cache.snapshot();
  const std::string pod =
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"default","uid":"u-p"},)"
      R"("spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1","nvidia.com/gpu":"1"},"limits":{"nvidia.com/gpu":"1"}}}]}})";
  const std::string head = R"({"Pod":)" + pod;
  // One node sent: it is the best, 10 (extender.h).
  EXPECT_EQ(prioritize_response(*snapshot, head + R"(,"Nodes":null,"NodeNames":["a"]})"), R"([{"Host":"a","Score":10}])");
  // Nodes the cache does not know get 0, whatever their names.
  EXPECT_EQ(prioritize_response(*snapshot, head + R"(,"Nodes":null,"NodeNames":["n\"1","caf\u00e9"]})"),
            "[{\"Host\":\"n\\\"1\",\"Score\":0},{\"Host\":\"caf\xc3\xa9\",\"Score\":0}]");
  EXPECT_EQ(prioritize_response(*snapshot, head + R"(,"Nodes":null,"NodeNames":[]})"), "[]");
  const std::vector<std::string> bodies = {
      head + R"(,"Nodes":null,"NodeNames":["a","b","zz"]})",  // the fast reading: the pod was read above
      head + R"(,"NodeNames":["b","a"]})",
      head + R"(,"Nodes":null,"NodeNames":["n\u0031","a\\b","tab\tx","caf)" "\xc3\xa9" R"(","\u8282\u70b9"]})",
      head + R"(,"Nodes":null,"NodeNames":[]})",
      head + R"(,"Nodes":null,"NodeNames":null})",
      head + R"(,"Nodes":{"metadata":{},"items":[{"metadata":{"name":"b"}},{"metadata":{"name":"q"}}]},"NodeNames":null})",
      head + R"(,"Nodes":null,"NodeNames":["a","b","a"]})",  // errors: a duplicate, an empty name, a number,
      head + R"(,"Nodes":null,"NodeNames":["a",""]})",        // syntax, no pod, bytes after the body
      head + R"(,"Nodes":null,"NodeNames":["a",7]})",
      head + R"(,"Nodes":null,"NodeNames":["a"})",
      R"({"Nodes":null,"NodeNames":["a"]})",
      head + R"(,"Nodes":null,"NodeNames":["a"]} x)",
      "[]"};
  int errors = 0;
  for (const std::string& body : bodies) {
    const std::string now = answer_or_error([&] { return prioritize_response(*snapshot, body); });
    const std::string old = answer_or_error([&] { return prioritize_tree_response(*snapshot, body); });
    EXPECT_EQ(now, old) << body;
    EXPECT_EQ(now, answer_or_error([&] { return prioritize_response(*snapshot, body); })) << body;  // read again
    errors += now.rfind("InputError: ", 0) == 0;
  }
  EXPECT_EQ(errors, 7);
}

}  // namespace
}  // namespace gpufleet::server
