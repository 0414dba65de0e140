//===- LegalizeEinsum.cpp - Einsum as transposes, products and sums -------===//
//
// Einsum is legalised pairwise, left to right, into graph ops
// (docs/Import.md, "Decompositions"):
//
//  1. each operand is summed (reduce_sum) over the labels that appear in no
//     other operand and not in the output;
//  2. two operands A and B have batch labels (in both, needed later),
//     contracted labels (in both, not needed later) and free labels (in one
//     only). With contracted labels, A is transposed to [batch, free A,
//     contracted] and B to [batch, contracted, free B], each reshaped to
//     one M, K, N dim, and multiplied by graph.matmul, which keeps the
//     batch dims as they are (so the sharding rules can split them); the
//     product is reshaped back to [batch, free A, free B]. Without, the two
//     are transposed and reshaped so that numpy broadcasting of graph.mul
//     forms the outer product;
//  3. the result is transposed to the output's order.
//
// Transposes and reshapes that change nothing are not emitted, so
// "bij,bjk->bik" is one matmul and "bhqd,bhkd->bhqk" a transpose and a
// matmul. An ellipsis stands for unnamed dims aligned from the right, as in
// numpy. Repeated labels within one operand (diagonals, traces) and labels
// whose extents differ between operands are unsupported, with the reason.
//
//===----------------------------------------------------------------------===//

#include "Decompose.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <map>
#include <numeric>

using namespace weft;
using namespace weft::import;

namespace {

/// Labels of an operand's dims: letters as their character codes, ellipsis
/// dims as kEllipsis + k with k counted from the right (1-based).
using Labels = llvm::SmallVector<int>;
constexpr int kEllipsis = 1000;

struct Term {
  mlir::Value value;
  Labels labels;
};

std::string labelName(int label) {
  if (label < kEllipsis)
    return std::string(1, char(label));
  return "... dim " + std::to_string(label - kEllipsis);
}

/// Parses one term. `ellipsisDims` is how many dims "..." stands for.
llvm::Expected<Labels> parseTerm(NodeContext &ctx, llvm::StringRef text,
                                 int64_t ellipsisDims) {
  Labels labels;
  size_t dots = text.find("...");
  for (size_t i = 0; i < text.size(); ++i) {
    if (i == dots) {
      for (int64_t k = ellipsisDims; k >= 1; --k)
        labels.push_back(kEllipsis + k);
      i += 2;
      continue;
    }
    if (!llvm::isAlpha(text[i]))
      return ctx.unsupported(("equation term '" + text + "'").str());
    labels.push_back(text[i]);
  }
  return labels;
}

size_t letterCount(llvm::StringRef term) {
  return llvm::count_if(term, [](char ch) { return llvm::isAlpha(ch); });
}

bool contains(llvm::ArrayRef<int> labels, int l) {
  return llvm::is_contained(labels, l);
}

class Einsum {
public:
  explicit Einsum(NodeContext &ctx) : ctx(ctx), c(ctx) {}
  llvm::Error run();

private:
  llvm::Error parse(llvm::SmallVectorImpl<Term> &terms, Labels &output);
  Term sumOut(Term t, llvm::ArrayRef<int> needed);
  llvm::Expected<Term> contract(Term a, Term b, llvm::ArrayRef<int> keep);
  mlir::Value arrange(const Term &t, llvm::ArrayRef<int> order);
  llvm::SmallVector<int64_t> sizes(llvm::ArrayRef<int> labels) const;
  int64_t product(llvm::ArrayRef<int> labels) const;

