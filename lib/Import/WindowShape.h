//===- WindowShape.h - Pads and output extents of ONNX windows ---*- C++
//-*-===//
//
// ONNX's arithmetic of a sliding window (Conv, MaxPool, AveragePool,
// LpPool) over the spatial dims of an input: defaults, auto_pad and the
// output extents, with ceil_mode as ONNX 1.23 defines it. Plain C++, shared
// by the opset bridge (which types bridged pools) and the handlers.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_IMPORT_WINDOWSHAPE_H
#define WEFT_LIB_IMPORT_WINDOWSHAPE_H

#include "llvm/ADT/ArrayRef.h"
#include <cstdint>
#include <string>
#include <vector>

namespace weft::import {

/// A window's attributes over `kernel.size()` spatial dims.
struct WindowAttrs {
  std::vector<int64_t> kernel, strides, dilations;
  /// The padding before each spatial dim, then after each.
  std::vector<int64_t> pads;
  std::string autoPad = "NOTSET";
  bool ceilMode = false;
};

/// Fills in defaults (strides and dilations 1, pads 0 or from auto_pad)
/// for an input of spatial extents `in`, and sets `out` to the output
/// extents: ⌊(in + pads − dilation·(kernel − 1) − 1) / stride⌋ + 1, or the
/// ceiling with `ceilMode`, less one when that last window would start
/// in the end padding. Returns why the attributes do not fit, or "".
std::string resolveWindow(llvm::ArrayRef<int64_t> in, WindowAttrs &w,
                          std::vector<int64_t> &out);

/// The padding to add after spatial dim `d` so that the floor formula
/// gives `out[d]` windows (a ceil_mode window past the padded input).
int64_t extraEndPad(llvm::ArrayRef<int64_t> in, const WindowAttrs &w,
                    llvm::ArrayRef<int64_t> out, size_t d);

} // namespace weft::import

#endif // WEFT_LIB_IMPORT_WINDOWSHAPE_H
