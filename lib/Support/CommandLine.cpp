//===- CommandLine.cpp - One-line command-line errors ---------------------===//

#include "weft/Support/CommandLine.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

bool weft::parseCommandLine(int argc, const char *const *argv,
                            llvm::StringRef tool, const char *overview) {
  std::string text;
  llvm::raw_string_ostream errs(text);
  if (llvm::cl::ParseCommandLineOptions(argc, argv, overview, &errs))
    return true;
  // A bad flag value cl has already reported on stderr, in one line
  // ("TOOL: for the --X option: ..."), and it left `text` empty.
  if (text.empty())
    return false;
  // Otherwise cl wrote "<argv0>: <complaint>  Try: ..." and hints on further
  // lines: keep the first complaint only.
  llvm::StringRef line = llvm::StringRef(errs.str()).split('\n').first.trim();
  line = line.split("  Try:").first;
  auto [head, rest] = line.split(": ");
  if (!rest.empty() && !head.contains(' '))
    line = rest;
  llvm::errs() << tool << ": error: " << line << " (see " << tool
               << " --help)\n";
  return false;
}
