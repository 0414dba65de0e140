//===- GraphOpsElementwise.td - Elementwise graph ops ------*- tablegen -*-===//
//
// Included by GraphOps.td after the common classes: the binary ops with
// broadcasting, compare and select, the unary functions, clip, cast and
// expand.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_GRAPH_OPS_ELEMENTWISE
#define WEFT_GRAPH_OPS_ELEMENTWISE

class Graph_BinaryOp<string mnemonic, string math, string cost>
    : Graph_Op<mnemonic, [Pure, ResultsBroadcastableShape,
                          SameOperandsAndResultElementType], cost> {
  let summary = "elementwise " # math # " with broadcasting";
  let description = "Computes `result = " # math # [{` elementwise with numpy
    broadcasting (ONNX semantics). Operand and result element types agree.

    Example:

    ```mlir
    %z = graph.}] # mnemonic # [{ %x, %b : (tensor<32x128x768xf32>, tensor<768xf32>) -> tensor<32x128x768xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

// Backward of add/sub only passes the gradient through (and reduces over
// broadcast dims); mul/div/pow need their inputs.
def Graph_AddOp : Graph_BinaryOp<"add", "lhs + rhs",
    "return ::weft::graph::binaryCost(shapes, 1, 1, /*keepInputs=*/false);">;
def Graph_SubOp : Graph_BinaryOp<"sub", "lhs - rhs",
    "return ::weft::graph::binaryCost(shapes, 1, 2, /*keepInputs=*/false);">;
def Graph_MulOp : Graph_BinaryOp<"mul", "lhs * rhs",
    "return ::weft::graph::binaryCost(shapes, 1, 2, /*keepInputs=*/true);">;
def Graph_DivOp : Graph_BinaryOp<"div", "lhs / rhs",
    "return ::weft::graph::binaryCost(shapes, 1, 4, /*keepInputs=*/true);">;
def Graph_PowOp : Graph_BinaryOp<"pow", "lhs ^ rhs",
    "return ::weft::graph::binaryCost(shapes, 4, 8, /*keepInputs=*/true);">;
def Graph_MinOp : Graph_BinaryOp<"min", "min(lhs, rhs)",
    "return ::weft::graph::binaryCost(shapes, 1, 1, /*keepInputs=*/true);">;
def Graph_MaxOp : Graph_BinaryOp<"max", "max(lhs, rhs)",
    "return ::weft::graph::binaryCost(shapes, 1, 1, /*keepInputs=*/true);">;

def Graph_CompareOp : Graph_Op<"compare", [Pure, ResultsBroadcastableShape],
    "return ::weft::graph::binaryCost(shapes, 1, 0, /*keepInputs=*/false);"> {
  let summary = "elementwise comparison with broadcasting";
  let description = [{
    Compares `lhs` and `rhs` elementwise with `predicate` one of `eq`, `ne`,
    `lt`, `le`, `gt`, `ge`, giving an `i1` tensor. No gradient flows through.

    Example:

    ```mlir
    %m = graph.compare %ids, %zero {predicate = "eq"} : (tensor<32x128xi64>, tensor<i64>) -> tensor<32x128xi1>
    ```
  }];
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs, StrAttr:$predicate);
  let results = (outs RankedTensorOf<[I1]>:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_SelectOp : Graph_Op<"select", [Pure, ResultsBroadcastableShape],
    "return ::weft::graph::binaryCost(shapes, 1, 1, /*keepInputs=*/false);"> {
  let summary = "elementwise choice with broadcasting (ONNX Where)";
  let description = [{
    `result = condition ? lhs : rhs` elementwise, with numpy broadcasting of
    all three operands. The gradient flows to `lhs` where the condition holds
    and to `rhs` elsewhere.

    Example:

    ```mlir
    %s = graph.select %mask, %scores, %neg : (tensor<1x1x128x128xi1>, tensor<32x12x128x128xf32>, tensor<f32>) -> tensor<32x12x128x128xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I1]>:$condition, Graph_Tensor:$lhs,
                   Graph_Tensor:$rhs);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

