#!/usr/bin/python3
"""Exports small PyTorch models, with their loss, to ONNX for the importer's
end-to-end tests.

    export_torch.py {mlp,transformer,cnn} --mode {train,eval} -o model.onnx

Each model is wrapped so the exported graph ends in the scalar training loss
(cross-entropy), as Weft expects. Training-mode exports keep dropout and
batch-norm statistics and are written without constant folding (DESIGN.md
§9); eval-mode exports use PyTorch's defaults.
"""
import argparse
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.drop = nn.Dropout(0.1)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x, y):
        h = self.drop(F.relu(self.fc1(x)))
        return F.cross_entropy(self.fc2(h), y)


class Transformer(nn.Module):
    """One torch.nn.TransformerEncoderLayer with a token embedding and an
    untied LM head, as in BERT-style models."""

    def __init__(self, vocab=100, d=32, heads=4, ffn=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.layer = nn.TransformerEncoderLayer(d, heads, ffn, dropout=0.1,
                                                batch_first=True)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids, y):
        h = self.layer(self.embed(ids))
        logits = self.head(h)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               y.reshape(-1))


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, 10)

    def forward(self, x, y):
        h = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        h = F.relu(self.bn2(self.conv2(h)))
        h = F.adaptive_avg_pool2d(h, 1).flatten(1)
        return F.cross_entropy(self.fc(h), y)


def example(name, batch=4):
    if name == "mlp":
        return Mlp(), (torch.randn(batch, 32), torch.randint(0, 10, (batch,)))
    if name == "transformer":
        return Transformer(), (torch.randint(0, 100, (batch, 16)),
                               torch.randint(0, 100, (batch, 16)))
    return Cnn(), (torch.randn(batch, 3, 16, 16),
                   torch.randint(0, 10, (batch,)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=["mlp", "transformer", "cnn"])
    parser.add_argument("--mode", choices=["train", "eval"], default="train")
    parser.add_argument("--opset", type=int, default=17)
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()

    torch.manual_seed(0)
    model, inputs = example(args.model)
    training = args.mode == "train"
    model.train(training)
    names = ["x", "y"] if args.model != "transformer" else ["ids", "y"]
    torch.onnx.export(
        model, inputs, args.output, input_names=names, output_names=["loss"],
        dynamic_axes={n: {0: "batch"} for n in names},
        opset_version=args.opset,
        training=(torch.onnx.TrainingMode.TRAINING if training
                  else torch.onnx.TrainingMode.EVAL),
        do_constant_folding=not training)
    return 0


if __name__ == "__main__":
    sys.exit(main())
