//===- Progress.cpp - A rate-limited progress line on stderr --------------===//

#include "weft/Support/Progress.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

using namespace weft;

Progress::Progress(std::string label, double delaySeconds, bool force)
    : label(std::move(label)), delaySeconds(delaySeconds),
      enabled(force || llvm::sys::Process::StandardErrIsDisplayed()),
      start(std::chrono::steady_clock::now()), lastPrint(start) {}

Progress::~Progress() { done(); }

double Progress::elapsedSeconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

void Progress::update(llvm::StringRef status) {
  if (!enabled)
    return;
  auto now = std::chrono::steady_clock::now();
  if (elapsedSeconds() < delaySeconds ||
      std::chrono::duration<double>(now - lastPrint).count() < 0.2)
    return;
  lastPrint = now;
  llvm::errs() << "\r" << label << ": " << status << " ["
               << llvm::format("%.1f", elapsedSeconds()) << " s]\x1b[K";
  llvm::errs().flush();
  printed = true;
}

void Progress::done() {
  if (printed)
    llvm::errs() << "\n";
  printed = false;
}
