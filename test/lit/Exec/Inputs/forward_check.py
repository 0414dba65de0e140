"""Inputs and expected outputs of forward.onnxtext, in NumPy.

  forward_check.py inputs DIR    writes DIR/x.npy and DIR/idx.npy
  forward_check.py check DIR     compares DIR/out/<i>.npy with NumPy's values
"""
import os
import sys

import numpy as np

x = np.array([[1.5, -2.0, 0.0], [-0.5, 3.0, 4.25]], dtype=np.float32)
idx = np.array([1, 0], dtype=np.int64)
expected = [np.maximum(x, 0), x[idx], x > 0, idx]

mode, folder = sys.argv[1], sys.argv[2]
if mode == "inputs":
    np.save(os.path.join(folder, "x.npy"), x)
    np.save(os.path.join(folder, "idx.npy"), idx)
    sys.exit(0)
for i, want in enumerate(expected):
    got = np.load(os.path.join(folder, "out", "%d.npy" % i))
    same = got.dtype == want.dtype and got.shape == want.shape and \
        np.array_equal(got, want)
    print("output %d: %s %s %s" % (i, got.dtype, got.shape,
                                   "agrees" if same else "DIFFERS"))
