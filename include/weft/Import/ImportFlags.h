//===- ImportFlags.h - Command-line flags shared by importing tools -*- C++
//-*-===//
//
// weftc, weft-translate and (later) weft-run accept the same model flags.
// Construct one ImportFlags in main() before parsing the command line.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_IMPORT_IMPORTFLAGS_H
#define WEFT_IMPORT_IMPORTFLAGS_H

#include "weft/Import/OnnxImport.h"
#include "llvm/Support/CommandLine.h"

namespace weft {

class ImportFlags {
public:
  explicit ImportFlags(llvm::cl::OptionCategory &category);

  /// The import options for a run on `numDevices` devices: the batch is
  /// --global-batch, or --batch-per-device (default 32) × numDevices.
  llvm::Expected<ImportOptions> resolve(unsigned numDevices) const;

  llvm::cl::opt<int64_t> globalBatch;
  llvm::cl::opt<int64_t> batchPerDevice;
  llvm::cl::list<std::string> inputShapes;
  llvm::cl::list<std::string> frozen;
  llvm::cl::opt<bool> withWeights;
  llvm::cl::opt<ProxyLoss> loss;
  llvm::cl::opt<bool> noFuse;
};

} // namespace weft

#endif // WEFT_IMPORT_IMPORTFLAGS_H
