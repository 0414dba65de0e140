//===- FileOutput.h - Files written whole or not at all ------------*- C++
//-*-===//
//
// Every file a Weft tool writes (plans, reports, cache entries, dumps) goes
// through writeFile: the content is written to a temporary file beside the
// target and renamed over it when complete (llvm::writeToOutput), so a run
// killed or failing half-way never leaves a truncated file behind.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SUPPORT_FILEOUTPUT_H
#define WEFT_SUPPORT_FILEOUTPUT_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace weft {

/// Writes `path` with what `write` prints, atomically: the file is either
/// the old one (or absent) or the whole new content. Errors: bad input
/// (exit 1) naming the path.
llvm::Error writeFile(llvm::StringRef path,
                      llvm::function_ref<void(llvm::raw_ostream &)> write);

/// writeFile for a writer that can fail: when `write` returns an error the
/// target is left as it was and that error is returned.
llvm::Error
writeFileOrFail(llvm::StringRef path,
                llvm::function_ref<llvm::Error(llvm::raw_ostream &)> write);

} // namespace weft

#endif // WEFT_SUPPORT_FILEOUTPUT_H
