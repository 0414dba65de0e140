//===- PlanForms.cpp - Costs of a plan as functions of the ratios ---------===//
//
// The collective times mirror weft/Cost/Collective.cpp and Network.cpp term
// by term (a round: max latency + max over link resources of load /
// capacity); the consistency gtest (FromPlanTest) compares the resulting
// objective with evaluatePlan.
//
//===----------------------------------------------------------------------===//

#include "PlanForms.h"
#include "CostKey.h"
#include "weft/Cost/Network.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

using namespace weft;
using namespace weft::ratio;
using spmd::Collective;

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

const Form &CollectiveForms::time(Collective kind,
                                  llvm::ArrayRef<unsigned> group,
                                  llvm::ArrayRef<LinearCost> bytes,
                                  CollectiveChoice choice) {
  std::string key;
  int tag[] = {int(kind), int(choice.algo), int(choice.bestAllReduce),
               int(choice.uneven)};
  key.append(reinterpret_cast<const char *>(tag), sizeof(tag));
  key.append(reinterpret_cast<const char *>(group.data()),
             group.size() * sizeof(unsigned));
  for (const LinearCost &b : bytes)
    key += "/" + linearKey(b);
  auto it = memo.find(key);
  if (it != memo.end())
    return it->second;
  return memo.try_emplace(key, compute(kind, group, bytes, choice))
      .first->second;
}

void CollectiveForms::addNicPieces(llvm::SmallVector<LinearCost, 2> &pieces,
                                   llvm::ArrayRef<unsigned> group,
                                   llvm::ArrayRef<LinearCost> bytes) {
  std::vector<unsigned> nodes;
  for (unsigned d : group)
    if (!llvm::is_contained(nodes, spec.devices[d].node))
      nodes.push_back(spec.devices[d].node);
  if (nodes.size() <= 1)
    return;
  for (unsigned node : nodes) {
    LinearCost outside;
    double bw = spec.nodes[node].nicBandwidth();
    for (unsigned i = 0; i < group.size(); ++i)
      if (spec.devices[group[i]].node != node)
        addScaled(outside, bytes[i], 1 / bw);
    pieces.push_back(std::move(outside));
  }
}

llvm::SmallVector<LinearCost, 2> CollectiveForms::roundPieces(
    llvm::ArrayRef<std::pair<unsigned, unsigned>> links,
    llvm::ArrayRef<LinearCost> bytes, double &latency) {
  // Resource -> (load, capacity), as roundBandwidthSeconds.
  std::map<std::pair<int, unsigned>, std::pair<LinearCost, double>> loads;
  auto load = [&](int kind, unsigned index, const LinearCost &b, double cap) {
    auto &entry = loads[{kind, index}];
    addScaled(entry.first, b);
    entry.second = cap;
  };
  latency = 0;
  for (auto [i, link] : llvm::enumerate(links)) {
    auto [src, dst] = link;
    if (src == dst || isZero(bytes[i]))
      continue;
    latency = std::max(latency, linkLatency(spec, src, dst));
    unsigned a = spec.devices[src].node, b = spec.devices[dst].node;
    if (a == b) {
      double intra = spec.nodes[a].intraBandwidth();
      load(0, src, bytes[i], intra);
      load(1, dst, bytes[i], intra);
      continue;
    }
    load(2, a, bytes[i], spec.nodes[a].nicBandwidth());
    load(3, b, bytes[i], spec.nodes[b].nicBandwidth());
    int la = spec.nodes[a].leafIndex, lb = spec.nodes[b].leafIndex;
    if (la != lb && la >= 0 && lb >= 0) {
      load(4, unsigned(la), bytes[i],
           spec.topology.leaves[la].uplinkBandwidth());
      load(5, unsigned(lb), bytes[i],
           spec.topology.leaves[lb].uplinkBandwidth());
    }
  }
  llvm::SmallVector<LinearCost, 2> pieces;
  for (auto &[resource, entry] : loads)
    if (entry.second > 0)
      pieces.push_back(scaledCost(entry.first, 1 / entry.second));
  return pieces;
}