  NodeContext &ctx;
  Composer c;
  std::map<int, int64_t> extent;
};

llvm::Error Einsum::parse(llvm::SmallVectorImpl<Term> &terms, Labels &output) {
  std::string eq;
  for (char ch : ctx.attrString("equation", ""))
    if (!llvm::isSpace(ch))
      eq.push_back(ch);
  llvm::StringRef text(eq);
  auto [lhs, rhs] = text.split("->");
  bool explicitOutput = text.contains("->");
  llvm::SmallVector<llvm::StringRef> parts;
  lhs.split(parts, ',');
  int inputs = ctx.getNode().input_size();
  if (int(parts.size()) != inputs)
    return badInput("ONNX Einsum node '{0}': equation '{1}' names {2} "
                    "operands, the node has {3}",
                    ctx.getNode().name(), eq, parts.size(), inputs);
  int64_t maxEllipsis = 0;
  std::map<int, int> uses;
  for (auto [i, part] : llvm::enumerate(parts)) {
    auto v = ctx.input(i);
    if (!v)
      return v.takeError();
    int64_t rank = shapeOf(*v).size();
    int64_t letters = letterCount(part);
    bool ellipsis = part.contains("...");
    int64_t dims = ellipsis ? rank - letters : 0;
    if (dims < 0 || (!ellipsis && letters != rank))
      return badInput("ONNX Einsum node '{0}': term '{1}' does not match its "
                      "operand of rank {2}",
                      ctx.getNode().name(), part, rank);
    maxEllipsis = std::max(maxEllipsis, dims);
    auto labels = parseTerm(ctx, part, dims);
    if (!labels)
      return labels.takeError();
    for (auto [d, l] : llvm::enumerate(*labels)) {
      if (llvm::count(*labels, l) > 1)
        return ctx.unsupported("label '" + labelName(l) +
                               "' repeated within one operand (a diagonal)");
      int64_t n = shapeOf(*v)[d];
      auto [it, fresh] = extent.emplace(l, n);
      if (!fresh && it->second != n)
        return ctx.unsupported("label '" + labelName(l) + "' has extents " +
                               std::to_string(it->second) + " and " +
                               std::to_string(n));
      ++uses[l];
    }
    terms.push_back({*v, std::move(*labels)});
  }
  if (explicitOutput) {
    auto labels = parseTerm(ctx, rhs, maxEllipsis);
    if (!labels)
      return labels.takeError();
    output = std::move(*labels);
  } else {
    // numpy's implicit output: the ellipsis dims, then the letters used
    // once, in alphabetical order.
    for (int64_t k = maxEllipsis; k >= 1; --k)
      output.push_back(kEllipsis + k);
    for (auto [l, n] : uses)
      if (l < kEllipsis && n == 1)
        output.push_back(l);
  }
  for (int l : output)
    if (!extent.count(l) || llvm::count(output, l) > 1)
      return badInput("ONNX Einsum node '{0}': output label '{1}' {2}",
                      ctx.getNode().name(), labelName(l),
                      extent.count(l) ? "is repeated" : "is no input's");
  for (auto &[l, n] : uses)
    if (l > kEllipsis && !contains(output, l))
      return ctx.unsupported("'...' in the inputs but not in the output");
  return llvm::Error::success();
}

llvm::SmallVector<int64_t> Einsum::sizes(llvm::ArrayRef<int> labels) const {
  llvm::SmallVector<int64_t> out;
  for (int l : labels)
    out.push_back(extent.at(l));
  return out;
}

int64_t Einsum::product(llvm::ArrayRef<int> labels) const {
  int64_t p = 1;
  for (int l : labels)
    p *= extent.at(l);
  return p;
}

/// Sums `t` over its labels not in `needed`.
Term Einsum::sumOut(Term t, llvm::ArrayRef<int> needed) {
  llvm::SmallVector<int64_t> axes;
  Labels kept;
  for (auto [d, l] : llvm::enumerate(t.labels)) {
    if (contains(needed, l))
      kept.push_back(l);
    else
      axes.push_back(d);
  }
  if (axes.empty())
    return t;
  return {c.reduce<graph::ReduceSumOp>(t.value, axes, /*keepdims=*/false),
          kept};
}

/// `t` transposed so that its labels come in `order` (a permutation).
mlir::Value Einsum::arrange(const Term &t, llvm::ArrayRef<int> order) {
  llvm::SmallVector<int64_t> perm;
  for (int l : order)
    perm.push_back(llvm::find(t.labels, l) - t.labels.begin());
  return c.transpose(t.value, perm);
}

llvm::Expected<Term> Einsum::contract(Term a, Term b,
                                      llvm::ArrayRef<int> keep) {
  Labels needA(keep.begin(), keep.end()), needB = needA;
  needA.append(b.labels);
  needB.append(a.labels);
  a = sumOut(std::move(a), needA);
  b = sumOut(std::move(b), needB);
  Labels batch, contracted, freeA, freeB;
  for (int l : a.labels) {
    if (!contains(b.labels, l))
      freeA.push_back(l);
    else if (contains(keep, l))
      batch.push_back(l);
    else
      contracted.push_back(l);
  }
  for (int l : b.labels)
    if (!contains(a.labels, l))
      freeB.push_back(l);
  Labels result = batch;
  result.append(freeA);
  result.append(freeB);

  if (contracted.empty()) {
    // An outer (or elementwise) product: [batch, free A, 1...] times
    // [batch, 1..., free B].
    Labels orderA = batch, orderB = batch;
    orderA.append(freeA);
    orderB.append(freeB);
    llvm::SmallVector<int64_t> shapeA = sizes(orderA), shapeB = sizes(batch);
    shapeA.append(freeB.size(), 1);
    shapeB.append(freeA.size(), 1);
    shapeB.append(sizes(freeB));
    mlir::Value x = c.reshape(arrange(a, orderA), shapeA);
    mlir::Value y = c.reshape(arrange(b, orderB), shapeB);
    return Term{c.mul(x, y), result};
  }

  if (!elementOf(a.value).isa<mlir::FloatType>())
    return ctx.unsupported("a contraction of integer operands");
  Labels orderA = batch, orderB = batch;
  orderA.append(freeA);
  orderA.append(contracted);
  orderB.append(contracted);
  orderB.append(freeB);
  llvm::SmallVector<int64_t> shapeA = sizes(batch), shapeB = sizes(batch);
  shapeA.append({product(freeA), product(contracted)});
  shapeB.append({product(contracted), product(freeB)});
  mlir::Value x = c.reshape(arrange(a, orderA), shapeA);
  mlir::Value y = c.reshape(arrange(b, orderB), shapeB);
  return Term{c.reshape(c.matmul(x, y), sizes(result)), result};
}

llvm::Error Einsum::run() {
  llvm::SmallVector<Term> terms;
  Labels output;
  if (auto err = parse(terms, output))
    return err;
  // Step 1: labels of one operand only that the output drops.
  for (size_t i = 0; i < terms.size(); ++i) {
    Labels needed = output;
    for (size_t j = 0; j < terms.size(); ++j)
      if (j != i)
        needed.append(terms[j].labels);
    terms[i] = sumOut(std::move(terms[i]), needed);
  }
  Term acc = std::move(terms[0]);
  for (size_t i = 1; i < terms.size(); ++i) {
    Labels keep = output;
    for (size_t j = i + 1; j < terms.size(); ++j)
      keep.append(terms[j].labels);
    auto next = contract(std::move(acc), std::move(terms[i]), keep);
    if (!next)
      return next.takeError();
    acc = std::move(*next);
  }
  return c.finish(arrange(acc, output));
}

llvm::Error einsum(NodeContext &ctx) { return Einsum(ctx).run(); }

} // namespace

void import::registerEinsumHandler(HandlerTable &t) { t["Einsum"] = einsum; }
