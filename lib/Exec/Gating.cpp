//===- Gating.cpp - GShard top-2 gating with per-group capacity -----------===//

#include "weft/Exec/Gating.h"
#include "weft/Exec/Matmul.h"
#include "weft/Exec/Softmax.h"
#include <vector>

using namespace weft::exec;

namespace {

/// One token's routing: its two experts, their gates and slots (−1 when
/// the token was dropped for that expert or there is no second expert).
struct Route {
  int64_t expert[2] = {-1, -1};
  int64_t slot[2] = {-1, -1};
  double gate[2] = {0, 0};
};

struct Routing {
  int64_t g, s, e, c;
  Tensor probs;              // G×S×E
  std::vector<Route> routes; // G·S

  int64_t at(int64_t gi, int64_t si, int64_t ei, int64_t ci) const {
    return ((gi * s + si) * e + ei) * c + ci;
  }
};

Routing route(const Tensor &tokens, const Tensor &gate, int64_t capacity) {
  Routing r{tokens.getDim(0),
            tokens.getDim(1),
            gate.getDim(1),
            capacity,
            softmax(matmul(tokens, gate), 2),
            {}};
  r.routes.resize(r.g * r.s);
  for (int64_t gi = 0; gi < r.g; ++gi) {
    for (int64_t si = 0; si < r.s; ++si) {
      const float *p = r.probs.floats() + (gi * r.s + si) * r.e;
      Route &rt = r.routes[gi * r.s + si];
      for (int64_t ei = 0; ei < r.e; ++ei)
        if (rt.expert[0] < 0 || p[ei] > p[rt.expert[0]])
          rt.expert[0] = ei;
      for (int64_t ei = 0; ei < r.e; ++ei)
        if (ei != rt.expert[0] && (rt.expert[1] < 0 || p[ei] > p[rt.expert[1]]))
          rt.expert[1] = ei;
      double p1 = p[rt.expert[0]];
      double p2 = rt.expert[1] < 0 ? 0.0 : p[rt.expert[1]];
      rt.gate[0] = p1 / (p1 + p2);
      rt.gate[1] = p2 / (p1 + p2);
    }
    // Slots are counted per group: first choices, then second choices.
    std::vector<int64_t> used(r.e, 0);
    for (int k = 0; k < 2; ++k)
      for (int64_t si = 0; si < r.s; ++si) {
        Route &rt = r.routes[gi * r.s + si];
        if (rt.expert[k] >= 0 && used[rt.expert[k]] < capacity)
          rt.slot[k] = used[rt.expert[k]]++;
      }
  }
  return r;
}

} // namespace

GatingResult weft::exec::top2Gating(const Tensor &tokens, const Tensor &gate,
                                    int64_t capacity) {
  Routing r = route(tokens, gate, capacity);
  GatingResult out{Tensor(ElementType::F32, {r.g, r.s, r.e, r.c}),
                   Tensor(ElementType::F32, {r.g, r.s, r.e, r.c})};
  for (int64_t gi = 0; gi < r.g; ++gi)
    for (int64_t si = 0; si < r.s; ++si) {
      const Route &rt = r.routes[gi * r.s + si];
      for (int k = 0; k < 2; ++k) {
        if (rt.slot[k] < 0)
          continue;
        int64_t i = r.at(gi, si, rt.expert[k], rt.slot[k]);
        out.dispatch.floats()[i] = 1.0f;
        out.combine.floats()[i] = float(rt.gate[k]);
      }
    }
  return out;
}

BinaryGrads weft::exec::top2GatingBackward(const Tensor &tokens,
                                           const Tensor &gate,
                                           const Tensor &dCombine,
                                           int64_t capacity) {
  Routing r = route(tokens, gate, capacity);
  Tensor dLogits(ElementType::F32, r.probs.getShape());
  std::vector<double> dp(r.e);
  for (int64_t gi = 0; gi < r.g; ++gi)
    for (int64_t si = 0; si < r.s; ++si) {
      const Route &rt = r.routes[gi * r.s + si];
      const float *p = r.probs.floats() + (gi * r.s + si) * r.e;
      double dg[2] = {0, 0};
      for (int k = 0; k < 2; ++k)
        if (rt.slot[k] >= 0)
          dg[k] = dCombine.floats()[r.at(gi, si, rt.expert[k], rt.slot[k])];
      std::fill(dp.begin(), dp.end(), 0.0);
      if (rt.expert[1] >= 0) {
        // g1 = p1/(p1+p2), g2 = p2/(p1+p2).
        double p1 = p[rt.expert[0]], p2 = p[rt.expert[1]];
        double s2 = (p1 + p2) * (p1 + p2);
        dp[rt.expert[0]] = p2 * (dg[0] - dg[1]) / s2;
        dp[rt.expert[1]] = p1 * (dg[1] - dg[0]) / s2;
      }
      // With one expert its gate is the constant 1: no gradient.
      double dot = 0;
      for (int64_t ei = 0; ei < r.e; ++ei)
        dot += p[ei] * dp[ei];
      float *dl = dLogits.floats() + (gi * r.s + si) * r.e;
      for (int64_t ei = 0; ei < r.e; ++ei)
        dl[ei] = float(p[ei] * (dp[ei] - dot));
    }
  return matmulBackward(tokens, gate, dLogits);
}
