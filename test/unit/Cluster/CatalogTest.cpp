//===- CatalogTest.cpp - The built-in device catalog
//------------------------===//

#include "weft/Cluster/DeviceType.h"
#include "gtest/gtest.h"

using namespace weft;

TEST(Catalog, HasEveryRequiredType) {
  for (const char *name :
       {"K80", "P100", "V100", "V100-32GB", "T4", "A10", "A40", "A100",
        "A100-80GB", "H100", "G2", "G3", "V100M16", "V100M32", "CPU"})
    EXPECT_NE(lookupDeviceType(name), nullptr) << name;
  EXPECT_EQ(lookupDeviceType("V1000"), nullptr);
}

TEST(Catalog, LookupIsCaseInsensitive) {
  const DeviceType *t = lookupDeviceType("v100");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->name, "V100");
}

TEST(Catalog, SpecSheetFigures) {
  // docs/Setups.md's table.
  const DeviceType *v100 = lookupDeviceType("V100");
  EXPECT_DOUBLE_EQ(v100->peakFlops(DType::FP32), 15.7e12);
  EXPECT_DOUBLE_EQ(v100->peakFlops(DType::FP16), 125e12);
  EXPECT_DOUBLE_EQ(v100->memoryBytes(), 16e9);
  EXPECT_DOUBLE_EQ(lookupDeviceType("V100-32GB")->memoryGB, 32);
  EXPECT_DOUBLE_EQ(lookupDeviceType("A100-80GB")->memoryGB, 80);
  EXPECT_DOUBLE_EQ(lookupDeviceType("H100")->peakFlops(DType::BF16), 989e12);
  EXPECT_DOUBLE_EQ(lookupDeviceType("K80")->memBandwidthGBps, 240);
  EXPECT_DOUBLE_EQ(lookupDeviceType("T4")->fp16Tflops, 65);
  EXPECT_DOUBLE_EQ(lookupDeviceType("A40")->memoryGB, 48);
}

TEST(Catalog, EveryEntryIsSane) {
  for (const DeviceType &t : listDeviceTypes()) {
    EXPECT_GT(t.fp32Tflops, 0) << t.name;
    EXPECT_GE(t.fp16Tflops, t.fp32Tflops) << t.name;
    EXPECT_GE(t.bf16Tflops, t.fp32Tflops) << t.name;
    EXPECT_GT(t.memoryGB, 0) << t.name;
    EXPECT_GT(t.memBandwidthGBps, 0) << t.name;
    EXPECT_GT(t.memEfficiency, 0) << t.name;
    EXPECT_LE(t.memEfficiency, 1) << t.name;
    EXPECT_FALSE(t.source.empty()) << t.name;
    EXPECT_FALSE(t.gavelName.empty()) << t.name;
    for (unsigned c = 0; c < kNumOpClasses; ++c)
      for (DType d : {DType::FP32, DType::BF16, DType::FP16}) {
        double e = t.efficiency.get(static_cast<OpClass>(c), d);
        EXPECT_GT(e, 0) << t.name;
        EXPECT_LE(e, 1) << t.name;
      }
  }
}

TEST(Catalog, GavelNames) {
  EXPECT_EQ(lookupDeviceType("V100")->gavelName, "v100");
  EXPECT_EQ(lookupDeviceType("P100")->gavelName, "p100");
  EXPECT_EQ(lookupDeviceType("K80")->gavelName, "k80");
}

TEST(Catalog, DTypeAndOpClassNamesRoundTrip) {
  for (DType d : {DType::FP32, DType::BF16, DType::FP16})
    EXPECT_EQ(parseDType(toString(d)), d);
  EXPECT_EQ(parseDType("BF16"), DType::BF16);
  EXPECT_FALSE(parseDType("fp8").has_value());
  EXPECT_EQ(bytesPerElement(DType::FP32), 4u);
  EXPECT_EQ(bytesPerElement(DType::FP16), 2u);
  for (unsigned c = 0; c < kNumOpClasses; ++c)
    EXPECT_EQ(parseOpClass(toString(static_cast<OpClass>(c))),
              static_cast<OpClass>(c));
  EXPECT_FALSE(parseOpClass("matmult").has_value());
}