Form CollectiveForms::compute(Collective kind, llvm::ArrayRef<unsigned> group,
                              llvm::ArrayRef<LinearCost> bytes,
                              CollectiveChoice choice) {
  Form out;
  unsigned n = group.size();
  if (n <= 1 || !spmd::communicates(kind) ||
      llvm::all_of(bytes, [](const LinearCost &b) { return isZero(b); }))
    return out;
  // Distinct member byte counts (the largest is what a padded or all-reduce
  // collective moves).
  std::vector<LinearCost> distinct;
  {
    std::vector<std::string> keys;
    for (const LinearCost &b : bytes) {
      std::string k = linearKey(b);
      if (!llvm::is_contained(keys, k)) {
        keys.push_back(k);
        distinct.push_back(b);
      }
    }
  }
  llvm::SmallVector<std::pair<unsigned, unsigned>> ring;
  for (unsigned i = 0; i < n; ++i)
    ring.push_back({group[i], group[(i + 1) % n]});

  switch (kind) {
  case Collective::AllReduce: {
    AllReduceAlgo algo = choice.algo;
    if (choice.bestAllReduce) {
      double largest = 0;
      bool constant = true;
      for (const LinearCost &b : distinct) {
        largest = std::max(largest, valueAt(b, at));
        constant &= b.terms.empty();
      }
      double ring = allReduceSeconds(spec, group, largest, AllReduceAlgo::Ring);
      double hier =
          allReduceSeconds(spec, group, largest, AllReduceAlgo::Hierarchical);
      algo = hier < ring ? AllReduceAlgo::Hierarchical : AllReduceAlgo::Ring;
      if (!constant && ring != hier)
        linearized = true;
    }
    // The all-reduce time is affine in the buffer size for a fixed group:
    // a + s·L (probed at small and large L; two pieces if they differ).
    auto affine = [&](double l) {
      double t1 = allReduceSeconds(spec, group, l, algo);
      double t2 = allReduceSeconds(spec, group, 2 * l, algo);
      double s = (t2 - t1) / l;
      return std::make_pair(t1 - s * l, s);
    };
    auto [a0, s0] = affine(1);
    auto [a1, s1] = affine(1e9);
    llvm::SmallVector<LinearCost, 2> pieces;
    for (const LinearCost &b : distinct) {
      LinearCost p = scaledCost(b, s0);
      p.constant += a0;
      pieces.push_back(std::move(p));
      if (std::fabs(a1 - a0) > 1e-12 * std::max(1.0, std::fabs(a0)) ||
          std::fabs(s1 - s0) > 1e-9 * std::fabs(s0)) {
        LinearCost q = scaledCost(b, s1);
        q.constant += a1;
        pieces.push_back(std::move(q));
      }
    }
    out.addMax(std::move(pieces));
    return out;
  }
  case Collective::AllGather:
  case Collective::ReduceScatter: {
    llvm::SmallVector<LinearCost, 2> pieces;
    if (choice.uneven == UnevenVariant::Padded) {
      std::vector<Transfer> unit;
      for (auto [s, d] : ring)
        unit.push_back({s, d, 1.0});
      double beta = roundBandwidthSeconds(spec, unit);
      double lat = roundSeconds(spec, unit) - beta;
      for (const LinearCost &b : distinct) {
        LinearCost p = scaledCost(b, (n - 1) * beta);
        p.constant += (n - 1) * lat;
        pieces.push_back(std::move(p));
      }
    } else {
      LinearCost total;
      for (const LinearCost &b : bytes)
        addScaled(total, b);
      std::vector<LinearCost> linkBytes;
      for (unsigned i = 0; i < n; ++i) {
        LinearCost l = total;
        addScaled(l, bytes[(i + 1) % n], -1);
        linkBytes.push_back(scaledCost(l, 1 / options.groupedEfficiency));
      }
      double unused = 0;
      double ringLatency = 0;
      for (auto [s, d] : ring)
        ringLatency = std::max(ringLatency, linkLatency(spec, s, d));
      for (LinearCost &p : roundPieces(ring, linkBytes, unused)) {
        p.constant += (n - 1) * ringLatency;
        pieces.push_back(std::move(p));
      }
    }
    addNicPieces(pieces, group, bytes);
    out.addMax(std::move(pieces));
    return out;
  }
  case Collective::AllToAll: {
    llvm::SmallVector<std::pair<unsigned, unsigned>> links;
    std::vector<LinearCost> linkBytes;
    for (unsigned i = 0; i < n; ++i)
      for (unsigned j = 0; j < n; ++j)
        if (i != j) {
          links.push_back({group[i], group[j]});
          linkBytes.push_back(scaledCost(bytes[i], 1.0 / n));
        }
    double latency = 0;
    llvm::SmallVector<LinearCost, 2> pieces =
        roundPieces(links, linkBytes, latency);
    out.lin.constant += latency;
    out.addMax(std::move(pieces));
    return out;
  }
  default:
    return out;
  }
}
