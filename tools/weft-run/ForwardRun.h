//===- ForwardRun.h - weft-run --forward: every output, no loss -*- C++ -*-===//

#ifndef WEFT_TOOLS_WEFTRUN_FORWARDRUN_H
#define WEFT_TOOLS_WEFTRUN_FORWARDRUN_H

#include "weft/Exec/Inputs.h"
#include "weft/Import/OnnxImport.h"

namespace weft {

struct ForwardRunOptions {
  /// The model: ONNX (imported with every output kept) or a graph program.
  std::string model;
  /// How the model is imported; `allOutputs` is set by the run.
  ImportOptions import;
  /// Seed and .npy files of the inputs.
  exec::InitOptions init;
  /// Where output i is written as `<i>.npy`; empty: written nowhere.
  std::string outputDir;
};

/// Runs the forward pass of a model without a training loss and prints
/// every output's name, type and shape (and file). Returns the exit code:
/// 0, or 1 for bad input (an output of a type weft-run cannot hold, an
/// unwritable directory, ...), 4 for an internal error.
int runForward(const ForwardRunOptions &options);

} // namespace weft

#endif // WEFT_TOOLS_WEFTRUN_FORWARDRUN_H
