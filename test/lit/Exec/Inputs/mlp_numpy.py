"""Writes inputs for the zoo MLP and prints its loss computed in NumPy.

    mlp_numpy.py MODEL.onnx DIR  (writes DIR/input.npy, DIR/labels.npy)
"""
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

model = onnx.load(sys.argv[1])
w = {i.name: numpy_helper.to_array(i).astype(np.float64)
     for i in model.graph.initializer}
rng = np.random.default_rng(3)
x = rng.standard_normal((3, 16)).astype(np.float32)
y = np.array([0, 3, 1], dtype=np.int64)
np.save(os.path.join(sys.argv[2], "input.npy"), x)
np.save(os.path.join(sys.argv[2], "labels.npy"), y)
h = np.maximum(x.astype(np.float64) @ w["layers.0.weight"] + w["layers.0.bias"], 0)
z = h @ w["layers.1.weight"] + w["layers.1.bias"]
z = z - z.max(axis=1, keepdims=True)
loss = (np.log(np.exp(z).sum(axis=1)) - z[np.arange(3), y]).mean()
print("loss: %.17g" % loss)
