//===- Memory.h - Per-device memory terms -------------------------*- C++
//-*-===//
//
// Bytes a device holds during training, by term (docs/CostModel.md). The
// callers (the spmd evaluator) decide how many parameters each device stores,
// keeps gradients and optimizer state for (ZeRO, tensor parallelism...);
// these functions only price them. Mixed precision (bf16/fp16) keeps 16-bit
// weights and gradients plus fp32 master weights, counted with the optimizer
// state because ZeRO shards them together.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_COST_MEMORY_H
#define WEFT_COST_MEMORY_H

#include "weft/Cluster/DeviceType.h"
#include <optional>

namespace weft {

enum class Optimizer { SGD, Momentum, Adam };

/// "sgd", "momentum", "adam".
llvm::StringRef toString(Optimizer optimizer);
std::optional<Optimizer> parseOptimizer(llvm::StringRef text);

/// Bytes per parameter of the working weights (4 in fp32, 2 when mixed).
double parameterBytesPerElement(DType dtype);
/// Bytes per parameter of gradients (4 in fp32, 2 when mixed).
double gradientBytesPerElement(DType dtype);
/// Bytes per parameter of optimizer state: Adam's two fp32 moments (8),
/// momentum's one (4), SGD none; plus 4 for fp32 master weights when mixed.
double optimizerBytesPerElement(Optimizer optimizer, DType dtype);

/// A device's memory by term, in bytes.
struct MemoryBreakdown {
  double parameters = 0;
  double gradients = 0;
  double optimizerState = 0;
  double activations = 0;

  double total() const {
    return parameters + gradients + optimizerState + activations;
  }
};

/// Element counts a device is responsible for.
struct MemoryCounts {
  /// Parameters stored (working copy).
  double storedParameters = 0;
  /// Parameters whose gradients it holds.
  double gradientParameters = 0;
  /// Parameters whose optimizer state (and master weights) it holds.
  double optimizerParameters = 0;
  /// Activation elements kept for the backward pass (in the compute dtype).
  double keptActivationElements = 0;
};

/// Prices `counts` in `dtype` with `optimizer`.
MemoryBreakdown deviceMemory(const MemoryCounts &counts, DType dtype,
                             Optimizer optimizer = Optimizer::Adam);

/// Whole-model replication (plain data parallelism): every term for every
/// parameter. 16 bytes per parameter with Adam in fp32 and when mixed.
MemoryBreakdown replicatedMemory(double parameters, double keptActivations,
                                 DType dtype,
                                 Optimizer optimizer = Optimizer::Adam);

/// True when `memory` fits in `type`'s memory less `reservedFraction`
/// (allocator fragmentation, workspace, CUDA context).
bool fitsInMemory(const MemoryBreakdown &memory, const DeviceType &type,
                  double reservedFraction = 0.1);

} // namespace weft

#endif // WEFT_COST_MEMORY_H
