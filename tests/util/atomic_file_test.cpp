// write_file_atomically: all-or-nothing writes, no temporary files left behind on failure.
#include "util/atomic_file.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

namespace gpufleet {
namespace {

namespace fs = std::filesystem;

// A fresh empty folder per test, removed afterwards.
class AtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("gpufleet-atomic-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path dir_;
};

TEST_F(AtomicFile, WritesContent) {
  const fs::path p = dir_ / "out.csv";
  const std::string content = "a,b\n1,2\n";
  write_file_atomically(p.string(), content);
  EXPECT_EQ(slurp(p), content);
  EXPECT_EQ(entries(), (std::vector<std::string>{"out.csv"}));
  const fs::perms perms = fs::status(p).permissions();
  EXPECT_EQ(perms & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
}

TEST_F(AtomicFile, WritesBinaryAndEmptyContent) {
  const std::string binary("x\0y\r\n\xff", 6);
  write_file_atomically((dir_ / "bin").string(), binary);
  EXPECT_EQ(slurp(dir_ / "bin"), binary);
  write_file_atomically((dir_ / "empty").string(), "");
  EXPECT_TRUE(fs::exists(dir_ / "empty"));
  EXPECT_EQ(fs::file_size(dir_ / "empty"), 0u);
  // A large payload goes through whole.
  const std::string big(3 * 1024 * 1024 + 17, 'z');
  write_file_atomically((dir_ / "big").string(), big);
  EXPECT_EQ(fs::file_size(dir_ / "big"), big.size());
  EXPECT_EQ(entries(), (std::vector<std::string>{"big", "bin", "empty"}));
}

TEST_F(AtomicFile, ReplacesAnExistingFile) {
  const fs::path p = dir_ / "out.txt";
  {
    std::ofstream out(p);
    out << "old content that is longer than the new one\n";
  }
  write_file_atomically(p.string(), "new\n");
  EXPECT_EQ(slurp(p), "new\n");
  write_file_atomically(p.string(), "newer\n");
  EXPECT_EQ(slurp(p), "newer\n");
  EXPECT_EQ(entries(), (std::vector<std::string>{"out.txt"}));
}

TEST_F(AtomicFile, MissingDirectoryThrowsAndLeavesNothing) {
  const fs::path p = dir_ / "no-such-dir" / "out.txt";
  try {
    write_file_atomically(p.string(), "content");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(p));
  EXPECT_FALSE(fs::exists(dir_ / "no-such-dir"));
  EXPECT_TRUE(entries().empty());
}

TEST_F(AtomicFile, FailedRenameRemovesTheTemporaryFile) {
  // The target is a non-empty directory: the temporary file is written, the rename fails.
  const fs::path target = dir_ / "taken";
  fs::create_directories(target / "inside");
  EXPECT_THROW(write_file_atomically(target.string(), "content"), std::runtime_error);
  EXPECT_TRUE(fs::is_directory(target));
  EXPECT_EQ(entries(), (std::vector<std::string>{"taken"}));
}

}  // namespace
}  // namespace gpufleet
