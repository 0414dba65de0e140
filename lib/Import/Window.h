//===- Window.h - Window attributes of convolutions and pools ----*- C++
//-*-===//
//
// The graph form of an ONNX Conv's or pool's window (docs/Import.md): pads
// made explicit, ceil_mode turned into padding at the end, and a 1-d
// window lifted to a 2-d one of unit height (reshapes around the op).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_IMPORT_WINDOW_H
#define WEFT_LIB_IMPORT_WINDOW_H

#include "Importer.h"

namespace weft::import {

/// A window in graph form: one kernel, stride and dilation per spatial dim
/// of the graph op, pads before each spatial dim and then after each.
struct Window {
  std::vector<int64_t> kernel, strides, pads, dilations;
  /// What ceil_mode adds after each spatial dim (zeros without it): the
  /// floor formula over pads + extra gives ONNX's ceil_mode extents.
  std::vector<int64_t> extra;

  bool hasPadding() const;
  bool hasExtra() const;
};

/// Reads kernel_shape (or `kernel`, from a Conv's weight), strides,
/// dilations, pads, auto_pad and ceil_mode of a window over the spatial
/// dims of `input`, which may number 1 to `maxSpatial`.
llvm::Expected<Window> windowOf(NodeContext &ctx, mlir::Value input,
                                std::vector<int64_t> kernel,
                                int64_t maxSpatial);

/// `v` (N×C×L, or a 1-d kernel O×C×K) with a unit dim before the last.
mlir::Value withUnitHeight(NodeContext &ctx, mlir::Value v);

/// The type of an op whose ONNX result has `type`, with the unit height
/// of a lifted 1-d window.
mlir::RankedTensorType liftedType(mlir::RankedTensorType type);

/// Binds output 0 to `v`, reshaped to the ONNX result type when a 1-d
/// window was lifted.
void setWindowResult(NodeContext &ctx, mlir::Value v,
                     mlir::RankedTensorType type);

} // namespace weft::import

#endif // WEFT_LIB_IMPORT_WINDOW_H
