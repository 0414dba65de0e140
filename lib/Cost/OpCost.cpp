//===- OpCost.cpp - Roofline op time
//---------------------------------------===//

#include "weft/Cost/OpCost.h"
#include <algorithm>

using namespace weft;

OpTime weft::rooflineTime(const DeviceType &type, DType dtype,
                          const OpWork &work) {
  OpTime t;
  double computeSeconds =
      work.flops > 0 ? work.flops / type.achievedFlops(work.opClass, dtype) : 0;
  double memorySeconds =
      work.bytes > 0 ? work.bytes / type.achievedMemBandwidth() : 0;
  t.computeBound = computeSeconds >= memorySeconds;
  t.seconds = std::max(computeSeconds, memorySeconds);
  return t;
}

OpTime weft::opTime(const DeviceType &type, DType dtype, const OpWork &work,
                    std::optional<double> measuredSeconds) {
  if (!measuredSeconds)
    return rooflineTime(type, dtype, work);
  OpTime t;
  t.seconds = *measuredSeconds;
  t.measured = true;
  return t;
}

OpWork weft::defaultBackwardWork(const OpWork &forward) {
  OpWork backward = forward;
  backward.flops *= 2;
  backward.bytes *= 2;
  return backward;
}

double weft::trainingOpSeconds(const DeviceType &type, DType dtype,
                               const OpCostTerms &terms) {
  return rooflineTime(type, dtype, terms.forward).seconds +
         rooflineTime(type, dtype, terms.backward).seconds;
}
