//===- FileOutputTest.cpp - Files written whole or not at all -------------===//

#include "weft/Support/FileOutput.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"
#include <csignal>

using namespace weft;

namespace {

/// A fresh directory, removed at the end.
struct TempDir {
  TempDir() {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("weft-output", path));
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(llvm::StringRef name) const {
    llvm::SmallString<128> p(path);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  unsigned entries() const {
    std::error_code ec;
    unsigned n = 0;
    for (llvm::sys::fs::directory_iterator it(path, ec), end; it != end && !ec;
         it.increment(ec))
      ++n;
    return n;
  }
  llvm::SmallString<128> path;
};

std::string contents(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  return buffer ? (*buffer)->getBuffer().str() : "<missing>";
}

TEST(FileOutput, WritesTheWholeContent) {
  TempDir dir;
  std::string path = dir.file("plan.mlir");
  ASSERT_FALSE(bool(
      writeFile(path, [](llvm::raw_ostream &os) { os << "module {}\n"; })));
  EXPECT_EQ(contents(path), "module {}\n");
  EXPECT_EQ(dir.entries(), 1u);
}

// A writer that stops half-way (as a run killed while writing would) leaves
// the previous file untouched and no temporary file behind.
TEST(FileOutput, AFailedWriteLeavesTheOldFile) {
  TempDir dir;
  std::string path = dir.file("plan.json");
  ASSERT_FALSE(bool(writeFile(
      path, [](llvm::raw_ostream &os) { os << "{\"old\": true}\n"; })));
  llvm::Error err = writeFileOrFail(path, [](llvm::raw_ostream &os) {
    os << "{\"new\": ";
    os.flush();
    return badInput("stopped half-way");
  });
  ASSERT_TRUE(bool(err));
  EXPECT_EQ(llvm::toString(std::move(err)), "stopped half-way");
  EXPECT_EQ(contents(path), "{\"old\": true}\n");
  EXPECT_EQ(dir.entries(), 1u);
}

// A process killed in the middle of writing (SIGKILL, no cleanup at all)
// leaves the previous file whole.
TEST(FileOutputDeathTest, AKillDuringTheWriteLeavesTheOldFile) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  TempDir dir;
  std::string path = dir.file("plan.mlir");
  ASSERT_FALSE(bool(
      writeFile(path, [](llvm::raw_ostream &os) { os << "module {}\n"; })));
  EXPECT_EXIT(
      {
        llvm::Error err = writeFile(path, [](llvm::raw_ostream &os) {
          os << "module attributes {spmd.version = 2 : i64} {";
          os.flush();
          std::raise(SIGKILL);
        });
        llvm::consumeError(std::move(err));
      },
      testing::KilledBySignal(SIGKILL), "");
  EXPECT_EQ(contents(path), "module {}\n");
}

TEST(FileOutput, AFailedFirstWriteLeavesNoFile) {
  TempDir dir;
  std::string path = dir.file("report.json");
  llvm::Error err = writeFileOrFail(path, [](llvm::raw_ostream &os) {
    os << "partial";
    return badInput("no");
  });
  llvm::consumeError(std::move(err));
  EXPECT_FALSE(llvm::sys::fs::exists(path));
  EXPECT_EQ(dir.entries(), 0u);
}

TEST(FileOutput, AnUnwritablePathIsBadInput) {
  TempDir dir;
  std::string path = dir.file("missing-dir/plan.mlir");
  llvm::Error err = writeFile(path, [](llvm::raw_ostream &os) { os << "x"; });
  ASSERT_TRUE(bool(err));
  std::string message = llvm::toString(std::move(err));
  EXPECT_NE(message.find("cannot write '" + path + "'"), std::string::npos)
      << message;
}

} // namespace
