//===- DeviceType.cpp - dtypes, op classes and the device catalog ---------===//

#include "weft/Cluster/DeviceType.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <algorithm>
#include <vector>

using namespace weft;

llvm::StringRef weft::toString(DType dtype) {
  switch (dtype) {
  case DType::FP32:
    return "fp32";
  case DType::BF16:
    return "bf16";
  case DType::FP16:
    return "fp16";
  }
  return "fp32";
}

std::optional<DType> weft::parseDType(llvm::StringRef text) {
  std::string lower = text.lower();
  if (lower == "fp32")
    return DType::FP32;
  if (lower == "bf16")
    return DType::BF16;
  if (lower == "fp16")
    return DType::FP16;
  return std::nullopt;
}

unsigned weft::bytesPerElement(DType dtype) { return isHalf(dtype) ? 2 : 4; }

static const char *const kOpClassNames[kNumOpClasses] = {
    "matmul", "conv", "elementwise", "reduction", "gather", "data_movement"};

llvm::StringRef weft::toString(OpClass cls) {
  return kOpClassNames[static_cast<unsigned>(cls)];
}

std::optional<OpClass> weft::parseOpClass(llvm::StringRef text) {
  for (unsigned i = 0; i < kNumOpClasses; ++i)
    if (text == kOpClassNames[i])
      return static_cast<OpClass>(i);
  return std::nullopt;
}

double DeviceType::peakFlops(DType dtype) const {
  switch (dtype) {
  case DType::FP32:
    return fp32Tflops * 1e12;
  case DType::BF16:
    return bf16Tflops * 1e12;
  case DType::FP16:
    return fp16Tflops * 1e12;
  }
  return fp32Tflops * 1e12;
}

/// Efficiencies of one dtype whose peak is `peak` TFLOPS on a device with
/// `fp32` TFLOPS. A dtype with its own (tensor-core) hardware reaches
/// `matmulFast` on matmuls; one without runs on the fp32 units and reaches
/// the fp32 fraction. Convolutions reach a little less than matmuls.
/// Pointwise, reduction and data-movement ops are memory-bound on every GPU
/// here, so their compute efficiency only matters for tiny tensors; they run
/// on the vector units, which do 16-bit at up to twice the fp32 rate, so
/// their efficiency is taken relative to the dtype's peak.
static std::array<double, kNumOpClasses> efficienciesFor(double peak,
                                                         double fp32,
                                                         double matmulFp32,
                                                         double matmulFast) {
  bool hasHardware = peak > fp32;
  double matmul = hasHardware ? matmulFast : matmulFp32;
  double vectorShare = hasHardware ? std::min(1.0, 2 * fp32 / peak) : 1.0;
  return {matmul,
          matmul * 0.875,
          0.5 * vectorShare,
          0.4 * vectorShare,
          0.25 * vectorShare,
          0.25 * vectorShare};
}

static OpEfficiencies makeEfficiencies(double fp32, double fp16, double bf16,
                                       double matmulFp32, double matmulHalf) {
  OpEfficiencies eff;
  eff.fp32 = efficienciesFor(fp32, fp32, matmulFp32, matmulFp32);
  eff.fp16 = efficienciesFor(fp16, fp32, matmulFp32, matmulHalf);
  eff.bf16 = efficienciesFor(bf16, fp32, matmulFp32, matmulHalf);
  return eff;
}

namespace {
/// The inputs of one catalog entry.
struct CatalogRow {
  const char *name;
  double fp32, fp16, bf16, memoryGB, memBW, memEff, matmulFp32, matmulHalf;
  const char *gavelName;
  const char *source;
};
} // namespace

