//===- ZeroSizeInputs.cpp - Inputs with explicit zero-size dims -----------===//

#include "ZeroSizeInputs.h"
#include "OnnxModel.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/STLExtras.h"

using namespace weft;
using namespace weft::import;

llvm::Expected<ImportOptions>
import::withZeroSizeInputs(const onnx::ModelProto &model,
                           const ImportOptions &options, ImportReport &report) {
  ImportOptions out = options;
  llvm::StringSet<> params = listedParameters(model);
  llvm::StringSet<> initializers;
  for (const auto &init : model.graph().initializer())
    initializers.insert(init.name());
  for (const auto &input : model.graph().input()) {
    const std::string &name = input.name();
    if (params.contains(name) || initializers.contains(name) ||
        options.inputShapes.count(name) || !input.type().has_tensor_type() ||
        !input.type().tensor_type().has_shape())
      continue;
    const auto &dims = input.type().tensor_type().shape().dim();
    if (llvm::none_of(dims, [](const auto &d) {
          return d.has_dim_value() && d.dim_value() == 0;
        }))
      continue;
    std::vector<int64_t> shape;
    bool batchUsed = false;
    for (int i = 0; i < dims.size(); ++i) {
      const auto &d = dims[i];
      if (d.has_dim_value() && d.dim_value() >= 0) {
        shape.push_back(d.dim_value());
        continue;
      }
      std::string symbol =
          d.has_dim_param() ? "'" + d.dim_param() + "'" : "unnamed";
      if (i != 0 || !options.batch)
        return badInput("dim {0} ({1}) of input '{2}' cannot be resolved; "
                        "pass --input-shape {2}=<dims>",
                        i, symbol, name);
      shape.push_back(*options.batch);
      batchUsed = true;
    }
    out.inputShapes[name] = shape;
    report.batchSymbolic |= batchUsed;
  }
  return out;
}
