//===- FileOutput.cpp - Files written whole or not at all -----------------===//

#include "weft/Support/FileOutput.h"
#include "weft/Support/Error.h"

using namespace weft;

llvm::Error weft::writeFileOrFail(
    llvm::StringRef path,
    llvm::function_ref<llvm::Error(llvm::raw_ostream &)> write) {
  // The writer's own error passes through unchanged; only failures of the
  // file itself become "cannot write".
  std::optional<llvm::Error> own;
  llvm::Error err =
      llvm::writeToOutput(path, [&](llvm::raw_ostream &os) -> llvm::Error {
        llvm::Error e = write(os);
        if (!e)
          return llvm::Error::success();
        // What was buffered goes to the temporary file, which is then
        // discarded (an unflushed buffer would be written after it is closed).
        os.flush();
        own = std::move(e);
        return llvm::make_error<llvm::StringError>(
            "writer failed", llvm::inconvertibleErrorCode());
      });
  if (own) {
    llvm::consumeError(std::move(err));
    return std::move(*own);
  }
  if (err)
    return badInput("cannot write '{0}': {1}", path.str(),
                    llvm::toString(std::move(err)));
  return llvm::Error::success();
}

llvm::Error
weft::writeFile(llvm::StringRef path,
                llvm::function_ref<void(llvm::raw_ostream &)> write) {
  return writeFileOrFail(path, [&](llvm::raw_ostream &os) {
    write(os);
    return llvm::Error::success();
  });
}
