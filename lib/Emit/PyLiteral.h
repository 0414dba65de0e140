//===- PyLiteral.h - MLIR values as Python source text ----------*- C++ -*-===//
//
// The small printers the PyTorch emitter shares: Python literals for
// strings, shapes, floats and a graph op's attributes, a distribution as the
// runtime's text, element types by name, and identifiers. Private to
// lib/Emit.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_EMIT_PYLITERAL_H
#define WEFT_LIB_EMIT_PYLITERAL_H

#include "Spmd/IR/SpmdAttrs.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include <optional>
#include <string>

namespace weft::emit {

/// A Python string literal ("..." with escapes).
std::string pyString(llvm::StringRef s);
/// A Python tuple of integers: `()`, `(4,)`, `(8, 32)`.
std::string pyTuple(llvm::ArrayRef<int64_t> values);
/// A Python float that reads back as the same double (`float("inf")` for
/// infinities, `float("nan")`).
std::string pyFloat(double v);
/// A graph op attribute as a Python value (docs/Emit.md, "ops.py"): ints,
/// floats, strings, booleans (a unit attribute is True), dense arrays as
/// tuples, arrays as lists. None for what has no Python form (an elements
/// attribute: constants are emitted apart).
std::optional<std::string> pyAttribute(mlir::Attribute attr);
/// `dist` as python/weft_runtime/mesh.py's parse_dist reads it:
/// `[gather(0, 1), id]`.
std::string distText(spmd::DistAttr dist);
/// The element type's short name: f32, f16, bf16, f64, i64, i32, i1.
std::string elementTypeName(mlir::Type type);
/// `name` as a Python identifier (other characters become `_`; a leading
/// digit or keyword gets a prefix).
std::string pyIdentifier(llvm::StringRef name);

} // namespace weft::emit

#endif // WEFT_LIB_EMIT_PYLITERAL_H
