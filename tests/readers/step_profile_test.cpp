// The measured step-time table reader (src/readers/serving/step_profile.h) and `bench-serve`'s use of it.
#include <gtest/gtest.h>

#include <string>

#include "inference/bench_serve.h"
#include "readers/serving/step_profile.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_step_profile(text, "p.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(StepProfile, ReadsRowsByColumnName) {
  const auto rows = parse_step_profile("tokens, step_s ,num_seqs,gpu\n1,0.007,1,H100\n\n2048,0.07,1,H100\n", "p.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].num_seqs, 1);
  EXPECT_EQ(rows[0].tokens, 1);
  EXPECT_DOUBLE_EQ(rows[0].step_s, 0.007);
  EXPECT_EQ(rows[1].tokens, 2048);
}

TEST(StepProfile, ErrorsNameLineAndField) {
  EXPECT_NE(error_of("num_seqs,tokens\n1,1\n").find("p.csv:1: field 'step_s': missing column"), std::string::npos)
      << error_of("num_seqs,tokens\n1,1\n");
  EXPECT_NE(error_of("num_seqs,tokens,step_s\n1,1,0.01\n0,4,0.01\n").find("p.csv:3:1: field 'num_seqs'"), std::string::npos)
      << error_of("num_seqs,tokens,step_s\n1,1,0.01\n0,4,0.01\n");
  EXPECT_NE(error_of("num_seqs,tokens,step_s\n1,1,-2\n").find("p.csv:2:5: field 'step_s': '-2' is not a step time"), std::string::npos)
      << error_of("num_seqs,tokens,step_s\n1,1,-2\n");
  EXPECT_NE(error_of("num_seqs,tokens,step_s\n1,1,nan\n").find("field 'step_s'"), std::string::npos);
  EXPECT_NE(error_of("num_seqs,tokens,step_s\n1,1,0.01\n1,1,0.02\n").find("p.csv:3:3: field 'tokens': num_seqs 1 tokens 1 is given twice (first at line 2)"),
            std::string::npos)
      << error_of("num_seqs,tokens,step_s\n1,1,0.01\n1,1,0.02\n");
  EXPECT_NE(error_of("num_seqs,tokens,step_s\n").find("no rows"), std::string::npos);
  EXPECT_NE(error_of("num_seqs,tokens,step_s\n1,99999999999,0.1\n").find("field 'tokens'"), std::string::npos);
  StepProfileLimits small;
  small.max_rows = 1;
  try {
    parse_step_profile("num_seqs,tokens,step_s\n1,1,0.01\n2,2,0.02\n", "p.csv", small);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("StepProfileLimits::max_rows"), std::string::npos) << e.what();
  }
}

// A profile with one row, 10 ms for any batch: bench-serve on it gives the constant-step figures
// (two requests of 10 prompt and 3 output tokens: done at 30 ms, TTFT 10 ms).
TEST(StepProfile, DrivesBenchServe) {
  const auto model = inference::make_profile_step_time(parse_step_profile("num_seqs,tokens,step_s\n1,1,0.01\n", "p.csv"));
  std::vector<inference::Request> q(2);
  for (size_t i = 0; i < 2; ++i) {
    q[i].id = i;
    q[i].prompt_tokens = 10;
    q[i].output_tokens = 3;
  }
  inference::EngineLimits lim;
  lim.num_blocks = 100;
  const inference::BenchServeResult r = inference::run_bench_serve(q, *model, lim);
  EXPECT_NEAR(r.duration_s, 0.03, 1e-12);
  EXPECT_NEAR(r.ttft.mean_ms, 10, 1e-9);
}

}  // namespace
}  // namespace gpufleet::io
