#!/usr/bin/env python3
"""Reference values from PyTorch for weft-run's end-to-end tests.

    torch_reference.py export {mlp,transformer,cnn} -o DIR
                       [--exporter {torchscript,dynamo} [--optimize]]
        builds a small model (seeded), exports it to DIR/model.onnx WITH its
        weights in training mode (no dropout, no constant folding; the
        dynamo exporter writes large weights to DIR/model.onnx.data), saves the
        data inputs as DIR/<input>.npy, and writes DIR/reference.txt: the
        loss and the L2 norm of every parameter's gradient after one
        backward pass in float64 (the same weights and inputs).
    torch_reference.py compare DIR/reference.txt WEFT_OUTPUT [--rtol R]
                           [--atol A]
        compares weft-run --print-gradients output with the reference; exit
        0 if the loss and every gradient norm b agree (|a − b| ≤ A + R·|b|),
        1 otherwise, naming what differs. The absolute term covers gradients
        that are zero in exact arithmetic (a bias followed by BatchNorm). A
        tied parameter may appear in WEFT_OUTPUT under any of its names.

test/e2e/hf_models.py writes its references with write_reference.
"""
import argparse
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Mlp(nn.Module):
    """Linear → LayerNorm → GELU (erf) → Linear → cross-entropy."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.norm = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 5)

    def forward(self, x, y):
        h = F.gelu(self.norm(self.fc1(x)))
        return F.cross_entropy(self.fc2(h), y)


class Transformer(nn.Module):
    """An embedding, one TransformerEncoderLayer (dropout 0) and an untied
    LM head."""

    def __init__(self, vocab=40, d=16, heads=2, ffn=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.layer = nn.TransformerEncoderLayer(d, heads, ffn, dropout=0.0,
                                                batch_first=True)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids, y):
        logits = self.head(self.layer(self.embed(ids)))
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               y.reshape(-1))


class Cnn(nn.Module):
    """Conv → BatchNorm (batch statistics) → ReLU → MaxPool → Conv → ReLU →
    global average pool → Linear."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 6, 3, padding=1, stride=2)
        self.fc = nn.Linear(6, 5)

    def forward(self, x, y):
        h = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        h = F.relu(self.conv2(h))
        h = F.adaptive_avg_pool2d(h, 1).flatten(1)
        return F.cross_entropy(self.fc(h), y)


def example(name):
    g = torch.Generator().manual_seed(1)
    if name == "mlp":
        return Mlp(), {"x": torch.randn(8, 16, generator=g),
                       "y": torch.randint(0, 5, (8,), generator=g)}
    if name == "transformer":
        return Transformer(), {"ids": torch.randint(0, 40, (3, 6), generator=g),
                               "y": torch.randint(0, 40, (3, 6), generator=g)}
    return Cnn(), {"x": torch.randn(4, 3, 8, 8, generator=g),
                   "y": torch.randint(0, 5, (4,), generator=g)}


def export(args):
    torch.manual_seed(0)
    model, inputs = example(args.model)
    os.makedirs(args.output, exist_ok=True)
    names = list(inputs)
    model.train(True)
    path = os.path.join(args.output, "model.onnx")
    if args.exporter == "torchscript":
        torch.onnx.export(
            model, tuple(inputs.values()), path, input_names=names,
            output_names=["loss"], opset_version=17, dynamo=False,
            training=torch.onnx.TrainingMode.TRAINING,
            do_constant_folding=False)
    else:
        # torch.export-based (torch.onnx's default). Its optimizer, on by
        # default, folds transposed weights into unnamed constants and
        # merges initializers of equal value (two fresh LayerNorms' weights
        # become one tensor), which changes what is trained: --optimize
        # keeps it, as a user with default settings would have it.
        torch.onnx.export(
            model, tuple(inputs.values()), path, input_names=names,
            output_names=["loss"], dynamo=True, optimize=args.optimize)
    for name, value in inputs.items():
        np.save(os.path.join(args.output, name + ".npy"),
                np.ascontiguousarray(value.numpy()))
    write_reference(model, inputs, args.output)
    return 0


def write_reference(model, inputs, output):
    """Writes OUTPUT/reference.txt: the loss of model(*inputs) and the L2
    norm of every parameter's gradient, computed in float64 so that they are
    exact at the tolerance used. A tied parameter is listed once, under its
    first name, followed by 'alias: OTHER FIRST' lines for its other names
    (an exporter may name the shared tensor by any of them). The model is
    converted to float64 in place."""
    model = model.double()
    model.train(True)
    loss = model(*[v.double() if v.is_floating_point() else v
                   for v in inputs.values()])
    loss.backward()
    names = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        names.setdefault(id(p), []).append(name)
    with open(os.path.join(output, "reference.txt"), "w") as f:
        f.write("loss: %.17g\n" % loss.item())
        for name, p in model.named_parameters():
            f.write("grad norm: %s %.17g\n" % (name, p.grad.norm().item()))
            for alias in names[id(p)][1:]:
                f.write("alias: %s %s\n" % (alias, name))


def read_values(path):
    """'loss: X' and 'grad norm: NAME X' lines → {'loss': X, NAME: X}."""
    values = {}
    with open(path) as f:
        for line in f:
            if line.startswith("loss:"):
                values["loss"] = float(line.split()[1])
            elif line.startswith("grad norm:"):
                _, _, name, value = line.split()
                values[name] = float(value)
    return values


def read_aliases(path):
    """'alias: OTHER FIRST' lines → {FIRST: [OTHER, ...]}."""
    aliases = {}
    with open(path) as f:
        for line in f:
            if line.startswith("alias:"):
                _, other, first = line.split()
                aliases.setdefault(first, []).append(other)
    return aliases


def compare(args):
    ref, got = read_values(args.reference), read_values(args.weft)
    aliases = read_aliases(args.reference)
    bad = 0
    for name, expected in ref.items():
        found = [n for n in [name] + aliases.get(name, []) if n in got]
        if not found:
            print("missing in weft-run output: %s" % name)
            bad += 1
            continue
        name = found[0]
        diff = abs(got[name] - expected)
        if diff > args.atol + args.rtol * abs(expected):
            print("differs: %s: weft-run %.9g, PyTorch %.9g (|difference| "
                  "%.2e)" % (name, got[name], expected, diff))
            bad += 1
    if bad:
        return 1
    print("loss agrees (rtol %g, atol %g)" % (args.rtol, args.atol))
    print("%d gradient norms agree" % (len(ref) - 1))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    e = sub.add_parser("export")
    e.add_argument("model", choices=["mlp", "transformer", "cnn"])
    e.add_argument("--exporter", choices=["torchscript", "dynamo"],
                   default="torchscript")
    e.add_argument("--optimize", action="store_true",
                   help="dynamo: run the exporter's graph optimizer")
    e.add_argument("-o", "--output", required=True)
    c = sub.add_parser("compare")
    c.add_argument("reference")
    c.add_argument("weft")
    c.add_argument("--rtol", type=float, default=1e-4)
    c.add_argument("--atol", type=float, default=1e-6)
    args = parser.parse_args()
    return export(args) if args.command == "export" else compare(args)


if __name__ == "__main__":
    sys.exit(main())
