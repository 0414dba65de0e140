//===- TorchWriter.h - The state of one program's emission ------*- C++ -*-===//
//
// Private to lib/Emit. TorchWriter walks a plan once and collects the
// program's parts: the distributions and constants it names at module level
// (D<k>, C<k>), the specs of inputs and parameters (TorchSpecs.cpp), the
// forward function (TorchForward.cpp) and the process groups the recipes
// and parameters need; TorchProgram.cpp prints them in order.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_EMIT_TORCHWRITER_H
#define WEFT_LIB_EMIT_TORCHWRITER_H

#include "Spmd/IR/SpmdOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "weft/Emit/TorchProgram.h"
#include "weft/Spmd/ShardGeometry.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"
#include <map>
#include <set>
#include <vector>

namespace weft::emit {

struct InputSpec {
  std::string name, ident, type, dist;
  llvm::SmallVector<int64_t, 4> shape;
  /// Integer inputs: values are drawn below this bound.
  int64_t bound = 2;
  /// Whether a use of the input set `bound`.
  bool bounded = false;
};

struct ParamSpec {
  std::string name, type, dist, strategy;
  llvm::SmallVector<int64_t, 4> shape;
  /// Seeded value when no weight file gives one: normal, zeros or ones
  /// (lib/Exec/Inputs.cpp's roles).
  std::string init;
};

/// A value crossing between pipeline stages: global shape, element type and
/// the D<k> of its distribution on the stage's mesh.
struct TransferSpec {
  std::string type, dist;
  llvm::SmallVector<int64_t, 4> shape;
};

/// What a stage module adds to its forward function (TorchPipeline.cpp):
/// `spmd.recv` k reads `recv[k]`, the `spmd.send`s are returned with the
/// loss (None before the last stage).
struct StageIO {
  std::vector<TransferSpec> sends, recvs;
};

/// `Mesh(numNodes, (local...), [DeviceClass(...), ...])`: the Python
/// literal of `mesh` with `numNodes` nodes (a stage's or the whole plan's).
void printMeshLiteral(llvm::raw_ostream &os, spmd::MeshAttr mesh,
                      int64_t numNodes);

class TorchWriter {
public:
  TorchWriter(mlir::ModuleOp plan, const spmd::ShardGeometry &geometry,
              const TorchEmitOptions &options);

  /// Walks @main: specs, then the forward function's text.
  llvm::Error run();
  /// The whole program.
  void print(llvm::raw_ostream &os) const;

  // The parts, for a pipelined program (TorchPipeline.cpp).

  /// Makes this writer emit a stage module's forward into `io`.
  void setStage(StageIO *io) { stage = io; }
  /// Continues D<k> and C<k> from `other` (one table for every stage).
  void inheritNames(const TorchWriter &other) {
    dists = other.dists;
    constants = other.constants;
  }
  /// `PREFIXMESH = Mesh(...)` and `PREFIXSEGMENTS = {...}`.
  void printMesh(llvm::raw_ostream &os, llvm::StringRef prefix) const;
  /// The D<k> and C<k> lines.
  void printNames(llvm::raw_ostream &os) const;
  /// `PREFIXINPUTS = [...]` and `PREFIXPARAMETERS = [...]`.
  void printSpecs(llvm::raw_ostream &os, llvm::StringRef prefix) const;
  /// `def NAME(rt, p, [extra, ]inputs...):` and the body.
  void printForward(llvm::raw_ostream &os, llvm::StringRef name,
                    llvm::StringRef extra) const;
  /// The axis sets of the groups the forward names: `[(0, 1), ...]`.
  std::string axisSetsText() const;
  const std::string &lossDistName() const { return lossDist; }
  unsigned localCount() const { return numLocals; }
  unsigned collectiveCount() const { return numCollectives; }
  size_t paramCount() const { return params.size(); }
  StageIO *stageIO() const { return stage; }
  /// The inputs' specs (a pipeline makes every stage draw an integer
  /// input below one bound).
  std::vector<InputSpec> &inputSpecs() { return inputs; }

  // Shared by the walks (TorchSpecs.cpp, TorchForward.cpp).

  /// D<k>, the module-level name of `dist`.
  std::string distName(spmd::DistAttr dist);
  /// C<k>, the module-level constant holding `value` (an elements attr).
  llvm::Expected<std::string> constantName(mlir::Attribute value,
                                           mlir::Type type);
  /// A Python tuple of the mesh axes in `axes`; records the set so the
  /// program creates its process group.
  std::string axesTuple(spmd::MeshAxes axes);
  /// `rt.group((a, b))`, or None for no axes.
  std::string groupOf(spmd::MeshAxes axes);

private:
  llvm::Error collectSpecs(mlir::func::FuncOp main);
  llvm::Error emitForward(mlir::func::FuncOp main);
  void printHeader(llvm::raw_ostream &os) const;

  mlir::ModuleOp plan;
  const spmd::ShardGeometry &geo;
  const TorchEmitOptions &options;

  std::vector<InputSpec> inputs;
  std::vector<ParamSpec> params;
  // Text -> D<k>, in order of first use.
  llvm::MapVector<std::string, std::string, std::map<std::string, unsigned>>
      dists;
  std::vector<std::pair<std::string, std::string>> constants; // C<k>, expr
  std::set<std::vector<unsigned>> axisSets;
  std::string forwardText, lossDist;
  int64_t microBatches = 1;
  unsigned numLocals = 0, numCollectives = 0;
  StageIO *stage = nullptr;
};

/// The program of a pipelined plan (docs/Pipeline.md, "Emitting").
llvm::Error emitPipelineProgram(mlir::ModuleOp plan,
                                const TorchEmitOptions &options,
                                llvm::raw_ostream &os);

} // namespace weft::emit

#endif // WEFT_LIB_EMIT_TORCHWRITER_H
