#!/usr/bin/env python3
"""Writes the CausalConvWithState tests of test/lit/Import/CausalConvWithState
(lib/Import/LegalizeCausalConv.cpp); what each test checks is described in
test/lit/Import/Inputs/node_case.py. onnxruntime cannot load opset 27, so the
wanted values are onnx's reference evaluator's. Run it with the pinned
packages after changing the decomposition:

    build/venv/bin/python test/lit/Import/CausalConvWithState/Inputs/generate.py
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "Inputs"))

from node_case import Case, normal, write  # noqa: E402


def cases():
    silu = Case(
        "silu-bias-past",
        "activation silu with a bias and past_state: the state is\n"
        "concatenated in front of the input, each of the 3 taps is a slice\n"
        "of it times a weight column, silu is x * sigmoid(x), and\n"
        "present_state is the last 2 positions of the concatenation.",
        "CausalConvWithState", 27, {"activation": "silu"},
        ["X", "W", "B", "P"],
        {"X": normal(1, (2, 3, 5)), "W": normal(2, (3, 1, 3)),
         "B": normal(3, (3,)), "P": normal(4, (2, 3, 2))},
        ["Y", "S"],
        ["CHECK: %[[PAD:.*]] = graph.concat %{{.*}} {axis = 2 : i64} : "
         "(tensor<2x3x2xf32>, tensor<2x3x5xf32>) -> tensor<2x3x7xf32>",
         "CHECK-COUNT-3: graph.slice %[[PAD]] {{.*}} : tensor<2x3x7xf32> -> "
         "tensor<2x3x5xf32>",
         "CHECK: graph.sigmoid",
         "CHECK: graph.slice %[[PAD]] {limits = array<i64: 2, 3, 7>, "
         "starts = array<i64: 0, 0, 5>, steps = array<i64: 1, 1, 1>} : "
         "tensor<2x3x7xf32> -> tensor<2x3x2xf32>"])
    short = Case(
        "short-input-zero-state",
        "An input of 2 positions, a kernel of 4 and no past_state: the state\n"
        "is a constant of zeros, and present_state (3 positions) holds one\n"
        "of them and both inputs.",
        "CausalConvWithState", 27, {}, ["X", "W"],
        {"X": normal(5, (1, 2, 2)), "W": normal(6, (2, 1, 4))},
        ["Y", "S"],
        ["CHECK: graph.constant dense<0.000000e+00> : tensor<1x2x3xf32>",
         "CHECK: graph.concat %{{.*}} -> tensor<1x2x5xf32>",
         "CHECK-NOT: graph.sigmoid",
         "CHECK: graph.slice {{.*}} : tensor<1x2x5xf32> -> tensor<1x2x3xf32>"])
    return [silu, short]


if __name__ == "__main__":
    write(cases(), os.path.dirname(HERE))
