//===- AttrTensor.cpp - Element types and constants from MLIR -------------===//

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "weft/Exec/OpKernels.h"
#include "weft/Support/Error.h"

using namespace weft;
using namespace weft::exec;

std::optional<ElementType> weft::exec::elementTypeOf(mlir::Type type) {
  if (auto shaped = type.dyn_cast<mlir::ShapedType>())
    type = shaped.getElementType();
  if (type.isF32() || type.isF64())
    return ElementType::F32;
  if (type.isBF16())
    return ElementType::BF16;
  if (type.isF16())
    return ElementType::F16;
  if (type.isInteger(1))
    return ElementType::I1;
  if (type.isa<mlir::IntegerType>())
    return ElementType::I64;
  return std::nullopt;
}

llvm::Expected<Tensor> weft::exec::tensorFromAttr(mlir::ElementsAttr attr) {
  auto dense = attr.dyn_cast<mlir::DenseElementsAttr>();
  auto type = attr.getType().dyn_cast<mlir::RankedTensorType>();
  std::optional<ElementType> et = type ? elementTypeOf(type) : std::nullopt;
  if (!dense || !et)
    return badInput("cannot read a constant of type {0} (expected dense "
                    "float or integer elements)",
                    [&] {
                      std::string s;
                      llvm::raw_string_ostream os(s);
                      os << attr.getType();
                      return os.str();
                    }());
  Tensor t(*et, type.getShape());
  int64_t i = 0;
  if (isFloatType(*et)) {
    if (type.getElementType().isF32()) {
      for (float v : dense.getValues<float>())
        t.floats()[i++] = v;
    } else {
      for (llvm::APFloat v : dense.getValues<llvm::APFloat>()) {
        bool lost;
        v.convert(llvm::APFloat::IEEEsingle(),
                  llvm::APFloat::rmNearestTiesToEven, &lost);
        t.floats()[i++] = v.convertToFloat();
      }
    }
    return t;
  }
  if (*et == ElementType::I1) {
    for (bool v : dense.getValues<bool>())
      t.ints()[i++] = v;
    return t;
  }
  for (const llvm::APInt &v : dense.getValues<llvm::APInt>())
    t.ints()[i++] = v.getSExtValue();
  return t;
}
