#!/usr/bin/env python3
"""Writes the GridSample tests of test/lit/Import/GridSample
(lib/Import/LegalizeGridSample.cpp); what each test checks is described in
test/lit/Import/Inputs/node_case.py. Wanted values are onnxruntime's,
checked against onnx's reference evaluator. Grid positions are drawn from
[-1.3, 1.3], so some fall outside the image. Run it with the pinned
packages after changing the decomposition:

    build/venv/bin/python test/lit/Import/GridSample/Inputs/generate.py
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "Inputs"))

from node_case import Case, normal, write  # noqa: E402


def grid(seed, shape):
    return np.random.default_rng(seed).uniform(-1.3, 1.3, shape)


def cases():
    op = "GridSample"
    linear = Case(
        "linear-zeros",
        "Bilinear sampling with zeros padding (align_corners 0): two taps per\n"
        "dim, four gathers from X flattened to [N, C, H * W], weighted by\n"
        "the products of the tap weights; taps outside the image weigh 0.\n"
        "The gradient reaches X and the grid.",
        op, 22, {}, ["X", "G"],
        {"X": normal(1, (2, 3, 4, 5)), "G": grid(2, (2, 3, 2, 2))}, ["Y"],
        ["CHECK: %[[FLAT:.*]] = graph.reshape %{{.*}} : tensor<2x3x4x5xf32> "
         "-> tensor<2x3x20xf32>",
         "CHECK: graph.floor",
         "CHECK-COUNT-4: graph.gather_elements %[[FLAT]], %{{.*}} "
         "{axis = 2 : i64} : (tensor<2x3x20xf32>, tensor<2x3x6xi64>) -> "
         "tensor<2x3x6xf32>",
         "CHECK: graph.reshape %{{.*}} : tensor<2x3x6xf32> -> "
         "tensor<2x3x3x2xf32>"])
    cubic = Case(
        "cubic-border-aligned",
        "Bicubic sampling with border padding and align_corners 1: four taps\n"
        "per dim with the cubic convolution weights (A = -0.75), the border\n"
        "applied to each tap (clip), sixteen gathers. onnxruntime and\n"
        "PyTorch's grid_sample agree; onnx's reference evaluator differs.",
        op, 22, {"mode": "cubic", "padding_mode": "border",
                 "align_corners": 1}, ["X", "G"],
        {"X": normal(3, (1, 2, 3, 4)), "G": grid(4, (1, 2, 3, 2))}, ["Y"],
        ["CHECK-COUNT-16: graph.gather_elements",
         "CHECK-NOT: graph.gather_elements",
         "CHECK: graph.reshape %{{.*}} : tensor<1x2x6xf32> -> "
         "tensor<1x2x2x3xf32>"],
        reference_differs="onnx.reference pads cubic taps otherwise")
    reflection = Case(
        "linear-reflection",
        "Bilinear sampling with reflection padding: coordinates beyond the\n"
        "borders (-0.5 and size - 0.5) are folded back (floor of the\n"
        "distance over the span, its parity picks the side), then clipped.",
        op, 22, {"padding_mode": "reflection"}, ["X", "G"],
        {"X": normal(5, (1, 1, 3, 4)), "G": grid(6, (1, 4, 3, 2)) * 1.5},
        ["Y"],
        ["CHECK: graph.compare %{{.*}} {predicate = \"eq\"}",
         "CHECK-COUNT-4: graph.gather_elements"])
    nearest = Case(
        "nearest-volumetric",
        "Nearest sampling over three spatial dims (opset 22's volumetric\n"
        "form): one rounded tap per dim, one gather from X flattened to\n"
        "[N, C, D * H * W]. The grid is frozen: the output is piecewise\n"
        "constant in it.",
        op, 22, {"mode": "nearest", "align_corners": 1}, ["X", "G"],
        {"X": normal(7, (1, 2, 3, 2, 4)), "G": grid(8, (1, 2, 2, 3, 3))},
        ["Y"],
        ["CHECK: graph.round",
         "CHECK: graph.gather_elements %{{.*}} {axis = 2 : i64} : "
         "(tensor<1x2x24xf32>, tensor<1x2x12xi64>) -> tensor<1x2x12xf32>",
         "CHECK-NOT: graph.gather_elements",
         "CHECK: graph.reshape %{{.*}} : tensor<1x2x12xf32> -> "
         "tensor<1x2x2x2x3xf32>"],
        frozen=["G"])
    return [linear, cubic, reflection, nearest]


if __name__ == "__main__":
    write(cases(), os.path.dirname(HERE))
