//===- SpmdDialect.h - The spmd dialect --------------------------*- C++
//-*-===//

#ifndef WEFT_SPMD_IR_SPMDDIALECT_H
#define WEFT_SPMD_IR_SPMDDIALECT_H

#include "mlir/IR/Dialect.h"

#include "Spmd/IR/SpmdDialect.h.inc"

#endif // WEFT_SPMD_IR_SPMDDIALECT_H
