//===- GraphBuilder.h - Op-by-op construction of ONNX graphs ----*- C++ -*-===//
//
// A thin helper over onnx::GraphProto used by the zoo's model families:
// inputs, parameters (graph inputs in weightless models, initializers with
// --with-weights), nodes with generated output names, constants and explicit
// shapes where ONNX's shape inference cannot find them.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_ZOO_GRAPHBUILDER_H
#define WEFT_ZOO_GRAPHBUILDER_H

#include "onnx/onnx_pb.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace weft {
namespace zoo {

/// One tensor dim: a static size, or a named symbol such as `batch` or
/// `batch*128` (the flattened batch × sequence dim).
struct Dim {
  int64_t size = 0;
  std::string symbol;

  Dim(int64_t size) : size(size) {}
  Dim(std::string symbol) : symbol(std::move(symbol)) {}
  bool isSymbolic() const { return !symbol.empty(); }
};
using Dims = std::vector<Dim>;

/// How `--with-weights` fills a parameter.
enum class ParamInit { Weight, Zeros, Ones };

/// A parameter as declared by a model family.
struct ParamInfo {
  std::string name;
  std::vector<int64_t> shape;
  ParamInit init;
};

/// One node attribute. Build with the static helpers.
struct Attr {
  std::string name;
  onnx::AttributeProto::AttributeType type = onnx::AttributeProto::UNDEFINED;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;

  static Attr integer(llvm::StringRef name, int64_t value);
  static Attr real(llvm::StringRef name, float value);
  static Attr string(llvm::StringRef name, llvm::StringRef value);
  static Attr integers(llvm::StringRef name, llvm::ArrayRef<int64_t> values);
};

/// Builds one graph op by op. Value names are generated from the current
/// scope (see `Scope`) so nodes read like `layer.3.attention/MatMul_2`.
class GraphBuilder {
public:
  /// `batch` fixes the batch dim; unset keeps it symbolic (`batch`).
  GraphBuilder(onnx::GraphProto &graph, std::optional<int64_t> batch);

  /// The batch dim, optionally multiplied by `factor` (e.g. batch × seq when
  /// tokens are flattened; symbolic as `batch*<factor>`).
  Dim batchDim(int64_t factor = 1) const;

  /// Adds a data input (image, token ids, labels).
  std::string addInput(llvm::StringRef name, int32_t elemType,
                       const Dims &dims);
  /// Declares a float parameter. It becomes a graph input or an initializer
  /// when the model is finished.
  std::string addParam(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                       ParamInit init = ParamInit::Weight);
  /// Adds a node in `domain` with `numOutputs` results; returns their names.
  std::vector<std::string> addNodeMulti(llvm::StringRef opType,
                                        llvm::ArrayRef<std::string> inputs,
                                        llvm::ArrayRef<Attr> attrs,
                                        unsigned numOutputs,
                                        llvm::StringRef domain = "");
  /// Adds a single-result node of the default domain; returns its output.
  std::string addNode(llvm::StringRef opType,
                      llvm::ArrayRef<std::string> inputs,
                      llvm::ArrayRef<Attr> attrs = {});

  /// Renames the single output of the last node added; returns `name`.
  std::string renameLastOutput(llvm::StringRef name);

  /// A Constant node holding a 1-D int64 tensor.
  std::string constInts(llvm::ArrayRef<int64_t> values);
  /// A Constant node holding an int64 scalar.
  std::string constInt(int64_t value);
  /// A Constant node holding a float scalar.
  std::string constFloat(float value);
  /// A Constant node holding a bool tensor of `shape` (row-major `values`).
  std::string constBools(llvm::ArrayRef<int64_t> shape,
                         const std::vector<bool> &values);

  /// Records the type and shape of `name` in value_info, for values ONNX
  /// cannot infer (custom ops, reshapes of symbolic dims).
  void setShape(llvm::StringRef name, const Dims &dims,
                int32_t elemType = onnx::TensorProto::FLOAT);

  /// Declares `name` as a graph output with the given type and shape.
  void addOutput(llvm::StringRef name, int32_t elemType, const Dims &dims);

  /// The parameters declared so far, in order.
  const std::vector<ParamInfo> &params() const { return paramList; }

  /// RAII scope that prefixes generated names (`encoder.layer.0`).
  class Scope {
  public:
    Scope(GraphBuilder &builder, llvm::StringRef name);
    ~Scope();

  private:
    GraphBuilder &builder;
    size_t oldSize;
  };

  /// The current scope prefix joined with `leaf` by a dot.
  std::string scoped(llvm::StringRef leaf) const;

private:
  std::string freshName(llvm::StringRef opType);

  onnx::GraphProto &graph;
  std::optional<int64_t> batch;
  std::string scope;
  unsigned counter = 0;
  std::vector<ParamInfo> paramList;
};

/// Fills an ONNX shape from `dims`.
void setTensorType(onnx::TypeProto &type, int32_t elemType, const Dims &dims);

} // namespace zoo
} // namespace weft

#endif // WEFT_ZOO_GRAPHBUILDER_H
