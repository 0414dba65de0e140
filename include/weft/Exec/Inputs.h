//===- Inputs.h - Values for a graph program's leaves ------------*- C++
//-*-===//
//
// Parameters take their `value` attribute (models imported --with-weights)
// or seeded random values; data inputs come from .npy files or are seeded
// random. docs/Exec.md states the rules.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EXEC_INPUTS_H
#define WEFT_EXEC_INPUTS_H

#include "weft/Exec/Interpreter.h"
#include <optional>

namespace weft::exec {

struct InitOptions {
  /// Seed of random parameters and inputs.
  uint64_t seed = 0;
  /// Data inputs read from .npy files, by input name.
  llvm::StringMap<std::string> npyFiles;
};

/// How the leaves got their values.
struct BindingSummary {
  unsigned parametersFromWeights = 0, parametersRandom = 0;
  unsigned inputsFromFiles = 0, inputsRandom = 0;
  int64_t parameterElements = 0;
};

/// Values for every input, parameter and buffer of `main`. Errors (exit
/// code 1): a --input name that is not an input, an unreadable file, a
/// shape or type that differs from the model's.
llvm::Expected<Bindings> makeBindings(mlir::func::FuncOp main,
                                      const InitOptions &options,
                                      BindingSummary *summary = nullptr);

/// The exclusive upper bound of valid values of an integer tensor, from its
/// uses: the size of the gathered axis of a table it indexes, or the class
/// count of a loss it labels (followed through reshapes, transposes,
/// slices, expands and casts). The smallest bound found; none if unused as
/// an index.
std::optional<int64_t> indexBound(mlir::Value v);

} // namespace weft::exec

#endif // WEFT_EXEC_INPUTS_H
