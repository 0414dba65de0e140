//===- SequenceSplits.cpp - SplitToSequence read back by index ------------===//
//
// See SequenceSplits.h.
//
//===----------------------------------------------------------------------===//

#include "SequenceSplits.h"
#include "ConstTensor.h"
#include "ShapeFolding.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include <numeric>

using namespace weft;
using namespace weft::import;

namespace {

bool isDefaultDomain(const onnx::NodeProto &node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

const onnx::AttributeProto *attr(const onnx::NodeProto &node,
                                 llvm::StringRef name) {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

/// What the rewrite needs to know about the graph.
struct GraphFacts {
  llvm::StringMap<std::vector<int64_t>> shapes;
  llvm::StringMap<ConstTensor> constants;
  llvm::StringMap<std::vector<int>> users;
  llvm::StringSet<> names, outputs;
  int64_t opset = 0;

  explicit GraphFacts(const onnx::ModelProto &model);
  std::optional<int64_t> scalarInt(const std::string &name) const;
};

GraphFacts::GraphFacts(const onnx::ModelProto &model) {
  const onnx::GraphProto &graph = model.graph();
  for (const auto &entry : model.opset_import())
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      opset = entry.version();
  auto addShape = [&](const onnx::ValueInfoProto &vi) {
    names.insert(vi.name());
    if (auto dims = staticDims(vi))
      shapes[vi.name()] = std::move(*dims);
  };
  for (const auto &vi : graph.input())
    addShape(vi);
  for (const auto &vi : graph.value_info())
    addShape(vi);
  for (const auto &vi : graph.output()) {
    addShape(vi);
    outputs.insert(vi.name());
  }
  for (const auto &init : graph.initializer()) {
    names.insert(init.name());
    shapes[init.name()] =
        std::vector<int64_t>(init.dims().begin(), init.dims().end());
    if (init.data_type() == onnx::TensorProto::INT64 && init.dims_size() <= 1)
      if (auto c = readTensor(init))
        constants[init.name()] = std::move(*c);
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto &node = graph.node(i);
    for (const std::string &in : node.input())
      users[in].push_back(i);
    for (const std::string &out : node.output())
      names.insert(out);
    if (node.op_type() != "Constant" || !isDefaultDomain(node) ||
        node.output_size() != 1)
      continue;
    if (const auto *v = attr(node, "value"))
      if (auto c = readTensor(v->t()); c && c->isInteger())
        constants[node.output(0)] = std::move(*c);
    if (const auto *v = attr(node, "value_int")) {
      ConstTensor c;
      c.elementType = onnx::TensorProto::INT64;
      c.values = {double(v->i())};
      constants[node.output(0)] = std::move(c);
    }
  }
}

std::optional<int64_t> GraphFacts::scalarInt(const std::string &name) const {
  auto it = constants.find(name);
  if (it == constants.end() || it->second.values.size() != 1)
    return std::nullopt;
  return int64_t(it->second.values[0]);
}

/// A name not yet used in the graph.
std::string freshName(GraphFacts &facts, const std::string &base) {
  std::string name = base;
  for (int k = 1; facts.names.contains(name); ++k)
    name = base + "_" + std::to_string(k);
  facts.names.insert(name);
  return name;
}

/// Adds an int64 initializer (a constant: at most 64 elements).
std::string addInts(onnx::GraphProto &graph, GraphFacts &facts,
                    const std::string &base, llvm::ArrayRef<int64_t> values) {
  onnx::TensorProto *t = graph.add_initializer();
  t->set_name(freshName(facts, base));
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(int64_t(values.size()));
  for (int64_t v : values)
    t->add_int64_data(v);
  return t->name();
}

/// The piece sizes of `split` along an axis of `extent` elements, or
/// nothing if they are not known.
std::optional<std::vector<int64_t>> pieceSizes(const onnx::NodeProto &split,
                                               const GraphFacts &facts,
                                               int64_t extent) {
  if (split.input_size() < 2 || split.input(1).empty())
    return std::vector<int64_t>(extent, 1);
  auto it = facts.constants.find(split.input(1));
  if (it == facts.constants.end())
    return std::nullopt;
  const ConstTensor &c = it->second;
  std::vector<int64_t> sizes;
  if (c.dims.empty()) {
    int64_t piece = int64_t(c.values[0]);
    if (piece <= 0)
      return std::nullopt;
    for (int64_t at = 0; at < extent; at += piece)
      sizes.push_back(std::min(piece, extent - at));
  } else {
    sizes = c.asInts();
  }
  if (sizes.empty() || llvm::any_of(sizes, [](int64_t s) { return s < 0; }) ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != extent)
    return std::nullopt;
  return sizes;
}

bool rewrite(onnx::GraphProto &graph, GraphFacts &facts, int index) {
  onnx::NodeProto &split = *graph.mutable_node(index);
  if (split.op_type() != "SplitToSequence" || !isDefaultDomain(split) ||
      split.output_size() != 1 || split.input_size() < 1)
    return false;
  const std::string seq = split.output(0);
  auto shape = facts.shapes.find(split.input(0));
  if (shape == facts.shapes.end() || facts.outputs.contains(seq))
    return false;
  int64_t rank = shape->second.size();
  const auto *axisAttr = attr(split, "axis");
  int64_t axis = axisAttr ? axisAttr->i() : 0;
  axis = axis < 0 ? axis + rank : axis;
  if (axis < 0 || axis >= rank)
    return false;
  auto sizes = pieceSizes(split, facts, shape->second[axis]);
  if (!sizes)
    return false;
  const auto *keep = attr(split, "keepdims");
  bool squeeze = split.input_size() < 2 || split.input(1).empty()
                     ? keep && keep->i() == 0
                     : false;
  int64_t n = sizes->size();
  if (n == 0)
    return false;
  bool equal = llvm::all_equal(*sizes);
  if (!equal && n > 64)
    return false;

  // Every use must be a SequenceAt at a constant position in range.
  std::vector<std::pair<int, int64_t>> uses;
  for (int user : facts.users.lookup(seq)) {
    const onnx::NodeProto &at = graph.node(user);
    if (at.op_type() != "SequenceAt" || !isDefaultDomain(at) ||
        at.input_size() != 2 || at.input(0) != seq || at.output_size() != 1)
      return false;
    auto position = facts.scalarInt(at.input(1));
    if (!position)
      return false;
    int64_t p = *position < 0 ? *position + n : *position;
    if (p < 0 || p >= n)
      return false;
    uses.emplace_back(user, p);
  }

  std::string input = split.input(0);
  std::vector<std::string> pieces;
  for (int64_t k = 0; k < n; ++k)
    pieces.push_back(freshName(facts, seq + "_piece" + std::to_string(k)));
  bool attrForm = facts.opset < 13;
  std::string sizesName =
      equal || attrForm ? "" : addInts(graph, facts, seq + "_sizes", *sizes);
  onnx::NodeProto &node = *graph.mutable_node(index);
  node.clear_input();
  node.clear_output();
  node.clear_attribute();
  node.set_op_type("Split");
  node.add_input(input);
  if (!sizesName.empty())
    node.add_input(sizesName);
  for (const std::string &piece : pieces)
    node.add_output(piece);
  auto *axisOut = node.add_attribute();
  axisOut->set_name("axis");
  axisOut->set_type(onnx::AttributeProto::INT);
  axisOut->set_i(axis);
  if (attrForm && !equal) {
    auto *splitAttr = node.add_attribute();
    splitAttr->set_name("split");
    splitAttr->set_type(onnx::AttributeProto::INTS);
    for (int64_t s : *sizes)
      splitAttr->add_ints(s);
  }

  std::string axes =
      squeeze && !attrForm ? addInts(graph, facts, seq + "_axis", {axis}) : "";
  for (auto [user, p] : uses) {
    onnx::NodeProto &at = *graph.mutable_node(user);
    at.clear_input();
    at.clear_attribute();
    at.add_input(pieces[p]);
    at.set_op_type(squeeze ? "Squeeze" : "Identity");
    if (squeeze && attrForm) {
      auto *a = at.add_attribute();
      a->set_name("axes");
      a->set_type(onnx::AttributeProto::INTS);
      a->add_ints(axis);
    } else if (squeeze) {
      at.add_input(axes);
    }
  }
  auto *infos = graph.mutable_value_info();
  for (int i = infos->size() - 1; i >= 0; --i)
    if (infos->Get(i).name() == seq)
      infos->DeleteSubrange(i, 1);
  return true;
}

} // namespace

bool import::splitSequences(onnx::ModelProto &model) {
  if (llvm::none_of(model.graph().node(), [](const onnx::NodeProto &n) {
        return n.op_type() == "SplitToSequence";
      }))
    return false;
  GraphFacts facts(model);
  bool changed = false;
  onnx::GraphProto &graph = *model.mutable_graph();
  for (int i = 0; i < graph.node_size(); ++i)
    changed |= rewrite(graph, facts, i);
  return changed;
}
