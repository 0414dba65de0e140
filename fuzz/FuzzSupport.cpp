//===- FuzzSupport.cpp - What the fuzz targets share ----------------------===//

#include "FuzzSupport.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

std::string weft::fuzz::scratchFile(const uint8_t *data, size_t size,
                                    llvm::StringRef suffix) {
  llvm::SmallString<128> path;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, path);
  llvm::sys::path::append(
      path, "weft-fuzz-" + std::to_string(llvm::sys::Process::getProcessId()) +
                suffix.str());
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (!ec)
    os.write(reinterpret_cast<const char *>(data), size);
  return std::string(path);
}
