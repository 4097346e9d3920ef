// Shared harness of the libFuzzer targets in fuzz/ (one per reader, fuzz/CMakeLists.txt).
//
// A target hands the input bytes to one reader. The reader may reject them with the expected
// exception (gpufleet::InputError for the readers, std::invalid_argument for Quantity::parse):
// that is a correct answer to bad input, and the harness swallows exactly that type. Anything else
// escapes on purpose and is a finding: another exception (libFuzzer reports "deadly signal" from
// std::terminate), a crash, a sanitizer report, a timeout or an out-of-memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "util/input_error.h"

namespace gpufleet::fuzz {

/// The input as text. The readers take std::string_view; the bytes are not copied, so ASan sees a
/// read past the end of the input as an overflow of libFuzzer's own buffer.
inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Runs `f()`; returns true when it returned, false when it threw `Expected` (the reader's rejection
/// of bad input). Any other exception propagates.
template <typename Expected, typename F>
bool accepts(F&& f) {
  try {
    f();
    return true;
  } catch (const Expected&) {
    return false;
  }
}

/// accepts() with the readers' rejection, gpufleet::InputError.
template <typename F>
bool reader_accepts(F&& f) {
  return accepts<InputError>(static_cast<F&&>(f));
}

/// A finding that is not a crash (a broken invariant the target checks itself): prints `what` and
/// aborts, which libFuzzer reports as a deadly signal and saves as a crash artifact.
[[noreturn]] inline void invariant_failed(const char* what) {
  std::fputs("fuzz invariant failed: ", stderr);
  std::fputs(what, stderr);
  std::fputc('\n', stderr);
  std::abort();
}

}  // namespace gpufleet::fuzz
