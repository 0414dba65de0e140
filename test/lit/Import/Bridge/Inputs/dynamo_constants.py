#!/usr/bin/env python3
"""Writes the model of dynamo-constants.test: the constant forms torch.onnx's
dynamo exporter (optimize=False) writes that the ONNX text format cannot
spell (an empty value_ints list).

    dynamo_constants.py OUT.onnx
"""
import sys

import onnx
from onnx import TensorProto, helper


def ints(name, values):
    node = helper.make_node("Constant", [], [name])
    node.attribute.append(
        helper.make_attribute("value_ints", values,
                              attr_type=onnx.AttributeProto.INTS))
    return node


def main():
    nodes = [
        # torch.zeros([]): a ConstantOfShape of an empty shape list.
        ints("scalar_shape", []),
        helper.make_node("ConstantOfShape", ["scalar_shape"], ["zero"],
                         value=helper.make_tensor("v", TensorProto.FLOAT, [1],
                                                  [0.0])),
        # x.mean(-1, keepdim=True): the axes list reshaped to 1-d.
        ints("minus_one", [-1]),
        helper.make_node("Reshape", ["minus_one", "minus_one"], ["axes"]),
        helper.make_node("ReduceMean", ["x", "axes"], ["m"], keepdims=1),
        # m.view(-1, 1): no leading dims kept, then -1, then the last dim.
        helper.make_node("Shape", ["m"], ["lead"], start=0, end=0),
        helper.make_node("Shape", ["m"], ["tail"], start=2),
        helper.make_node("Concat", ["lead", "minus_one", "tail"], ["target"],
                         axis=0),
        helper.make_node("Reshape", ["m", "target"], ["flat"]),
        helper.make_node("ReduceSum", ["flat"], ["total"], keepdims=0),
        helper.make_node("Add", ["total", "zero"], ["loss"]),
    ]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4, 6])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)],
                              ir_version=10)
    onnx.save(model, sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
