//===- DeviceType.h - Device types, dtypes and the built-in catalog -*- C++
//-*-//
//
// A device type is what the cost model knows about one kind of accelerator:
// peak FLOP/s per dtype, memory, memory bandwidth and the fraction of peak an
// op class reaches on it. docs/ClusterSpec.md lists the catalog and the
// sources of its figures.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CLUSTER_DEVICETYPE_H
#define WEFT_CLUSTER_DEVICETYPE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <array>
#include <optional>
#include <string>

namespace weft {

/// The compute dtype of a training job. BF16 and FP16 mean mixed precision:
/// compute and activations in 16 bits, fp32 master weights (docs/Design.md §1).
enum class DType { FP32, BF16, FP16 };

constexpr unsigned kNumDTypes = 3;

/// "fp32", "bf16" or "fp16".
llvm::StringRef toString(DType dtype);
/// Parses "fp32", "bf16" or "fp16" (case-insensitive).
std::optional<DType> parseDType(llvm::StringRef text);
/// Bytes of one element of `dtype` (4 or 2).
unsigned bytesPerElement(DType dtype);
/// True for the 16-bit (mixed-precision) dtypes.
inline bool isHalf(DType dtype) { return dtype != DType::FP32; }

/// Op classes with their own efficiency (fraction of peak FLOP/s reached).
///  - Matmul: matmul/gemm, batched matmul, attention score/context products.
///  - Conv: conv2d (forward and its two backward convolutions).
///  - Elementwise: unary/binary pointwise ops, cast, dropout, where, expand.
///  - Reduction: reduce_*, softmax, log_softmax, layer/batch norm, losses.
///  - Gather: gather/embedding lookups and their scatter-add backward.
///  - DataMovement: transpose, concat, slice, copies (no arithmetic).
enum class OpClass {
  Matmul,
  Conv,
  Elementwise,
  Reduction,
  Gather,
  DataMovement
};

constexpr unsigned kNumOpClasses = 6;

/// "matmul", "conv", "elementwise", "reduction", "gather", "data_movement".
llvm::StringRef toString(OpClass cls);
/// Parses the names printed by toString(OpClass).
std::optional<OpClass> parseOpClass(llvm::StringRef text);

/// Fraction of the peak FLOP/s each op class reaches, per dtype: tensor-core
/// kernels reach a smaller fraction of a much larger 16-bit peak, and a
/// dtype without hardware support runs at fp32 speed at best. Values are in
/// (0, 1].
struct OpEfficiencies {
  std::array<double, kNumOpClasses> fp32{};
  std::array<double, kNumOpClasses> fp16{};
  std::array<double, kNumOpClasses> bf16{};

  const std::array<double, kNumOpClasses> &of(DType dtype) const {
    return dtype == DType::FP32 ? fp32 : dtype == DType::FP16 ? fp16 : bf16;
  }
  std::array<double, kNumOpClasses> &of(DType dtype) {
    return dtype == DType::FP32 ? fp32 : dtype == DType::FP16 ? fp16 : bf16;
  }
  double get(OpClass cls, DType dtype) const {
    return of(dtype)[static_cast<unsigned>(cls)];
  }
  void set(OpClass cls, DType dtype, double value) {
    of(dtype)[static_cast<unsigned>(cls)] = value;
  }
};

/// One kind of device. Figures are per device (for K80: per die).
struct DeviceType {
  /// Catalog name, e.g. "V100" or "A100-80GB".
  std::string name;
  /// Peak dense FP32 TFLOPS (no TF32).
  double fp32Tflops = 0;
  /// Peak dense FP16 TFLOPS (tensor cores where present).
  double fp16Tflops = 0;
  /// Peak dense BF16 TFLOPS; equal to fp32Tflops on devices without bf16
  /// hardware (K80, P100, V100, T4), where bf16 runs at fp32 speed at best.
  double bf16Tflops = 0;
  /// Device memory in GB (1e9 bytes).
  double memoryGB = 0;
  /// Peak memory bandwidth in GB/s (1e9 bytes/s).
  double memBandwidthGBps = 0;
  /// Fraction of memBandwidthGBps that streaming kernels reach, in (0, 1].
  double memEfficiency = 1;
  /// Efficiency per op class and dtype.
  OpEfficiencies efficiency;
  /// The worker-type key of this device in Gavel's throughput tables
  /// ("v100", "p100", "k80"); lower-case name when Gavel has none.
  std::string gavelName;
  /// One line on where the figures come from.
  std::string source;

  /// Peak FLOP/s (not TFLOPS) in `dtype`.
  double peakFlops(DType dtype) const;
  /// Achieved FLOP/s for an op of class `cls` in `dtype`.
  double achievedFlops(OpClass cls, DType dtype) const {
    return peakFlops(dtype) * efficiency.get(cls, dtype);
  }
  /// Memory capacity in bytes.
  double memoryBytes() const { return memoryGB * 1e9; }
  /// Achieved memory bandwidth in bytes/s.
  double achievedMemBandwidth() const {
    return memBandwidthGBps * 1e9 * memEfficiency;
  }
};

/// The built-in catalog entry named `name` (case-insensitive), or null.
const DeviceType *lookupDeviceType(llvm::StringRef name);
/// Every built-in catalog entry, in a fixed order.
llvm::ArrayRef<DeviceType> listDeviceTypes();
/// "A10, A100, ..." — the catalog's names, for error messages.
std::string knownDeviceTypeNames();

} // namespace weft

#endif // WEFT_CLUSTER_DEVICETYPE_H
