#!/usr/bin/env python3
"""Writes the LinearAttention tests of test/lit/Import/LinearAttention
(lib/Import/LegalizeLinearAttention.cpp); what each test checks is described
in test/lit/Import/Inputs/node_case.py. onnxruntime cannot load opset 27, so
the wanted values are onnx's reference evaluator's. Run it with the pinned
packages after changing the decomposition:

    build/venv/bin/python test/lit/Import/LinearAttention/Inputs/generate.py
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "Inputs"))

from node_case import Case, normal, write  # noqa: E402


def unit_keys(seed, shape, heads):
    """Keys whose per-head vectors have unit length (as the delta rules
    expect)."""
    k = normal(seed, shape).reshape(shape[0], shape[1], heads, -1)
    k /= np.linalg.norm(k, axis=-1, keepdims=True)
    return k.reshape(shape)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def cases():
    f = "LinearAttention"
    gqa = Case(
        "gated-delta-gqa-past",
        "The default rule (gated_delta) with 4 query heads over 2 key/value\n"
        "heads, per-key-size decay, per-head beta and a past_state: 3 steps\n"
        "unrolled, each a decay mul, a k^T S matmul for the prediction, a\n"
        "k (v - k^T S) outer product, and the grouped queries times S.",
        f, 27, {"q_num_heads": 4, "kv_num_heads": 2},
        ["Q", "K", "V", "P", "G", "B"],
        {"Q": normal(1, (2, 3, 8)), "K": unit_keys(2, (2, 3, 4), 2),
         "V": normal(3, (2, 3, 6)), "P": normal(4, (2, 2, 2, 3), 0.5),
         "G": -np.abs(normal(5, (2, 3, 4), 0.3)),
         "B": sigmoid(normal(6, (2, 3, 2)))},
        ["Y", "S"],
        ["CHECK: graph.exp %{{.*}} : tensor<2x2x3x2xf32>",
         "CHECK: graph.mul %{{.*}} : (tensor<2x2x2x3xf32>, "
         "tensor<2x2x2x1xf32>) -> tensor<2x2x2x3xf32>",
         "CHECK: graph.matmul %{{.*}} : (tensor<2x2x1x2xf32>, "
         "tensor<2x2x2x3xf32>) -> tensor<2x2x1x3xf32>",
         "CHECK: graph.matmul %{{.*}} : (tensor<2x2x2x1xf32>, "
         "tensor<2x2x1x3xf32>) -> tensor<2x2x2x3xf32>",
         "CHECK: graph.matmul %{{.*}} : (tensor<2x2x2x2xf32>, "
         "tensor<2x2x2x3xf32>) -> tensor<2x2x2x3xf32>",
         "CHECK: graph.concat %{{.*}} {axis = 1 : i64} : "
         "(tensor<2x1x12xf32>, tensor<2x1x12xf32>, tensor<2x1x12xf32>) -> "
         "tensor<2x3x12xf32>"])
    gated = Case(
        "gated-per-head-scale",
        "The gated rule with one decay per head, an explicit scale and no\n"
        "past_state (zeros): no prediction matmul, no beta.",
        f, 27, {"q_num_heads": 2, "kv_num_heads": 2, "update_rule": "gated",
                "scale": 0.5},
        ["Q", "K", "V", "", "G"],
        {"Q": normal(7, (1, 2, 4)), "K": normal(8, (1, 2, 4)),
         "V": normal(9, (1, 2, 4)), "G": -np.abs(normal(10, (1, 2, 2)))},
        ["Y", "S"],
        ["CHECK: graph.constant dense<0.000000e+00> : tensor<1x2x2x2xf32>",
         "CHECK: graph.mul %{{.*}} : (tensor<1x2x2x2xf32>, "
         "tensor<1x2x1x1xf32>) -> tensor<1x2x2x2xf32>",
         "CHECK-NOT: graph.sub",
         "CHECK: graph.concat %{{.*}} -> tensor<1x2x4xf32>"])
    delta = Case(
        "delta-beta-scalar",
        "The delta rule with a beta shared by all heads ([batch, T, 1]).",
        f, 27, {"q_num_heads": 2, "kv_num_heads": 2, "update_rule": "delta"},
        ["Q", "K", "V", "", "", "B"],
        {"Q": normal(11, (1, 3, 4)), "K": unit_keys(12, (1, 3, 4), 2),
         "V": normal(13, (1, 3, 4)), "B": sigmoid(normal(14, (1, 3, 1)))},
        ["Y", "S"],
        ["CHECK-NOT: graph.exp",
         "CHECK: graph.sub",
         "CHECK: graph.mul %{{.*}} : (tensor<1x2x1x2xf32>, "
         "tensor<1x1x1x1xf32>) -> tensor<1x2x1x2xf32>"])
    return [gqa, gated, delta]


if __name__ == "__main__":
    write(cases(), os.path.dirname(HERE))