// Peak figures: docs/Setups.md's spec-sheet table (NVIDIA data sheets, dense,
// boost clock). Memory efficiencies: NVIDIA's Volta white paper gives 95%
// achieved DRAM utilisation on V100 vs 76% on P100; 0.75-0.9 elsewhere by
// memory technology (GDDR5/6 lower, HBM2e/HBM3 higher). Matmul efficiencies
// are calibrated, not measured: V100 and P100 are set so a BERT-Base layer
// runs 1.8x faster on V100 (HAP's profiled ratio, test/unit/Cost); the
// others are typical cuBLAS fractions; a profile DB overrides all of them.
static const CatalogRow kCatalogRows[] = {
    // name, fp32, fp16, bf16 TFLOPS, GB, GB/s, mem eff, matmul fp32/half
    {"K80", 4.4, 4.4, 4.4, 12, 240, 0.75, 0.70, 0.70, "k80",
     "Tesla K80 data sheet, one GK210 die (8.73 TFLOPS, 24 GB, 480 GB/s per "
     "board); no fast fp16/bf16"},
    {"P100", 10.6, 21.2, 10.6, 16, 732, 0.76, 0.68, 0.60, "p100",
     "Tesla P100 SXM2 data sheet; no bf16 hardware"},
    {"V100", 15.7, 125, 15.7, 16, 900, 0.95, 0.85, 0.60, "v100",
     "Tesla V100 SXM2 16 GB data sheet; no bf16 hardware"},
    {"V100-32GB", 15.7, 125, 15.7, 32, 900, 0.95, 0.85, 0.60, "v100",
     "Tesla V100 SXM2 32 GB data sheet; no bf16 hardware"},
    {"T4", 8.1, 65, 8.1, 16, 320, 0.80, 0.70, 0.40, "t4",
     "Tesla T4 data sheet (70 W: sustained clocks are lower); no bf16"},
    {"A10", 31.2, 125, 125, 24, 600, 0.85, 0.60, 0.60, "a10",
     "NVIDIA A10 data sheet (dual-issue fp32 is rarely reached)"},
    {"A40", 37.4, 150, 150, 48, 696, 0.85, 0.60, 0.60, "a40",
     "NVIDIA A40 data sheet (149.7 TFLOPS dense fp16)"},
    {"A100", 19.5, 312, 312, 40, 1555, 0.90, 0.90, 0.70, "a100",
     "A100 SXM4 40 GB data sheet (fp32 without TF32)"},
    {"A100-80GB", 19.5, 312, 312, 80, 2039, 0.90, 0.90, 0.70, "a100",
     "A100 SXM4 80 GB data sheet (fp32 without TF32)"},
    {"H100", 67, 989, 989, 80, 3350, 0.90, 0.80, 0.65, "h100",
     "H100 SXM5 data sheet (dense)"},
    // Alibaba GPU trace 2023 (openb_node_list_gpu_node.csv) types.
    {"V100M16", 15.7, 125, 15.7, 16, 900, 0.95, 0.85, 0.60, "v100",
     "Alibaba trace 'V100M16': V100 with 16 GB; SXM2 figures assumed"},
    {"V100M32", 15.7, 125, 15.7, 32, 900, 0.95, 0.85, 0.60, "v100",
     "Alibaba trace 'V100M32': V100 with 32 GB; SXM2 figures assumed"},
    {"G2", 31.2, 125, 125, 24, 600, 0.85, 0.60, 0.60, "g2",
     "ASSUMPTION: anonymised Alibaba type 'G2' (8 per node, 96 cores, 384 GiB "
     "host); modelled as an A10-class Ampere GPU"},
    {"G3", 19.5, 312, 312, 40, 1555, 0.90, 0.90, 0.70, "g3",
     "ASSUMPTION: anonymised Alibaba type 'G3' (8 per node, 128 cores, 768 "
     "GiB host); modelled as an A100-40GB-class GPU"},
    {"CPU", 0.1, 0.1, 0.1, 16, 20, 0.60, 0.60, 0.60, "cpu",
     "pseudo-device: a few x86-64 cores (AVX2 FMA, ~100 GFLOPS, ~20 GB/s); "
     "override or profile with weft-profile"},
};

static std::vector<DeviceType> buildCatalog() {
  std::vector<DeviceType> types;
  for (const CatalogRow &row : kCatalogRows) {
    DeviceType t;
    t.name = row.name;
    t.fp32Tflops = row.fp32;
    t.fp16Tflops = row.fp16;
    t.bf16Tflops = row.bf16;
    t.memoryGB = row.memoryGB;
    t.memBandwidthGBps = row.memBW;
    t.memEfficiency = row.memEff;
    t.efficiency = makeEfficiencies(row.fp32, row.fp16, row.bf16,
                                    row.matmulFp32, row.matmulHalf);
    t.gavelName = row.gavelName;
    t.source = row.source;
    types.push_back(std::move(t));
  }
  return types;
}

static const std::vector<DeviceType> &catalog() {
  static const std::vector<DeviceType> types = buildCatalog();
  return types;
}

llvm::ArrayRef<DeviceType> weft::listDeviceTypes() { return catalog(); }

const DeviceType *weft::lookupDeviceType(llvm::StringRef name) {
  for (const DeviceType &t : catalog())
    if (name.equals_insensitive(t.name))
      return &t;
  return nullptr;
}

std::string weft::knownDeviceTypeNames() {
  std::vector<std::string> names;
  for (const DeviceType &t : catalog())
    names.push_back(t.name);
  return llvm::join(names, ", ");
}
