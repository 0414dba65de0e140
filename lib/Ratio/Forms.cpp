//===- Forms.cpp - Convex piecewise-linear forms of the ratios ------------===//

#include "weft/Ratio/Forms.h"
#include "weft/Ratio/CostKey.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

using namespace weft;
using namespace weft::ratio;

void weft::ratio::canonicalize(LinearCost &cost) {
  std::sort(cost.terms.begin(), cost.terms.end(),
            [](const RatioTerm &a, const RatioTerm &b) {
              return std::make_pair(a.segment, a.deviceClass) <
                     std::make_pair(b.segment, b.deviceClass);
            });
  llvm::SmallVector<RatioTerm, 4> merged;
  for (const RatioTerm &t : cost.terms) {
    if (!merged.empty() && merged.back().segment == t.segment &&
        merged.back().deviceClass == t.deviceClass)
      merged.back().coef += t.coef;
    else
      merged.push_back(t);
  }
  llvm::erase_if(merged, [](const RatioTerm &t) { return t.coef == 0; });
  cost.terms = std::move(merged);
}

void weft::ratio::addScaled(LinearCost &into, const LinearCost &from,
                            double k) {
  if (k == 0)
    return;
  into.constant += k * from.constant;
  for (const RatioTerm &t : from.terms)
    into.terms.push_back({t.segment, t.deviceClass, k * t.coef});
  canonicalize(into);
}

LinearCost weft::ratio::scaledCost(const LinearCost &cost, double k) {
  LinearCost out;
  addScaled(out, cost, k);
  return out;
}

LinearCost weft::ratio::constantCost(double c) {
  LinearCost out;
  out.constant = c;
  return out;
}

double weft::ratio::valueAt(const LinearCost &cost, const Ratios &at) {
  double v = cost.constant;
  for (const RatioTerm &t : cost.terms)
    v += t.coef * at[t.segment][t.deviceClass];
  return v;
}

bool weft::ratio::isZero(const LinearCost &cost) {
  return cost.constant == 0 && cost.terms.empty();
}

void Form::add(const Form &other) {
  addScaled(lin, other.lin);
  maxes.append(other.maxes.begin(), other.maxes.end());
}

void Form::scale(double k) {
  lin = scaledCost(lin, k);
  for (MaxCost &m : maxes)
    m.scale *= k;
}

void Form::addMax(llvm::SmallVector<LinearCost, 2> pieces, double scale) {
  if (scale == 0)
    return;
  llvm::SmallVector<LinearCost, 2> kept;
  llvm::SmallVector<std::string, 2> keys;
  for (LinearCost &p : pieces) {
    canonicalize(p);
    if (isZero(p))
      continue;
    std::string k = linearKey(p);
    if (llvm::is_contained(keys, k))
      continue;
    keys.push_back(k);
    kept.push_back(std::move(p));
  }
  if (kept.empty())
    return;
  if (kept.size() == 1) {
    addScaled(lin, kept[0], scale);
    return;
  }
  if (llvm::all_of(kept, [](const LinearCost &p) { return p.terms.empty(); })) {
    double most = kept[0].constant;
    for (const LinearCost &p : kept)
      most = std::max(most, p.constant);
    lin.constant += scale * most;
    return;
  }
  MaxCost m;
  m.scale = scale;
  m.pieces = std::move(kept);
  maxes.push_back(std::move(m));
}

double Form::valueAt(const Ratios &at) const {
  double v = ratio::valueAt(lin, at);
  for (const MaxCost &m : maxes) {
    double best = -std::numeric_limits<double>::infinity();
    for (const LinearCost &p : m.pieces)
      best = std::max(best, ratio::valueAt(p, at));
    v += m.scale * best;
  }
  return v;
}

std::string Form::key() const {
  std::vector<std::string> keys;
  for (const MaxCost &m : maxes) {
    std::string k(reinterpret_cast<const char *>(&m.scale), sizeof(double));
    keys.push_back(k + piecesKey(m));
  }
  std::sort(keys.begin(), keys.end());
  std::string out = linearKey(lin);
  for (const std::string &k : keys)
    out += "|" + k;
  return out;
}

/// Every linear piece of `form` written as one max (the cartesian product of
/// its max terms).
static std::vector<LinearCost> expand(const Form &form) {
  std::vector<LinearCost> pieces{form.lin};
  for (const MaxCost &m : form.maxes) {
    std::vector<LinearCost> next;
    for (const LinearCost &p : pieces)
      for (const LinearCost &q : m.pieces) {
        LinearCost r = p;
        addScaled(r, q, m.scale);
        next.push_back(std::move(r));
      }
    pieces = std::move(next);
  }
  return pieces;
}

bool weft::ratio::identical(const LinearCost &a, const LinearCost &b) {
  return a.constant == b.constant && a.terms.size() == b.terms.size() &&
         std::equal(a.terms.begin(), a.terms.end(), b.terms.begin(),
                    [](const RatioTerm &x, const RatioTerm &y) {
                      return x.segment == y.segment &&
                             x.deviceClass == y.deviceClass && x.coef == y.coef;
                    });
}

/// Term by term equal, in the same order (equal keys without building
/// them: devices of one class and position build their forms alike).
static bool identicalForms(const Form &a, const Form &b) {
  if (!identical(a.lin, b.lin) || a.maxes.size() != b.maxes.size())
    return false;
  for (auto [x, y] : llvm::zip(a.maxes, b.maxes))
    if (x.scale != y.scale || x.pieces.size() != y.pieces.size() ||
        !llvm::all_of(llvm::zip(x.pieces, y.pieces), [](auto pq) {
          return identical(std::get<0>(pq), std::get<1>(pq));
        }))
      return false;
  return true;
}

Form weft::ratio::maxOfForms(llvm::ArrayRef<const Form *> forms,
                             const Ratios &at, bool &linearized,
                             unsigned limit) {
  // Identical forms first (cheap), then equal functions by key.
  std::vector<const Form *> unlike;
  for (const Form *f : forms)
    if (llvm::none_of(unlike,
                      [&](const Form *g) { return identicalForms(*f, *g); }))
      unlike.push_back(f);
  std::vector<const Form *> distinct;
  std::vector<std::string> keys;
  for (const Form *f : unlike) {
    std::string k = f->key();
    if (llvm::is_contained(keys, k))
      continue;
    keys.push_back(k);
    distinct.push_back(f);
  }
  if (distinct.empty())
    return Form();
  if (distinct.size() == 1)
    return *distinct[0];
  double count = 0;
  for (const Form *f : distinct) {
    double c = 1;
    for (const MaxCost &m : f->maxes)
      c *= m.pieces.size();
    count += c;
  }
  if (count <= limit) {
    llvm::SmallVector<LinearCost, 2> pieces;
    for (const Form *f : distinct)
      for (LinearCost &p : expand(*f))
        pieces.push_back(std::move(p));
    Form out;
    out.addMax(std::move(pieces));
    return out;
  }
  linearized = true;
  const Form *best = distinct[0];
  for (const Form *f : distinct)
    if (f->valueAt(at) > best->valueAt(at))
      best = f;
  return *best;
}
