//===- TestOracle.h - A tiny hand-written throughput table for tests -*- C++
//-*-//

#ifndef WEFT_TEST_UNIT_SCHED_TESTORACLE_H
#define WEFT_TEST_UNIT_SCHED_TESTORACLE_H

#include "weft/Sched/TableOracle.h"
#include "gtest/gtest.h"

namespace weft {
namespace sched {
namespace test {

/// Job "A" gains 10x from a V100 over a K80, job "B" only 2x. "E" scales
/// over 1, 2 and 4 GPUs (rates per iteration of the larger global batch).
/// "Big" exists at 8 GPUs only.
inline const char *kTinyTable = R"json({
  "v100": {
    "('A', 1)": {"null": 10.0}, "('B', 1)": {"null": 2.0},
    "('C', 1)": {"null": 2.0},
    "('E', 1)": {"null": 10.0}, "('E', 2)": {"null": 9.5},
    "('E', 4)": {"null": 4.8}, "('Big', 8)": {"null": 1.0}
  },
  "v100_unconsolidated": {
    "('A', 1)": {"null": 10.0}, "('B', 1)": {"null": 2.0},
    "('E', 1)": {"null": 10.0}, "('E', 2)": {"null": 9.0},
    "('E', 4)": {"null": 4.0}, "('Big', 8)": {"null": 0.5}
  },
  "k80": {
    "('A', 1)": {"null": 1.0}, "('B', 1)": {"null": 1.0},
    "('C', 1)": {"null": 1.9},
    "('E', 1)": {"null": 2.0}, "('E', 2)": {"null": 1.9},
    "('E', 4)": {"null": 0.9}, "('Big', 8)": {"null": 0.2}
  }
})json";

inline std::unique_ptr<TableOracle> tinyOracle() {
  auto oracle = TableOracle::parse(kTinyTable, "tiny.json");
  EXPECT_TRUE(bool(oracle)) << llvm::toString(oracle.takeError());
  return std::move(*oracle);
}

/// The message of an error (consumed).
inline std::string message(llvm::Error err) {
  return llvm::toString(std::move(err));
}

} // namespace test
} // namespace sched
} // namespace weft

#endif // WEFT_TEST_UNIT_SCHED_TESTORACLE_H
