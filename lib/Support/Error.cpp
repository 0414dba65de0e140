//===- Error.cpp - Error helpers ------------------------------------------===//

#include "weft/Support/Error.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace weft;

char WeftError::ID = 0;

bool weft::isMemoryShortfall(llvm::Error &err, double *overflow,
                             std::string *message) {
  bool memory = false;
  err = llvm::handleErrors(std::move(err),
                           [&](std::unique_ptr<WeftError> e) -> llvm::Error {
                             memory = e->isMemoryShortfall();
                             if (memory && overflow)
                               *overflow = e->getOverflow();
                             if (memory && message)
                               *message = e->getMessage();
                             return llvm::Error(std::move(e));
                           });
  return memory;
}

int weft::reportError(llvm::StringRef tool, llvm::Error err) {
  int code = ExitSuccess;
  llvm::handleAllErrors(
      std::move(err),
      [&](const WeftError &e) {
        llvm::errs() << tool << ": error: " << e.getMessage() << "\n";
        code = e.getCode();
      },
      [&](const llvm::ErrorInfoBase &e) {
        llvm::errs() << tool << ": error: " << e.message() << "\n";
        code = ExitBadInput;
      });
  return code;
}
