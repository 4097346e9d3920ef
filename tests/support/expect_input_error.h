// The check every reader test makes: bad input throws InputError naming the file, line, column and
// field. Separate from test_support.h, which the benchmarks include without GoogleTest.
#pragma once

#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "util/input_error.h"

namespace gpufleet::testing {

/// `read()` must throw InputError at `file`, `line`, `column`, `field` with `fragment` in its message.
inline void expect_input_error(const std::function<void()>& read, const std::string& file, int line, int column,
                               const std::string& field, const std::string& fragment) {
  try {
    read();
    ADD_FAILURE() << "no InputError; expected " << file << ":" << line << ":" << column << " " << field;
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), file) << e.what();
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(e.column(), column) << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

}  // namespace gpufleet::testing
