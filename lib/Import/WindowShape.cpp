//===- WindowShape.cpp - Pads and output extents of ONNX windows ----------===//

#include "WindowShape.h"

using namespace weft;
using namespace weft::import;

static int64_t span(const WindowAttrs &w, size_t d) {
  return w.dilations[d] * (w.kernel[d] - 1) + 1;
}

std::string import::resolveWindow(llvm::ArrayRef<int64_t> in, WindowAttrs &w,
                                  std::vector<int64_t> &out) {
  size_t spatial = in.size();
  if (w.strides.empty())
    w.strides.assign(spatial, 1);
  if (w.dilations.empty())
    w.dilations.assign(spatial, 1);
  if (w.kernel.size() != spatial || w.strides.size() != spatial ||
      w.dilations.size() != spatial)
    return "window attributes of another rank than the " +
           std::to_string(spatial) + " spatial dims";
  for (size_t d = 0; d < spatial; ++d)
    if (w.kernel[d] <= 0 || w.strides[d] <= 0 || w.dilations[d] <= 0)
      return "a kernel, stride or dilation that is not positive";
  out.assign(spatial, 0);
  if (w.autoPad == "SAME_UPPER" || w.autoPad == "SAME_LOWER") {
    // Output extent ceil(in / stride); the padding it needs is split
    // evenly, the odd one at the end (UPPER) or the beginning (LOWER).
    w.pads.assign(2 * spatial, 0);
    for (size_t d = 0; d < spatial; ++d) {
      int64_t s = w.strides[d];
      out[d] = (in[d] + s - 1) / s;
      int64_t total =
          std::max<int64_t>(0, (out[d] - 1) * s + span(w, d) - in[d]);
      int64_t small = total / 2, large = total - small;
      w.pads[d] = w.autoPad == "SAME_UPPER" ? small : large;
      w.pads[d + spatial] = w.autoPad == "SAME_UPPER" ? large : small;
    }
    return "";
  }
  if (w.autoPad == "VALID" || (w.autoPad == "NOTSET" && w.pads.empty()))
    w.pads.assign(2 * spatial, 0);
  else if (w.autoPad != "NOTSET")
    return "auto_pad " + w.autoPad;
  if (w.pads.size() != 2 * spatial)
    return std::to_string(w.pads.size()) + " pads for " +
           std::to_string(spatial) + " spatial dims";
  for (size_t d = 0; d < spatial; ++d) {
    int64_t s = w.strides[d], before = w.pads[d];
    int64_t room = in[d] + before + w.pads[d + spatial] - span(w, d);
    if (room < 0)
      return "a window larger than the padded input";
    out[d] = (w.ceilMode ? (room + s - 1) / s : room / s) + 1;
    // ONNX: the last window starts inside the input or its front padding.
    if (w.ceilMode && (out[d] - 1) * s >= in[d] + before)
      --out[d];
  }
  return "";
}

int64_t import::extraEndPad(llvm::ArrayRef<int64_t> in, const WindowAttrs &w,
                            llvm::ArrayRef<int64_t> out, size_t d) {
  size_t spatial = in.size();
  int64_t needed = (out[d] - 1) * w.strides[d] + span(w, d);
  return std::max<int64_t>(0, needed - in[d] - w.pads[d] - w.pads[d + spatial]);
}
