//===- Importer.h - Private state of the ONNX importer -----------*- C++
//-*-===//
//
// GraphImporter walks the ONNX graph in order; each node is either folded
// into a constant (shape logic), aliased (Identity), or handed to the
// legalisation handler registered for its op type, which sees the node
// through a NodeContext.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_IMPORT_IMPORTER_H
#define WEFT_LIB_IMPORT_IMPORTER_H

#include "ConstTensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "onnx/onnx_pb.h"
#include "weft/Import/OnnxImport.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace weft::import {

class GraphImporter;

/// What a legalisation handler sees of one ONNX node.
class NodeContext {
public:
  NodeContext(GraphImporter &importer, const onnx::NodeProto &node)
      : importer(importer), node(node) {}

  const onnx::NodeProto &getNode() const { return node; }
  mlir::OpBuilder &builder();
  mlir::Location loc();
  int64_t opset() const;

  /// Whether input `i` is present (optional inputs may be empty names).
  bool hasInput(unsigned i) const;
  /// Input `i` as an SSA value (materialising parameters and constants).
  llvm::Expected<mlir::Value> input(unsigned i);
  /// Input `i`, or a null value when the optional input is absent.
  llvm::Expected<mlir::Value> optionalInput(unsigned i);
  /// Input `i` as a constant, or nullptr when it is not one.
  const ConstTensor *constantInput(unsigned i) const;
  /// Input `i` as constant integers; an error naming `what` otherwise.
  llvm::Expected<std::vector<int64_t>> constantInts(unsigned i,
                                                    llvm::StringRef what);
  /// The static type ONNX's shape inference gave output `i`.
  llvm::Expected<mlir::RankedTensorType> resultType(unsigned i);
  /// Binds output `i` to `value`.
  void setResult(unsigned i, mlir::Value value);
  /// Binds output `i` to a constant, which later nodes can fold further.
  void setConstantResult(unsigned i, ConstTensor value);

  bool hasAttr(llvm::StringRef name) const;
  int64_t attrInt(llvm::StringRef name, int64_t dflt) const;
  double attrFloat(llvm::StringRef name, double dflt) const;
  std::vector<int64_t> attrInts(llvm::StringRef name) const;
  std::string attrString(llvm::StringRef name, llvm::StringRef dflt) const;

  /// The error for a node the importer cannot express.
  llvm::Error unsupported(llvm::StringRef why) const;

private:
  GraphImporter &importer;
  const onnx::NodeProto &node;
};

/// The common shape of a handler: create `OpTy` with the inferred type of
/// output 0, input 0, and `args` (attributes); bind output 0 to it. With
/// `SkipIfSameType`, an op that would not change the type is elided.
template <typename OpTy, bool SkipIfSameType = false, typename... Args>
llvm::Error emitFromInput(NodeContext &ctx, Args &&...args) {
  auto in = ctx.input(0);
  if (!in)
    return in.takeError();
  auto type = ctx.resultType(0);
  if (!type)
    return type.takeError();
  if (SkipIfSameType && in->getType() == *type) {
    ctx.setResult(0, *in);
    return llvm::Error::success();
  }
  ctx.setResult(0, ctx.builder().create<OpTy>(ctx.loc(), *type, *in,
                                              std::forward<Args>(args)...));
  return llvm::Error::success();
}

using Handler = llvm::Error (*)(NodeContext &);
using HandlerTable = llvm::StringMap<Handler>;

void registerMathHandlers(HandlerTable &table);
/// MaxPool, AveragePool, LpPool, GlobalMaxPool, GlobalAveragePool
/// (LegalizePool.cpp); called by registerNNHandlers.
void registerPoolHandlers(HandlerTable &table);
/// Hardmax, LpNormalization, Shrink as compositions of graph ops
/// (LegalizeComposite.cpp); called by registerNNHandlers.
void registerCompositeHandlers(HandlerTable &table);
void registerNNHandlers(HandlerTable &table);
void registerShapeHandlers(HandlerTable &table);
/// ConvTranspose, Resize, Upsample (LegalizeResample.cpp).
void registerResampleHandlers(HandlerTable &table);
/// ScatterElements, Scatter, ScatterND (LegalizeScatter.cpp).
void registerScatterHandlers(HandlerTable &table);
/// Ops built from existing graph ops (Decompose.h).
void registerDecomposeHandlers(HandlerTable &table);

/// The full legalisation table (ONNX op type → handler).
const HandlerTable &legalizationTable();

/// Converts an ONNX element type; null for types the graph dialect lacks.
mlir::Type convertElementType(mlir::MLIRContext *ctx, int32_t onnxType);

/// Shape of a ranked tensor value.
llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);

class GraphImporter {
public:
  GraphImporter(mlir::MLIRContext &context, onnx::ModelProto &model,
                const ImportOptions &options, ImportReport &report,
                llvm::StringRef fileName);

  llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> run();

private:
  friend class NodeContext;

  llvm::Error collectTypes();
  llvm::Error createFunction();
  llvm::Error importNode(const onnx::NodeProto &node);
  llvm::Error verifyNewOps(const onnx::NodeProto &node,
                           mlir::Operation *before);
  llvm::Error foldNode(const onnx::NodeProto &node);
  bool canFold(const onnx::NodeProto &node) const;
  llvm::Expected<mlir::Value> valueOf(llvm::StringRef name);
  llvm::Expected<mlir::Value> materializeLeaf(llvm::StringRef name);
  mlir::Value materializeConstant(llvm::StringRef name, const ConstTensor &c);
  llvm::Expected<mlir::RankedTensorType> typeOf(llvm::StringRef name);
  llvm::Expected<mlir::Value> findLoss();
  void removeDeadOps();
  void hoistLeaves();
  mlir::Location nameLoc(llvm::StringRef name);

  mlir::MLIRContext &context;
  onnx::ModelProto &model;
  const ImportOptions &options;
  ImportReport &report;
  std::string fileName;
  mlir::OpBuilder builder;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::Block *body = nullptr;

  llvm::StringSet<> parameterInputs;
  llvm::StringMap<const onnx::TensorProto *> initializers;
  llvm::StringMap<const onnx::TypeProto *> types;
  llvm::StringMap<mlir::Value> values;
  llvm::StringMap<ConstTensor> constants;
  /// Identity aliases: name → the name it denotes.
  llvm::StringMap<std::string> aliases;
  /// Float initializers that are buffers: BatchNorm running statistics and
  /// a loss's class weights.
  llvm::StringSet<> runningStats;
};

} // namespace weft::import

#endif // WEFT_LIB_IMPORT_IMPORTER_H
