//===- Linearize.cpp - First-order pieces for non-linear costs ------------===//

#include "weft/Ratio/Linearize.h"
#include <algorithm>

using namespace weft;
using namespace weft::ratio;

double weft::ratio::allToAllSeconds(double shareFrom, double shareTo,
                                    double bytes, double bandwidth) {
  double send = shareFrom * (1 - shareTo);
  double receive = shareTo * (1 - shareFrom);
  return std::max(send, receive) * bytes / bandwidth;
}

/// Tangent plane of x·(1 − y) at (x0, y0): x0·y0 + (1 − y0)·x − x0·y.
static LinearCost tangent(unsigned segX, unsigned segY, unsigned c, double x0,
                          double y0) {
  LinearCost plane;
  plane.constant = x0 * y0;
  plane.terms.push_back({segX, c, 1 - y0});
  plane.terms.push_back({segY, c, -x0});
  return plane;
}

MaxCost weft::ratio::linearizeAllToAll(unsigned from, unsigned to, unsigned c,
                                       double bytes, double bandwidth,
                                       const Ratios &center) {
  double x0 = center[from][c], y0 = center[to][c];
  MaxCost cost;
  cost.scale = bytes / bandwidth;
  cost.pieces.push_back(tangent(from, to, c, x0, y0));
  cost.pieces.push_back(tangent(to, from, c, y0, x0));
  return cost;
}
