//===- ConstTensor.cpp - Small constant tensors for shape folding ---------===//

#include "ConstTensor.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include <algorithm>
#include <cmath>
#include <cstring>

using namespace weft;
using namespace weft::import;

int64_t ConstTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

bool ConstTensor::isInteger() const {
  switch (elementType) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    return false;
  default:
    return true;
  }
}

std::vector<int64_t> ConstTensor::asInts() const {
  // Exporters write INT64_MAX/MIN as "to the end" in slice bounds; as a
  // double they round to ±2^63, which int64_t cannot hold: saturate.
  constexpr double limit = 9.2e18;
  std::vector<int64_t> ints;
  ints.reserve(values.size());
  for (double v : values)
    ints.push_back(v >= limit    ? INT64_MAX
                   : v <= -limit ? INT64_MIN
                                 : int64_t(v));
  return ints;
}

template <typename T>
static void appendRaw(const std::string &raw, std::vector<double> &out) {
  size_t n = raw.size() / sizeof(T);
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
    out.push_back(double(v));
  }
}

std::optional<ConstTensor> import::readTensor(const onnx::TensorProto &t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    return std::nullopt;
  ConstTensor c;
  c.elementType = t.data_type();
  c.dims.assign(t.dims().begin(), t.dims().end());
  const std::string &raw = t.raw_data();
  switch (t.data_type()) {
  case onnx::TensorProto::FLOAT:
    if (!raw.empty())
      appendRaw<float>(raw, c.values);
    else
      c.values.assign(t.float_data().begin(), t.float_data().end());
    break;
  case onnx::TensorProto::DOUBLE:
    if (!raw.empty())
      appendRaw<double>(raw, c.values);
    else
      c.values.assign(t.double_data().begin(), t.double_data().end());
    break;
  case onnx::TensorProto::INT64:
    if (!raw.empty())
      appendRaw<int64_t>(raw, c.values);
    else
      c.values.assign(t.int64_data().begin(), t.int64_data().end());
    break;
  case onnx::TensorProto::INT32:
    if (!raw.empty())
      appendRaw<int32_t>(raw, c.values);
    else
      c.values.assign(t.int32_data().begin(), t.int32_data().end());
    break;
  case onnx::TensorProto::BOOL:
  case onnx::TensorProto::UINT8:
    if (!raw.empty())
      appendRaw<uint8_t>(raw, c.values);
    else
      c.values.assign(t.int32_data().begin(), t.int32_data().end());
    break;
  case onnx::TensorProto::INT8:
    if (!raw.empty())
      appendRaw<int8_t>(raw, c.values);
    else
      c.values.assign(t.int32_data().begin(), t.int32_data().end());
    break;
  default:
    return std::nullopt;
  }
  if (int64_t(c.values.size()) != c.numElements())
    return std::nullopt;
  return c;
}

