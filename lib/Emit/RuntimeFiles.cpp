//===- RuntimeFiles.cpp - python/weft_runtime, embedded
//--------------------===//
//
// RuntimeFiles.inc is generated from python/weft_runtime/*.py at build time
// (EmbedRuntime.cmake), so a program folder written anywhere carries the
// runtime of the tool that wrote it.
//
//===----------------------------------------------------------------------===//

#include "weft/Emit/TorchProgram.h"

static const std::pair<const char *, const char *> kRuntimeFiles[] = {
#include "RuntimeFiles.inc"
};

llvm::ArrayRef<std::pair<const char *, const char *>> weft::runtimeFiles() {
  return kRuntimeFiles;
}
