//===- CommandLine.h - One-line command-line errors -------------*- C++ -*-===//
//
// Parses a tool's flags with llvm::cl; a bad flag (unknown, wrong value, too
// many positional arguments) is bad input: one line on stderr and exit 1.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SUPPORT_COMMANDLINE_H
#define WEFT_SUPPORT_COMMANDLINE_H

#include "llvm/ADT/StringRef.h"

namespace weft {

/// Runs llvm::cl::ParseCommandLineOptions. On a bad flag prints
/// `TOOL: error: <cl's first complaint> (see TOOL --help)` and returns false;
/// the caller then exits with ExitBadInput.
bool parseCommandLine(int argc, const char *const *argv, llvm::StringRef tool,
                      const char *overview);

} // namespace weft

#endif // WEFT_SUPPORT_COMMANDLINE_H
