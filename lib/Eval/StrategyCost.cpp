//===- StrategyCost.cpp - What a parameter strategy costs -----------------===//

#include "weft/Eval/StrategyCost.h"
#include "llvm/Support/FormatVariadic.h"
#include <cmath>

using namespace weft;

MemoryCounts StrategyCost::counts(double elements) const {
  MemoryCounts c;
  c.storedParameters = elements;
  if (!dual->trainable)
    return c;
  c.gradientParameters = dual->gradientSharded ? elements / idSize : elements;
  c.optimizerParameters = dual->optimizerSharded ? elements / idSize : elements;
  return c;
}

double StrategyCost::syncBytes(double elements) const {
  if (dual->gradientSync == spmd::Collective::AllReduce)
    return elements * gradientBytes;
  return elements * gradientBytes / idSize;
}

double StrategyCost::syncScale() const {
  if (dual->gradientSync == spmd::Collective::AllReduce)
    return gradientBytes;
  return gradientBytes / idSize;
}

StrategyCost weft::strategyCost(spmd::ParamStrategy strategy, double idSize,
                                DType dtype) {
  StrategyCost c;
  c.dual = &spmd::dualOf(strategy);
  c.idSize = idSize;
  c.gradientBytes = gradientBytesPerElement(dtype);
  c.parameterBytes = parameterBytesPerElement(dtype);
  return c;
}

double weft::optimizerFlopsPerElement(Optimizer optimizer) {
  switch (optimizer) {
  case Optimizer::Adam:
    return 12;
  case Optimizer::Momentum:
    return 4;
  case Optimizer::SGD:
    return 2;
  }
  return 2;
}

OpWork weft::optimizerUpdateWork(double elements, Optimizer optimizer,
                                 DType dtype) {
  double p = parameterBytesPerElement(dtype);
  double g = gradientBytesPerElement(dtype);
  double o = optimizerBytesPerElement(optimizer, dtype);
  OpWork work{OpClass::Elementwise,
              optimizerFlopsPerElement(optimizer) * elements,
              elements * (2 * p + g + 2 * o)};
  // A profile DB's key for one device's whole update (tools/weft-profile
  // measures the runtime's optimizer over a program's pieces).
  work.key = llvm::formatv("optimizer {0} [{1}]", toString(optimizer),
                           int64_t(std::llround(elements)))
                 .str();
  return work;
}
