//===- NodeContext.cpp - A legalisation handler's view of a node ----------===//

#include "Importer.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/StringExtras.h"

using namespace weft;
using namespace weft::import;

mlir::OpBuilder &NodeContext::builder() { return importer.builder; }

mlir::Location NodeContext::loc() {
  return importer.nameLoc(node.name().empty() ? node.output(0) : node.name());
}

int64_t NodeContext::opset() const { return importer.report.opsetVersion; }

bool NodeContext::hasInput(unsigned i) const {
  return int(i) < node.input_size() && !node.input(i).empty();
}

llvm::Expected<mlir::Value> NodeContext::optionalInput(unsigned i) {
  if (!hasInput(i))
    return mlir::Value();
  return input(i);
}

llvm::Expected<mlir::Value> NodeContext::input(unsigned i) {
  if (!hasInput(i))
    return badInput("{0} node '{1}' lacks input {2}", node.op_type(),
                    node.name(), i);
  return importer.valueOf(node.input(i));
}

const ConstTensor *NodeContext::constantInput(unsigned i) const {
  if (!hasInput(i))
    return nullptr;
  std::string name = node.input(i);
  auto alias = importer.aliases.find(name);
  if (alias != importer.aliases.end())
    name = alias->second;
  auto it = importer.constants.find(name);
  return it == importer.constants.end() ? nullptr : &it->second;
}

llvm::Expected<std::vector<int64_t>>
NodeContext::constantInts(unsigned i, llvm::StringRef what) {
  const ConstTensor *c = constantInput(i);
  if (!c)
    return unsupported((what + " must be a constant").str());
  return c->asInts();
}

llvm::Expected<mlir::RankedTensorType> NodeContext::resultType(unsigned i) {
  return importer.typeOf(node.output(i));
}

void NodeContext::setResult(unsigned i, mlir::Value value) {
  if (int(i) < node.output_size() && !node.output(i).empty())
    importer.values[node.output(i)] = value;
}

void NodeContext::setConstantResult(unsigned i, ConstTensor value) {
  if (int(i) < node.output_size() && !node.output(i).empty())
    importer.constants[node.output(i)] = std::move(value);
}

static const onnx::AttributeProto *findAttr(const onnx::NodeProto &node,
                                            llvm::StringRef name) {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

bool NodeContext::hasAttr(llvm::StringRef name) const {
  return findAttr(node, name) != nullptr;
}

int64_t NodeContext::attrInt(llvm::StringRef name, int64_t dflt) const {
  const auto *a = findAttr(node, name);
  return a ? a->i() : dflt;
}

double NodeContext::attrFloat(llvm::StringRef name, double dflt) const {
  const auto *a = findAttr(node, name);
  return a ? a->f() : dflt;
}

std::vector<int64_t> NodeContext::attrInts(llvm::StringRef name) const {
  const auto *a = findAttr(node, name);
  if (!a)
    return {};
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::string NodeContext::attrString(llvm::StringRef name,
                                    llvm::StringRef dflt) const {
  const auto *a = findAttr(node, name);
  return a ? a->s() : dflt.str();
}

llvm::Error NodeContext::unsupported(llvm::StringRef why) const {
  return badInput("unsupported ONNX {0} (node '{1}', opset {2}): {3}; see "
                  "docs/Import.md",
                  node.op_type(), node.name(), opset(), why);
}
