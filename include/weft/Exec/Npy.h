//===- Npy.h - NumPy .npy files (float32 / int64, C order) -------*- C++
//-*-===//

#ifndef WEFT_EXEC_NPY_H
#define WEFT_EXEC_NPY_H

#include "weft/Exec/Tensor.h"
#include "llvm/Support/Error.h"

namespace weft::exec {

/// Reads a version 1–3 .npy file of little-endian float32, float64 (read as
/// float32), int32, int64 (read as int64) or bool in C order. Errors have
/// exit code 1 and name the file.
llvm::Expected<Tensor> readNpy(llvm::StringRef path);
/// Parses the bytes of a .npy file; `name` is used in messages.
llvm::Expected<Tensor> parseNpy(llvm::StringRef bytes, llvm::StringRef name);

/// Writes a version 1.0 .npy file in C order: float32 for float tensors
/// (bf16 and f16 values are exact in it), bool for i1 tensors, int64 for
/// other integer tensors. Errors (exit code 1) name the file.
llvm::Error writeNpy(llvm::StringRef path, const Tensor &t);

} // namespace weft::exec

#endif // WEFT_EXEC_NPY_H
