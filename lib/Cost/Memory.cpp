//===- Memory.cpp - Per-device memory terms
//--------------------------------===//

#include "weft/Cost/Memory.h"

using namespace weft;

llvm::StringRef weft::toString(Optimizer optimizer) {
  switch (optimizer) {
  case Optimizer::SGD:
    return "sgd";
  case Optimizer::Momentum:
    return "momentum";
  case Optimizer::Adam:
    return "adam";
  }
  return "adam";
}

std::optional<Optimizer> weft::parseOptimizer(llvm::StringRef text) {
  for (Optimizer o : {Optimizer::SGD, Optimizer::Momentum, Optimizer::Adam})
    if (text.equals_insensitive(toString(o)))
      return o;
  return std::nullopt;
}

double weft::parameterBytesPerElement(DType dtype) {
  return bytesPerElement(dtype);
}

double weft::gradientBytesPerElement(DType dtype) {
  return bytesPerElement(dtype);
}

double weft::optimizerBytesPerElement(Optimizer optimizer, DType dtype) {
  double master = isHalf(dtype) ? 4 : 0;
  switch (optimizer) {
  case Optimizer::SGD:
    return master;
  case Optimizer::Momentum:
    return master + 4;
  case Optimizer::Adam:
    return master + 8;
  }
  return master + 8;
}

MemoryBreakdown weft::deviceMemory(const MemoryCounts &counts, DType dtype,
                                   Optimizer optimizer) {
  MemoryBreakdown m;
  m.parameters = counts.storedParameters * parameterBytesPerElement(dtype);
  m.gradients = counts.gradientParameters * gradientBytesPerElement(dtype);
  m.optimizerState =
      counts.optimizerParameters * optimizerBytesPerElement(optimizer, dtype);
  m.activations = counts.keptActivationElements * bytesPerElement(dtype);
  return m;
}

MemoryBreakdown weft::replicatedMemory(double parameters,
                                       double keptActivations, DType dtype,
                                       Optimizer optimizer) {
  return deviceMemory({parameters, parameters, parameters, keptActivations},
                      dtype, optimizer);
}

bool weft::fitsInMemory(const MemoryBreakdown &memory, const DeviceType &type,
                        double reservedFraction) {
  return memory.total() <= type.memoryBytes() * (1 - reservedFraction);
}
