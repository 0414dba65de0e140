//===- Weights.cpp - Parameters as graph inputs or random initializers ----===//

#include "weft/Zoo/Weights.h"
#include "llvm/ADT/StringExtras.h"
#include <cstring>
#include <random>

using namespace weft;
using namespace weft::zoo;

uint64_t zoo::numElements(const ParamInfo &param) {
  uint64_t n = 1;
  for (int64_t d : param.shape)
    n *= uint64_t(d);
  return n;
}

uint64_t zoo::countParameters(llvm::ArrayRef<ParamInfo> params) {
  uint64_t total = 0;
  for (const ParamInfo &p : params)
    total += numElements(p);
  return total;
}

/// Fills `values` per `init`. Weights are uniform with standard deviation
/// 0.02 (BERT's initializer range); the generator is std::mt19937_64, whose
/// sequence the C++ standard fixes, so a seed gives the same file everywhere.
static void fillValues(std::vector<float> &values, ParamInit init,
                       std::mt19937_64 &rng) {
  if (init != ParamInit::Weight) {
    std::fill(values.begin(), values.end(),
              init == ParamInit::Ones ? 1.0f : 0.0f);
    return;
  }
  const double bound = 0.02 * 1.7320508075688772; // √3 · σ
  for (float &v : values) {
    double unit = double(rng() >> 11) * 0x1.0p-53; // [0, 1)
    v = float((2.0 * unit - 1.0) * bound);
  }
}

void zoo::attachParameters(onnx::ModelProto &model,
                           llvm::ArrayRef<ParamInfo> params, bool withWeights,
                           uint64_t seed) {
  onnx::GraphProto &graph = *model.mutable_graph();
  std::mt19937_64 rng(seed);
  std::vector<std::string> names;
  for (const ParamInfo &p : params) {
    names.push_back(p.name);
    if (!withWeights) {
      onnx::ValueInfoProto *input = graph.add_input();
      input->set_name(p.name);
      Dims dims(p.shape.begin(), p.shape.end());
      setTensorType(*input->mutable_type(), onnx::TensorProto::FLOAT, dims);
      continue;
    }
    onnx::TensorProto *tensor = graph.add_initializer();
    tensor->set_name(p.name);
    tensor->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : p.shape)
      tensor->add_dims(d);
    std::vector<float> values(numElements(p));
    fillValues(values, p.init, rng);
    std::string raw(values.size() * sizeof(float), '\0');
    std::memcpy(raw.data(), values.data(), raw.size());
    tensor->set_raw_data(std::move(raw));
  }
  onnx::StringStringEntryProto *entry = model.add_metadata_props();
  entry->set_key(kParametersKey);
  entry->set_value(llvm::join(names, ","));
}
