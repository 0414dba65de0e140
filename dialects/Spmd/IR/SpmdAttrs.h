//===- SpmdAttrs.h - Meshes, distributions, segments -------------*- C++
//-*-===//

#ifndef WEFT_SPMD_IR_SPMDATTRS_H
#define WEFT_SPMD_IR_SPMDATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/Hashing.h"

namespace weft::spmd {

/// One entry of a distribution: how a value is laid out along one mesh axis.
struct AxisDist {
  enum class Kind : uint8_t { Identity, Gather, Sum, Max };
  Kind kind = Kind::Identity;
  /// The split tensor dim (Gather only).
  int64_t dim = -1;
  /// The segment giving the shares (Gather only).
  int64_t segment = -1;

  static AxisDist identity() { return {}; }
  static AxisDist gather(int64_t dim, int64_t segment) {
    return {Kind::Gather, dim, segment};
  }
  static AxisDist sum() { return {Kind::Sum, -1, -1}; }
  static AxisDist max() { return {Kind::Max, -1, -1}; }

  bool isIdentity() const { return kind == Kind::Identity; }
  bool isGather() const { return kind == Kind::Gather; }
  bool isPartial() const { return kind == Kind::Sum || kind == Kind::Max; }

  bool operator==(const AxisDist &o) const {
    return kind == o.kind && dim == o.dim && segment == o.segment;
  }
  bool operator!=(const AxisDist &o) const { return !(*this == o); }
};

inline llvm::hash_code hash_value(const AxisDist &d) {
  return llvm::hash_combine(static_cast<uint8_t>(d.kind), d.dim, d.segment);
}

/// Prints `id`, `gather(d, s)`, `sum` or `max`.
llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const AxisDist &d);
/// The same as a string, for diagnostics.
std::string str(const AxisDist &d);

/// Prints ratios as `[r0, r1, ...]` with 17 significant digits.
void printRatios(mlir::AsmPrinter &printer, mlir::DenseF64ArrayAttr ratios);
/// Parses what printRatios prints.
mlir::FailureOr<mlir::DenseF64ArrayAttr> parseRatios(mlir::AsmParser &parser);

} // namespace weft::spmd

#include "Spmd/IR/SpmdEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "Spmd/IR/SpmdAttrs.h.inc"

#endif // WEFT_SPMD_IR_SPMDATTRS_H