class Graph_UnaryOp<string mnemonic, string math, string cost,
                    string extra = "">
    : Graph_Op<mnemonic, [Pure, SameOperandsAndResultType], cost> {
  let summary = "elementwise " # math;
  let description = "Computes `result = " # math # [{` elementwise; the
    result has the operand's type.}] # extra # [{

    Example:

    ```mlir
    %y = graph.}] # mnemonic # [{ %x : tensor<32x3072xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

// Per-element FLOP counts are conventional (one per arithmetic operation;
// transcendental functions as a handful); what the backward keeps is exact.
def Graph_SqrtOp : Graph_UnaryOp<"sqrt", "sqrt(input)",
    "return ::weft::graph::unaryCost(shapes, 1, 2, ::weft::graph::Keep::Result);">;
def Graph_RsqrtOp : Graph_UnaryOp<"rsqrt", "1 / sqrt(input)",
    "return ::weft::graph::unaryCost(shapes, 2, 3, ::weft::graph::Keep::Result);">;
def Graph_NegOp : Graph_UnaryOp<"neg", "-input",
    "return ::weft::graph::unaryCost(shapes, 1, 1, ::weft::graph::Keep::Nothing);">;
def Graph_ReluOp : Graph_UnaryOp<"relu", "max(input, 0)",
    "return ::weft::graph::unaryCost(shapes, 1, 1, ::weft::graph::Keep::Result);">;
def Graph_GeluOp : Graph_UnaryOp<"gelu", "input * Phi(input) (erf form)",
    "return ::weft::graph::unaryCost(shapes, 8, 12, ::weft::graph::Keep::Input);">;
def Graph_TanhOp : Graph_UnaryOp<"tanh", "tanh(input)",
    "return ::weft::graph::unaryCost(shapes, 4, 2, ::weft::graph::Keep::Result);">;
def Graph_SigmoidOp : Graph_UnaryOp<"sigmoid", "1 / (1 + exp(-input))",
    "return ::weft::graph::unaryCost(shapes, 4, 2, ::weft::graph::Keep::Result);">;
def Graph_ErfOp : Graph_UnaryOp<"erf", "erf(input)",
    "return ::weft::graph::unaryCost(shapes, 4, 4, ::weft::graph::Keep::Input);">;
def Graph_ExpOp : Graph_UnaryOp<"exp", "exp(input)",
    "return ::weft::graph::unaryCost(shapes, 4, 1, ::weft::graph::Keep::Result);">;
def Graph_LogOp : Graph_UnaryOp<"log", "log(input)",
    "return ::weft::graph::unaryCost(shapes, 4, 1, ::weft::graph::Keep::Input);">;

// Trigonometric and hyperbolic functions, their inverses, and the roundings
// (ONNX Sin … Atanh, Floor, Ceil, Round): one op each, as the functions
// above (the dialect's description says why). Outside its domain an inverse
// gives NaN, as ONNX's.
def Graph_SinOp : Graph_UnaryOp<"sin", "sin(input)",
    "return ::weft::graph::unaryCost(shapes, 4, 4, ::weft::graph::Keep::Input);",
    " Its derivative is cos(input).">;
def Graph_CosOp : Graph_UnaryOp<"cos", "cos(input)",
    "return ::weft::graph::unaryCost(shapes, 4, 4, ::weft::graph::Keep::Input);",
    " Its derivative is −sin(input).">;
def Graph_TanOp : Graph_UnaryOp<"tan", "tan(input)",
    "return ::weft::graph::unaryCost(shapes, 4, 2, ::weft::graph::Keep::Result);",
    " Its derivative is 1 + result².">;
def Graph_AsinOp : Graph_UnaryOp<"asin", "asin(input)",
    "return ::weft::graph::unaryCost(shapes, 4, 4, ::weft::graph::Keep::Input);",
    " Defined on [−1, 1]; its derivative is 1 / √(1 − input²).">;
def Graph_AcosOp : Graph_UnaryOp<"acos", "acos(input)",
    "return ::weft::graph::unaryCost(shapes, 4, 4, ::weft::graph::Keep::Input);",
    " Defined on [−1, 1]; its derivative is −1 / √(1 − input²).">;
def Graph_AtanOp : Graph_UnaryOp<"atan", "atan(input)",
    "return ::weft::graph::unaryCost(shapes, 4, 3, ::weft::graph::Keep::Input);",
    " Its derivative is 1 / (1 + input²).">;
def Graph_SinhOp : Graph_UnaryOp<"sinh", "sinh(input)",
    "return ::weft::graph::unaryCost(shapes, 4, 4, ::weft::graph::Keep::Input);",
    " Its derivative is cosh(input).">;
def Graph_CoshOp : Graph_UnaryOp<"cosh", "cosh(input)",
    "return ::weft::graph::unaryCost(shapes, 4, 4, ::weft::graph::Keep::Input);",
    " Its derivative is sinh(input).">;
def Graph_AsinhOp : Graph_UnaryOp<"asinh", "asinh(input)",
    "return ::weft::graph::unaryCost(shapes, 4, 4, ::weft::graph::Keep::Input);",
    " Its derivative is 1 / √(input² + 1).">;
def Graph_AcoshOp : Graph_UnaryOp<"acosh", "acosh(input)",
    "return ::weft::graph::unaryCost(shapes, 4, 4, ::weft::graph::Keep::Input);",
    " Defined on [1, ∞); its derivative is 1 / √(input² − 1).">;
def Graph_AtanhOp : Graph_UnaryOp<"atanh", "atanh(input)",
    "return ::weft::graph::unaryCost(shapes, 4, 3, ::weft::graph::Keep::Input);",
    " Defined on (−1, 1); its derivative is 1 / (1 − input²).">;
def Graph_FloorOp : Graph_UnaryOp<"floor", "floor(input)",
    "return ::weft::graph::unaryCost(shapes, 1, 0, ::weft::graph::Keep::Nothing);",
    [{ The largest integer not above the input. Piecewise constant: the
    gradient is zero everywhere, as PyTorch's.}]>;
def Graph_CeilOp : Graph_UnaryOp<"ceil", "ceil(input)",
    "return ::weft::graph::unaryCost(shapes, 1, 0, ::weft::graph::Keep::Nothing);",
    [{ The smallest integer not below the input. Piecewise constant: the
    gradient is zero everywhere, as PyTorch's.}]>;
def Graph_RoundOp : Graph_UnaryOp<"round", "round(input)",
    "return ::weft::graph::unaryCost(shapes, 1, 0, ::weft::graph::Keep::Nothing);",
    [{ The nearest integer, halves to the even one (ONNX Round, NumPy's
    `rint`). Piecewise constant: the gradient is zero everywhere, as
    PyTorch's.}]>;

def Graph_ClipOp : Graph_Op<"clip", [Pure, SameOperandsAndResultType],
    "return ::weft::graph::unaryCost(shapes, 2, 1, ::weft::graph::Keep::Input);"> {
  let summary = "elementwise clamp to [min, max]";
  let description = [{
    `result = min(max(input, min), max)`; either bound may be absent
    (ONNX Clip, e.g. ReLU6 in MobileNet). The gradient is zero where the
    input was clamped.

    Example:

    ```mlir
    %y = graph.clip %x {min = 0.0, max = 6.0} : tensor<32x96x16x16xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, OptionalAttr<F64Attr>:$min,
                   OptionalAttr<F64Attr>:$max);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Graph_CastOp : Graph_Op<"cast", [Pure, SameOperandsAndResultShape],
    "return ::weft::graph::unaryCost(shapes, 0, 0, ::weft::graph::Keep::Nothing);"> {
  let summary = "elementwise element-type conversion";
  let description = [{
    Converts each element to the result's element type (ONNX Cast). Float to
    float casts pass the gradient through; casts from or to integers have
    none.

    Example:

    ```mlir
    %f = graph.cast %mask : tensor<32x128xi64> -> tensor<32x128xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Graph_ExpandOp : Graph_Op<"expand", [Pure],
    "return ::weft::graph::movementCost(shapes);"> {
  let summary = "broadcast to a larger shape";
  let description = [{
    Broadcasts `input` to the result shape by numpy rules (ONNX Expand). The
    backward sums the gradient over the broadcast dimensions.

    Example:

    ```mlir
    %e = graph.expand %pos : tensor<1x128x768xf32> -> tensor<32x128x768xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

#endif // WEFT_GRAPH_OPS_ELEMENTWISE
