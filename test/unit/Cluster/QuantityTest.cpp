//===- QuantityTest.cpp - Units in cluster specs
//---------------------------===//

#include "weft/Cluster/Quantity.h"
#include "gtest/gtest.h"

using namespace weft;

static double parseOk(llvm::StringRef text, QuantityKind kind) {
  llvm::Expected<double> v = parseQuantity(text, kind);
  EXPECT_TRUE(static_cast<bool>(v)) << text.str();
  if (!v) {
    llvm::consumeError(v.takeError());
    return -1;
  }
  return *v;
}

static std::string parseErr(llvm::StringRef text, QuantityKind kind) {
  double v = 0;
  return parseQuantityInto(text, kind, v);
}

TEST(Quantity, Bandwidth) {
  EXPECT_DOUBLE_EQ(parseOk("300 GB/s", QuantityKind::Bandwidth), 300e9);
  EXPECT_DOUBLE_EQ(parseOk("10.4 Gbit/s", QuantityKind::Bandwidth), 1.3e9);
  EXPECT_DOUBLE_EQ(parseOk("100Gbps", QuantityKind::Bandwidth), 12.5e9);
  EXPECT_DOUBLE_EQ(parseOk("1 GiB/s", QuantityKind::Bandwidth), 1073741824.0);
}

TEST(Quantity, LatencyMemoryFlops) {
  EXPECT_DOUBLE_EQ(parseOk("5 us", QuantityKind::Latency), 5e-6);
  EXPECT_DOUBLE_EQ(parseOk("1.5 ms", QuantityKind::Latency), 1.5e-3);
  EXPECT_DOUBLE_EQ(parseOk("2e-6 s", QuantityKind::Latency), 2e-6);
  EXPECT_DOUBLE_EQ(parseOk("16 GB", QuantityKind::Memory), 16e9);
  EXPECT_DOUBLE_EQ(parseOk("15.7 TFLOPS", QuantityKind::Flops), 15.7e12);
}

TEST(Quantity, WrongUnitSaysWhatWasExpected) {
  EXPECT_EQ(parseErr("5 us", QuantityKind::Bandwidth),
            "wrong unit 'us': expected a bandwidth such as '300 GB/s' or "
            "'10.4 Gbit/s', found '5 us'");
  EXPECT_NE(parseErr("16 GB/s", QuantityKind::Memory).find("wrong unit"),
            std::string::npos);
}

TEST(Quantity, MissingUnitNonPositiveAndGarbage) {
  EXPECT_NE(parseErr("300", QuantityKind::Bandwidth).find("missing unit"),
            std::string::npos);
  EXPECT_NE(parseErr("0 GB/s", QuantityKind::Bandwidth).find("positive"),
            std::string::npos);
  EXPECT_NE(parseErr("-3 GB", QuantityKind::Memory).find("positive"),
            std::string::npos);
  EXPECT_FALSE(parseErr("fast", QuantityKind::Bandwidth).empty());
  EXPECT_FALSE(parseErr("", QuantityKind::Latency).empty());
  EXPECT_FALSE(parseErr("1e999 s", QuantityKind::Latency).empty());
  // Units are case-sensitive: "gb/s" is neither bytes nor bits.
  EXPECT_FALSE(parseErr("10 gb/s", QuantityKind::Bandwidth).empty());
}
