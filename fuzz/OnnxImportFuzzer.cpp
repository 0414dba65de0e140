//===- OnnxImportFuzzer.cpp - The ONNX importer (binary or text) ----------===//
//
// Built twice: WEFT_ONNX_SUFFIX ".onnx" (protobuf) and ".onnxtext" (ONNX's
// text format). The importer reads a path, so each input goes through a
// scratch file of that suffix.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"
#include "mlir/IR/MLIRContext.h"
#include "weft/Import/OnnxImport.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string written = weft::fuzz::scratchFile(data, size, WEFT_ONNX_SUFFIX);
  mlir::MLIRContext context;
  context.disableMultithreading();
  weft::ImportOptions options;
  options.batch = 4;
  auto module = weft::importOnnxFile(context, written, options);
  weft::fuzz::drop(module);
  return 0;
}
