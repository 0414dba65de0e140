//===- ZooTestUtils.h - Helpers shared by the zoo's unit tests --*- C++ -*-===//

#ifndef WEFT_TEST_UNIT_ZOO_ZOOTESTUTILS_H
#define WEFT_TEST_UNIT_ZOO_ZOOTESTUTILS_H

#include "weft/Zoo/ZooModel.h"
#include "gtest/gtest.h"
#include <map>
#include <set>

namespace weft {
namespace zoo {

/// Prints kinds by name in gtest messages.
inline void PrintTo(ZooModelKind kind, std::ostream *os) {
  *os << zooModelName(kind).str();
}

/// Builds a model or fails the test with the error message.
inline onnx::ModelProto buildOrFail(const ZooOptions &options) {
  llvm::Expected<onnx::ModelProto> model = buildZooModel(options);
  if (!model) {
    ADD_FAILURE() << llvm::toString(model.takeError());
    return onnx::ModelProto();
  }
  return std::move(*model);
}

/// Static dims of a graph input or initializer named `name` (empty if none).
inline std::vector<int64_t> parameterShape(const onnx::ModelProto &model,
                                           const std::string &name) {
  std::vector<int64_t> shape;
  for (const auto &input : model.graph().input())
    if (input.name() == name)
      for (const auto &dim : input.type().tensor_type().shape().dim())
        shape.push_back(dim.dim_value());
  for (const auto &init : model.graph().initializer())
    if (init.name() == name)
      shape.assign(init.dims().begin(), init.dims().end());
  return shape;
}

/// Sum of the element counts of all parameters listed in weft.parameters.
inline uint64_t listedParameterCount(const onnx::ModelProto &model) {
  uint64_t total = 0;
  for (const std::string &name : listedParameters(model)) {
    uint64_t n = 1;
    for (int64_t d : parameterShape(model, name))
      n *= uint64_t(d);
    total += n;
  }
  return total;
}

/// Op types used by the model, prefixed by the domain when not default.
inline std::set<std::string> opTypes(const onnx::ModelProto &model) {
  std::set<std::string> ops;
  for (const auto &node : model.graph().node())
    ops.insert(node.domain().empty() ? node.op_type()
                                     : node.domain() + "." + node.op_type());
  return ops;
}

/// How many nodes of `opType` the model has.
inline int countOps(const onnx::ModelProto &model, const std::string &opType) {
  int n = 0;
  for (const auto &node : model.graph().node())
    n += node.op_type() == opType;
  return n;
}

} // namespace zoo
} // namespace weft

#endif // WEFT_TEST_UNIT_ZOO_ZOOTESTUTILS_H