bool import::isFoldable(llvm::StringRef opType) {
  return llvm::StringSwitch<bool>(opType)
      .Cases("Constant", "Shape", "Gather", "Unsqueeze", "Squeeze", "Concat",
             "Slice", "Cast", true)
      .Cases("Add", "Sub", "Mul", "Div", "Equal", "Less", "Greater", "Where",
             true)
      .Cases("Not", "Sqrt", "Neg", "Pow", "Min", "Max", true)
      .Cases("Mod", "And", "Or", "Xor", "Abs", true)
      .Cases("Range", "ConstantOfShape", "Expand", "Reshape", "Identity", true)
      .Cases("LessOrEqual", "GreaterOrEqual", "CastLike", "Log", "Cos", "Sin",
             true)
      .Cases("Transpose", "GatherElements", true)
      .Default(false);
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

static const onnx::AttributeProto *findAttr(const onnx::NodeProto &node,
                                            llvm::StringRef name) {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

static int64_t intAttr(const onnx::NodeProto &node, llvm::StringRef name,
                       int64_t dflt) {
  const auto *a = findAttr(node, name);
  return a ? a->i() : dflt;
}

//===----------------------------------------------------------------------===//
// Index helpers
//===----------------------------------------------------------------------===//

static std::vector<int64_t> stridesOf(llvm::ArrayRef<int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int i = int(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return strides;
}

static int64_t normAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// Maps each output element of a broadcast to the flat index of `in`.
static int64_t broadcastIndex(int64_t flat, llvm::ArrayRef<int64_t> outDims,
                              llvm::ArrayRef<int64_t> inDims) {
  std::vector<int64_t> outStrides = stridesOf(outDims),
                       inStrides = stridesOf(inDims);
  size_t offset = outDims.size() - inDims.size();
  int64_t index = 0;
  for (size_t d = 0; d < outDims.size(); ++d) {
    int64_t coord = (flat / outStrides[d]) % outDims[d];
    if (d < offset)
      continue;
    size_t i = d - offset;
    if (inDims[i] != 1)
      index += coord * inStrides[i];
  }
  return index;
}

static llvm::Expected<std::vector<int64_t>>
broadcastShape(llvm::ArrayRef<const ConstTensor *> ins) {
  std::vector<int64_t> out;
  for (const ConstTensor *t : ins) {
    if (t->dims.size() > out.size())
      out.insert(out.begin(), t->dims.size() - out.size(), 1);
    size_t offset = out.size() - t->dims.size();
    for (size_t i = 0; i < t->dims.size(); ++i) {
      int64_t &o = out[offset + i];
      if (o == 1)
        o = t->dims[i];
      else if (t->dims[i] != 1 && t->dims[i] != o)
        return badInput("shapes are not broadcast-compatible");
    }
  }
  return out;
}

/// Applies `fn` elementwise with broadcasting.
template <typename Fn>
static llvm::Expected<ConstTensor>
elementwise(llvm::ArrayRef<const ConstTensor *> ins, int32_t resultType,
            Fn fn) {
  auto dims = broadcastShape(ins);
  if (!dims)
    return dims.takeError();
  ConstTensor out;
  out.elementType = resultType;
  out.dims = *dims;
  int64_t n = out.numElements();
  out.values.resize(n);
  std::vector<double> args(ins.size());
  for (int64_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < ins.size(); ++k)
      args[k] = ins[k]->values[broadcastIndex(i, out.dims, ins[k]->dims)];
    out.values[i] = fn(args);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

static llvm::Expected<ConstTensor> foldConstant(const onnx::NodeProto &node) {
  for (const auto &a : node.attribute()) {
    ConstTensor c;
    if (a.name() == "value") {
      if (auto t = readTensor(a.t()))
        return *t;
      return badInput("Constant '{0}' has a tensor type the importer does not "
                      "fold",
                      node.output(0));
    }
    if (a.name() == "value_int" || a.name() == "value_float") {
      c.elementType = a.name() == "value_int" ? onnx::TensorProto::INT64
                                              : onnx::TensorProto::FLOAT;
      c.values = {a.name() == "value_int" ? double(a.i()) : double(a.f())};
      return c;
    }
    if (a.name() == "value_ints" || a.name() == "value_floats") {
      bool ints = a.name() == "value_ints";
      c.elementType =
          ints ? onnx::TensorProto::INT64 : onnx::TensorProto::FLOAT;
      if (ints)
        c.values.assign(a.ints().begin(), a.ints().end());
      else
        c.values.assign(a.floats().begin(), a.floats().end());
      c.dims = {int64_t(c.values.size())};
      return c;
    }
  }
  return badInput("Constant '{0}' has no value attribute the importer reads",
                  node.output(0));
}

static ConstTensor foldShape(const onnx::NodeProto &node,
                             llvm::ArrayRef<int64_t> shape) {
  int64_t rank = shape.size();
  int64_t start = normAxis(intAttr(node, "start", 0), rank);
  int64_t end = normAxis(intAttr(node, "end", rank), rank);
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  ConstTensor c;
  c.elementType = onnx::TensorProto::INT64;
  c.values.assign(shape.begin() + start, shape.begin() + end);
  c.dims = {end - start};
  return c;
}

static llvm::Expected<ConstTensor> foldGather(const onnx::NodeProto &node,
                                              const ConstTensor &data,
                                              const ConstTensor &indices) {
  int64_t rank = data.dims.size();
  int64_t axis = normAxis(intAttr(node, "axis", 0), rank);
  if (axis < 0 || axis >= rank)
    return badInput("Gather axis out of range");
  ConstTensor out;
  out.elementType = data.elementType;
  out.dims.assign(data.dims.begin(), data.dims.begin() + axis);
  out.dims.insert(out.dims.end(), indices.dims.begin(), indices.dims.end());
  out.dims.insert(out.dims.end(), data.dims.begin() + axis + 1,
                  data.dims.end());
  int64_t outer = 1, inner = 1, extent = data.dims[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= data.dims[d];
  for (int64_t d = axis + 1; d < rank; ++d)
    inner *= data.dims[d];
  for (int64_t o = 0; o < outer; ++o)
    for (double idx : indices.values) {
      int64_t i = int64_t(idx) < 0 ? int64_t(idx) + extent : int64_t(idx);
      if (i < 0 || i >= extent)
        return badInput("Gather index {0} out of range", int64_t(idx));
      for (int64_t k = 0; k < inner; ++k)
        out.values.push_back(data.values[(o * extent + i) * inner + k]);
    }
  return out;
}

static ConstTensor withDims(ConstTensor t, std::vector<int64_t> dims) {
  t.dims = std::move(dims);
  return t;
}

static llvm::Expected<ConstTensor>
foldSqueezeLike(const onnx::NodeProto &node, const ConstTensor &data,
                const ConstTensor *axesInput) {
  std::vector<int64_t> axes;
  if (axesInput)
    axes = axesInput->asInts();
  else if (const auto *a = findAttr(node, "axes"))
    axes.assign(a->ints().begin(), a->ints().end());
  std::vector<int64_t> dims = data.dims;
  if (node.op_type() == "Unsqueeze") {
    int64_t rank = dims.size() + axes.size();
    for (int64_t &a : axes) {
      a = normAxis(a, rank);
      if (a < 0 || a >= rank)
        return badInput("Unsqueeze '{0}': axis out of range for rank {1}",
                        node.name(), rank);
    }
    llvm::sort(axes);
    for (int64_t a : axes)
      dims.insert(dims.begin() + std::min<int64_t>(a, dims.size()), 1);
    return withDims(data, dims);
  }
  int64_t rank = dims.size();
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    bool listed =
        llvm::any_of(axes, [&](int64_t a) { return normAxis(a, rank) == d; });
    if ((axes.empty() && dims[d] == 1) || listed)
      continue;
    out.push_back(dims[d]);
  }
  return withDims(data, out);
}

static llvm::Expected<ConstTensor>
foldConcat(const onnx::NodeProto &node,
           llvm::ArrayRef<const ConstTensor *> ins) {
  int64_t rank = ins.front()->dims.size();
  int64_t axis = normAxis(intAttr(node, "axis", 0), rank);
  if (axis < 0 || axis >= rank)
    return badInput("Concat '{0}': axis {1} out of range for rank {2}",
                    node.name(), intAttr(node, "axis", 0), rank);
  for (const ConstTensor *t : ins)
    for (int64_t d = 0; d < rank; ++d)
      if (int64_t(t->dims.size()) != rank ||
          (d != axis && t->dims[d] != ins.front()->dims[d]))
        return badInput("Concat '{0}': inputs of different shapes",
                        node.name());
  ConstTensor out;
  out.elementType = ins.front()->elementType;
  out.dims = ins.front()->dims;
  out.dims[axis] = 0;
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= out.dims[d];
  for (const ConstTensor *t : ins)
    out.dims[axis] += t->dims[axis];
  for (int64_t o = 0; o < outer; ++o)
    for (const ConstTensor *t : ins) {
      int64_t chunk = t->numElements() / std::max<int64_t>(outer, 1);
      out.values.insert(out.values.end(), t->values.begin() + o * chunk,
                        t->values.begin() + (o + 1) * chunk);
    }
  return out;
}

static llvm::Expected<ConstTensor>
foldSlice(const ConstTensor &data, llvm::ArrayRef<const ConstTensor *> ins) {
  int64_t rank = data.dims.size();
  std::vector<int64_t> starts = ins[1]->asInts(), ends = ins[2]->asInts();
  std::vector<int64_t> axes, steps;
  if (ins.size() > 3 && ins[3])
    axes = ins[3]->asInts();
  else
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (ins.size() > 4 && ins[4])
    steps = ins[4]->asInts();
  else
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return badInput("Slice: starts, ends, axes and steps of different "
                    "lengths");
  std::vector<int64_t> lo(rank, 0), step(rank, 1), count(data.dims);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = normAxis(axes[i], rank);
    if (a < 0 || a >= rank)
      return badInput("Slice: axis {0} out of range for rank {1}", axes[i],
                      rank);
    int64_t n = data.dims[a];
    int64_t s = starts[i] < 0 ? starts[i] + n : starts[i];
    int64_t e = ends[i] < 0 ? ends[i] + n : ends[i];
    if (steps[i] > 0) {
      s = std::clamp<int64_t>(s, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      count[a] = std::max<int64_t>(0, (e - s + steps[i] - 1) / steps[i]);
    } else {
      s = std::clamp<int64_t>(s, 0, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
      count[a] = std::max<int64_t>(0, (s - e - steps[i] - 1) / -steps[i]);
    }
    lo[a] = s;
    step[a] = steps[i];
  }
  ConstTensor out;
  out.elementType = data.elementType;
  out.dims = count;
  std::vector<int64_t> inStrides = stridesOf(data.dims),
                       outStrides = stridesOf(count);
  int64_t total = out.numElements();
  for (int64_t f = 0; f < total; ++f) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d)
      src +=
          (lo[d] + ((f / outStrides[d]) % count[d]) * step[d]) * inStrides[d];
    out.values.push_back(data.values[src]);
  }
  return out;
}

static ConstTensor foldRange(const ConstTensor &start, const ConstTensor &limit,
                             const ConstTensor &delta) {
  ConstTensor out;
  out.elementType = start.elementType;
  double s = start.values[0], l = limit.values[0], d = delta.values[0];
  int64_t n = std::max<int64_t>(0, int64_t(std::ceil((l - s) / d)));
  for (int64_t i = 0; i < n; ++i)
    out.values.push_back(s + i * d);
  out.dims = {n};
  return out;
}

static llvm::Expected<ConstTensor>
foldConstantOfShape(const onnx::NodeProto &node, const ConstTensor &shape) {
  ConstTensor out;
  out.elementType = onnx::TensorProto::FLOAT;
  double fill = 0;
  if (const auto *a = findAttr(node, "value")) {
    auto v = readTensor(a->t());
    if (!v || v->values.empty())
      return badInput("ConstantOfShape '{0}' has an unreadable value",
                      node.output(0));
    out.elementType = v->elementType;
    fill = v->values[0];
  }
  out.dims = shape.asInts();
  out.values.assign(out.numElements(), fill);
  return out;
}

static double castValue(double v, int32_t to) {
  switch (to) {
  case onnx::TensorProto::BOOL:
    return v != 0;
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
    return std::trunc(v);
  case onnx::TensorProto::FLOAT:
    return double(float(v));
  default:
    return v;
  }
}

static llvm::Expected<ConstTensor> foldReshape(const ConstTensor &data,
                                               const ConstTensor &shape) {
  std::vector<int64_t> dims = shape.asInts();
  int64_t known = 1, inferred = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0 && i < data.dims.size())
      dims[i] = data.dims[i];
    if (dims[i] == -1)
      inferred = i;
    else
      known *= dims[i];
  }
  if (inferred >= 0)
    dims[inferred] = known ? data.numElements() / known : 0;
  return withDims(data, dims);
}

llvm::Expected<std::vector<ConstTensor>>
import::foldNode(const onnx::NodeProto &node,
                 llvm::ArrayRef<const ConstTensor *> ins,
                 llvm::ArrayRef<std::vector<int64_t>> inputShapes) {
  llvm::StringRef op = node.op_type();
  auto one = [](llvm::Expected<ConstTensor> t)
      -> llvm::Expected<std::vector<ConstTensor>> {
    if (!t)
      return t.takeError();
    return std::vector<ConstTensor>{std::move(*t)};
  };
  if (op == "Constant")
    return one(foldConstant(node));
  if (op == "Shape")
    return one(foldShape(node, inputShapes[0]));
  for (size_t i = 0; i < ins.size(); ++i)
    if (!ins[i] && !(op == "Slice" && i >= 3) &&
        !(op == "Squeeze" || op == "Unsqueeze"))
      return badInput("cannot fold {0} '{1}': input {2} is not constant", op,
                      node.name(), i);
  for (const ConstTensor *t : ins)
    if (t && int64_t(t->values.size()) != t->numElements())
      return badInput("cannot fold {0} '{1}': a constant input has {2} values "
                      "for {3} elements",
                      op, node.name(), t->values.size(), t->numElements());
  const ConstTensor &a = *ins[0];
  int32_t type = a.elementType;
  if (op == "Identity")
    return one(a);
  if (op == "Gather")
    return one(foldGather(node, a, *ins[1]));
  if (op == "Unsqueeze" || op == "Squeeze")
    return one(foldSqueezeLike(node, a, ins.size() > 1 ? ins[1] : nullptr));
  if (op == "Concat")
    return one(foldConcat(node, ins));
  if (op == "Slice")
    return one(foldSlice(a, ins));
  if (op == "Range")
    return one(foldRange(a, *ins[1], *ins[2]));
  if (op == "ConstantOfShape")
    return one(foldConstantOfShape(node, a));
  if (op == "Reshape")
    return one(foldReshape(a, *ins[1]));
  if (op == "Expand") {
    ConstTensor shape;
    shape.dims = ins[1]->asInts();
    shape.values.assign(shape.numElements(), 0);
    return one(elementwise({&a, &shape}, type,
                           [](llvm::ArrayRef<double> v) { return v[0]; }));
  }
  if (op == "Transpose")
    return one(foldTranspose(node, a));
  if (op == "GatherElements")
    return one(foldGatherElements(node, a, *ins[1]));
  if (op == "Cast" || op == "CastLike") {
    int32_t to = op == "CastLike" ? ins[1]->elementType
                                  : int32_t(intAttr(node, "to", type));
    ConstTensor out = a;
    out.elementType = to;
    for (double &v : out.values)
      v = castValue(v, to);
    return one(out);
  }
  bool integer = a.isInteger();
  using Args = llvm::ArrayRef<double>;
  if (op == "Add")
    return one(elementwise(ins, type, [](Args v) { return v[0] + v[1]; }));
  if (op == "Sub")
    return one(elementwise(ins, type, [](Args v) { return v[0] - v[1]; }));
  if (op == "Mul")
    return one(elementwise(ins, type, [](Args v) { return v[0] * v[1]; }));
  if (op == "Div")
    return one(elementwise(ins, type, [integer](Args v) {
      return integer ? std::trunc(v[0] / v[1]) : v[0] / v[1];
    }));
  if (op == "Pow")
    return one(
        elementwise(ins, type, [](Args v) { return std::pow(v[0], v[1]); }));
  if (op == "Min")
    return one(elementwise(ins, type, [](Args v) {
      return *std::min_element(v.begin(), v.end());
    }));
  if (op == "Max")
    return one(elementwise(ins, type, [](Args v) {
      return *std::max_element(v.begin(), v.end());
    }));
  if (op == "Mod") {
    // fmod = 0 (integers only): the remainder takes the divisor's sign.
    bool cStyle = intAttr(node, "fmod", 0) != 0;
    return one(elementwise(ins, type, [cStyle](Args v) {
      double r = std::fmod(v[0], v[1]);
      if (!cStyle && r != 0 && (r < 0) != (v[1] < 0))
        r += v[1];
      return r;
    }));
  }
  if (op == "Abs")
    return one(elementwise(ins, type, [](Args v) { return std::fabs(v[0]); }));
  if (op == "Sqrt")
    return one(elementwise(ins, type, [](Args v) { return std::sqrt(v[0]); }));
  if (op == "Neg")
    return one(elementwise(ins, type, [](Args v) { return -v[0]; }));
  if (op == "Log")
    return one(elementwise(ins, type, [](Args v) { return std::log(v[0]); }));
  if (op == "Cos")
    return one(elementwise(ins, type, [](Args v) { return std::cos(v[0]); }));
  if (op == "Sin")
    return one(elementwise(ins, type, [](Args v) { return std::sin(v[0]); }));
  constexpr int32_t boolType = onnx::TensorProto::BOOL;
  if (op == "Not")
    return one(elementwise(ins, boolType, [](Args v) { return v[0] == 0; }));
  if (op == "And")
    return one(elementwise(ins, boolType,
                           [](Args v) { return v[0] != 0 && v[1] != 0; }));
  if (op == "Or")
    return one(elementwise(ins, boolType,
                           [](Args v) { return v[0] != 0 || v[1] != 0; }));
  if (op == "Xor")
    return one(elementwise(ins, boolType,
                           [](Args v) { return (v[0] != 0) != (v[1] != 0); }));
  if (op == "Equal")
    return one(elementwise(ins, boolType, [](Args v) { return v[0] == v[1]; }));
  if (op == "Less")
    return one(elementwise(ins, boolType, [](Args v) { return v[0] < v[1]; }));
  if (op == "Greater")
    return one(elementwise(ins, boolType, [](Args v) { return v[0] > v[1]; }));
  if (op == "LessOrEqual")
    return one(elementwise(ins, boolType, [](Args v) { return v[0] <= v[1]; }));
  if (op == "GreaterOrEqual")
    return one(elementwise(ins, boolType, [](Args v) { return v[0] >= v[1]; }));
  if (op == "Where")
    return one(elementwise(ins, ins[1]->elementType,
                           [](Args v) { return v[0] != 0 ? v[1] : v[2]; }));
  return badInput("no constant folder for {0}", op);
}
