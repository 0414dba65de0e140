//===- PyLiteral.cpp - MLIR values as Python source text ------------------===//

#include "PyLiteral.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>
#include <cstdlib>

using namespace weft;
using namespace weft::emit;

std::string weft::emit::pyString(llvm::StringRef s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      out += llvm::formatv("\\x{0:x-2}", unsigned(c)).str();
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

std::string weft::emit::pyTuple(llvm::ArrayRef<int64_t> values) {
  std::string out = "(";
  for (auto [i, v] : llvm::enumerate(values))
    out += (i ? ", " : "") + std::to_string(v);
  return out + (values.size() == 1 ? ",)" : ")");
}

std::string weft::emit::pyFloat(double v) {
  if (std::isnan(v))
    return "float(\"nan\")";
  if (std::isinf(v))
    return v > 0 ? "float(\"inf\")" : "-float(\"inf\")";
  // The fewest significant digits that read back as the same double, as
  // Python's repr (0.1, not 0.10000000000000001); 17 always do.
  std::string s;
  for (int digits = 1; digits <= 17; ++digits) {
    s.clear();
    llvm::raw_string_ostream os(s);
    os << llvm::format("%.*g", digits, v);
    os.flush();
    if (std::strtod(s.c_str(), nullptr) == v)
      break;
  }
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s;
}

template <typename T>
static std::string tupleOf(llvm::ArrayRef<T> values, std::string (*print)(T)) {
  std::string out = "(";
  for (auto [i, v] : llvm::enumerate(values))
    out += (i ? ", " : "") + print(v);
  return out + (values.size() == 1 ? ",)" : ")");
}

static std::string intText(int64_t v) { return std::to_string(v); }
static std::string int32Text(int32_t v) { return std::to_string(v); }
static std::string boolText(bool v) { return v ? "True" : "False"; }
static std::string doubleText(double v) { return pyFloat(v); }

std::optional<std::string> weft::emit::pyAttribute(mlir::Attribute attr) {
  if (attr.isa<mlir::UnitAttr>())
    return std::string("True");
  if (auto b = attr.dyn_cast<mlir::BoolAttr>())
    return boolText(b.getValue());
  if (auto i = attr.dyn_cast<mlir::IntegerAttr>())
    return i.getType().isInteger(1) ? boolText(i.getValue().getBoolValue())
                                    : std::to_string(i.getInt());
  if (auto f = attr.dyn_cast<mlir::FloatAttr>())
    return pyFloat(f.getValueAsDouble());
  if (auto s = attr.dyn_cast<mlir::StringAttr>())
    return pyString(s.getValue());
  if (auto a = attr.dyn_cast<mlir::DenseI64ArrayAttr>())
    return tupleOf<int64_t>(a.asArrayRef(), intText);
  if (auto a = attr.dyn_cast<mlir::DenseI32ArrayAttr>())
    return tupleOf<int32_t>(a.asArrayRef(), int32Text);
  if (auto a = attr.dyn_cast<mlir::DenseF64ArrayAttr>())
    return tupleOf<double>(a.asArrayRef(), doubleText);
  if (auto a = attr.dyn_cast<mlir::DenseBoolArrayAttr>())
    return tupleOf<bool>(a.asArrayRef(), boolText);
  if (auto a = attr.dyn_cast<mlir::ArrayAttr>()) {
    std::string out = "[";
    for (auto [i, e] : llvm::enumerate(a)) {
      std::optional<std::string> v = pyAttribute(e);
      if (!v)
        return std::nullopt;
      out += (i ? ", " : "") + *v;
    }
    return out + "]";
  }
  if (auto t = attr.dyn_cast<mlir::TypeAttr>())
    return pyString(elementTypeName(t.getValue()));
  if (attr.isa<mlir::ElementsAttr>())
    return std::nullopt;
  // Anything else (an enum attribute) by its printed form.
  std::string s;
  llvm::raw_string_ostream os(s);
  attr.print(os);
  return pyString(os.str());
}

std::string weft::emit::distText(spmd::DistAttr dist) {
  std::string out = "[";
  for (auto [i, e] : llvm::enumerate(dist.getAxes())) {
    if (i)
      out += ", ";
    switch (e.kind) {
    case spmd::AxisDist::Kind::Identity:
      out += "id";
      break;
    case spmd::AxisDist::Kind::Sum:
      out += "sum";
      break;
    case spmd::AxisDist::Kind::Max:
      out += "max";
      break;
    case spmd::AxisDist::Kind::Gather:
      out += llvm::formatv("gather({0}, {1})", e.dim, e.segment).str();
      break;
    }
  }
  return out + "]";
}

std::string weft::emit::elementTypeName(mlir::Type type) {
  if (auto t = type.dyn_cast<mlir::ShapedType>())
    type = t.getElementType();
  if (type.isF32())
    return "f32";
  if (type.isF16())
    return "f16";
  if (type.isBF16())
    return "bf16";
  if (type.isF64())
    return "f64";
  if (type.isInteger(1))
    return "i1";
  if (type.isInteger(32))
    return "i32";
  if (type.isIntOrIndex())
    return "i64";
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return os.str();
}

std::string weft::emit::pyIdentifier(llvm::StringRef name) {
  static const llvm::StringSet<> keywords = {
      "False",  "None",   "True",    "and",      "as",       "assert", "async",
      "await",  "break",  "class",   "continue", "def",      "del",    "elif",
      "else",   "except", "finally", "for",      "from",     "global", "if",
      "import", "in",     "is",      "lambda",   "nonlocal", "not",    "or",
      "pass",   "raise",  "return",  "try",      "while",    "with",   "yield"};
  std::string out;
  for (char c : name)
    out += llvm::isAlnum(c) || c == '_' ? c : '_';
  if (out.empty() || llvm::isDigit(out[0]) || keywords.contains(out))
    out = "in_" + out;
  return out;
}
