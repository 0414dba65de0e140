//===- OpPrintingOff.h - Diagnostics without the operation -------*- C++
//-*-===//
//
// MLIR attaches the failing operation, printed, to every verifier error.
// Weft's tools report the first line of a diagnostic only, and MLIR 16's
// parser accepts attributes its printer then crashes on (a dense array of
// `i01` elements, found by fuzzing plan text). While one of these guards
// lives, the context prints no operation into diagnostics.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SUPPORT_OPPRINTINGOFF_H
#define WEFT_SUPPORT_OPPRINTINGOFF_H

#include "mlir/IR/MLIRContext.h"

namespace weft {

class OpPrintingOff {
public:
  explicit OpPrintingOff(mlir::MLIRContext &context)
      : context(context), before(context.shouldPrintOpOnDiagnostic()) {
    context.printOpOnDiagnostic(false);
  }
  ~OpPrintingOff() { context.printOpOnDiagnostic(before); }
  OpPrintingOff(const OpPrintingOff &) = delete;
  OpPrintingOff &operator=(const OpPrintingOff &) = delete;

private:
  mlir::MLIRContext &context;
  bool before;
};

} // namespace weft

#endif // WEFT_SUPPORT_OPPRINTINGOFF_H
