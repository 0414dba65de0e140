//===- LowerBound.cpp - The compute lower bound
//----------------------------===//

#include "weft/Cost/LowerBound.h"

using namespace weft;

double weft::lowerBoundSeconds(double trainingFlops, const ClusterSpec &spec,
                               DType dtype) {
  double peak = spec.totalPeakFlops(dtype);
  return peak > 0 ? trainingFlops / peak : 0;
}

double weft::lowerBoundSeconds(double trainingFlops, const ClusterSpec &spec,
                               llvm::ArrayRef<unsigned> devices, DType dtype) {
  double peak = 0;
  for (unsigned d : devices)
    peak += spec.typeOf(d).peakFlops(dtype);
  return peak > 0 ? trainingFlops / peak : 0;
}
