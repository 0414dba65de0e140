//===- Kernels.h - Every kernel family of the reference interpreter -*- C++
//-*-===//

#ifndef WEFT_EXEC_KERNELS_H
#define WEFT_EXEC_KERNELS_H

#include "weft/Exec/Conv.h"
#include "weft/Exec/ConvTranspose.h"
#include "weft/Exec/Dropout.h"
#include "weft/Exec/Elementwise.h"
#include "weft/Exec/Gating.h"
#include "weft/Exec/Loss.h"
#include "weft/Exec/Matmul.h"
#include "weft/Exec/Movement.h"
#include "weft/Exec/Norm.h"
#include "weft/Exec/Pool.h"
#include "weft/Exec/Reduce.h"
#include "weft/Exec/Resize.h"
#include "weft/Exec/Scatter.h"
#include "weft/Exec/Softmax.h"
#include "weft/Exec/Unary.h"

#endif // WEFT_EXEC_KERNELS_H
