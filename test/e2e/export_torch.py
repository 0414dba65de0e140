#!/usr/bin/env python3
"""Exports small PyTorch models, with their loss, to ONNX for the importer's
end-to-end tests.

    export_torch.py {mlp,transformer,cnn,resnet,mobilenet,gpt,seq2seq}
                    --mode {train,eval} [--exporter {torchscript,dynamo}]
                    [--opset N] -o model.onnx

Each model is wrapped so the exported graph ends in the scalar training loss
(cross-entropy), as Weft expects. Training-mode exports keep dropout and
batch-norm statistics and are written without constant folding (docs/Design.md
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


class BasicBlock(nn.Module):
    """ResNet's basic block: two 3x3 convolutions with BatchNorm and a
    residual connection (a 1x1 projection when the shape changes)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.proj = None
        if stride != 1 or cin != cout:
            self.proj = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return F.relu(h + (x if self.proj is None else self.proj(x)))


class ResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.blocks = nn.Sequential(BasicBlock(8, 8, 1), BasicBlock(8, 16, 2))
        self.fc = nn.Linear(16, 10)

    def forward(self, x, y):
        h = self.blocks(F.relu(self.bn(self.stem(x))))
        return F.cross_entropy(self.fc(torch.flatten(F.adaptive_avg_pool2d(h, 1), 1)), y)


class MobileNet(nn.Module):
    """Depthwise-separable convolutions with ReLU6 (Clip), as MobileNet."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, 2, 1)
        self.dw = nn.Conv2d(8, 8, 3, 1, 1, groups=8)
        self.pw = nn.Conv2d(8, 16, 1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x, y):
        h = F.relu6(self.stem(x))
        h = F.relu6(self.pw(F.relu6(self.dw(h))))
        h = F.avg_pool2d(h, 2)
        return F.cross_entropy(self.fc(h.mean(dim=(2, 3))), y)


class Gpt(nn.Module):
    """A causal decoder block (GPT-style): masked self-attention."""

    def __init__(self, vocab=100, d=32, heads=4, seq=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(seq, d))
        self.layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.1,
                                                batch_first=True,
                                                norm_first=True)
        self.head = nn.Linear(d, vocab, bias=False)
        self.register_buffer("mask", torch.triu(
            torch.full((seq, seq), float("-inf")), diagonal=1))

    def forward(self, ids, y):
        h = self.layer(self.embed(ids) + self.pos, src_mask=self.mask)
        logits = self.head(h)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               y.reshape(-1))


class Seq2Seq(nn.Module):
    """torch.nn.Transformer (encoder-decoder) with shared embeddings."""

    def __init__(self, vocab=50, d=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.model = nn.Transformer(d, 4, 1, 1, 64, dropout=0.1,
                                    batch_first=True)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids, y):
        h = self.model(self.embed(ids), self.embed(y))
        logits = self.head(h)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               y.reshape(-1))


def example(name, batch=4):
    if name == "resnet":
        return ResNet(), (torch.randn(batch, 3, 16, 16),
                          torch.randint(0, 10, (batch,)))
    if name == "mobilenet":
        return MobileNet(), (torch.randn(batch, 3, 16, 16),
                             torch.randint(0, 10, (batch,)))
    if name == "gpt":
        return Gpt(), (torch.randint(0, 100, (batch, 16)),
                       torch.randint(0, 100, (batch, 16)))
    if name == "seq2seq":
        return Seq2Seq(), (torch.randint(0, 50, (batch, 12)),
                           torch.randint(0, 50, (batch, 12)))
    if name == "mlp":
        return Mlp(), (torch.randn(batch, 32), torch.randint(0, 10, (batch,)))
    if name == "transformer":
        return Transformer(), (torch.randint(0, 100, (batch, 16)),
                               torch.randint(0, 100, (batch, 16)))
    return Cnn(), (torch.randn(batch, 3, 16, 16),
                   torch.randint(0, 10, (batch,)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=["mlp", "transformer", "cnn", "resnet",
                                          "mobilenet", "gpt", "seq2seq"])
    parser.add_argument("--mode", choices=["train", "eval"], default="train")
    parser.add_argument("--opset", type=int, default=0,
                        help="opset to export (default: 17 for torchscript, "
                        "the exporter's own for dynamo)")
    parser.add_argument("--exporter", choices=["torchscript", "dynamo"],
                        default="torchscript",
                        help="torch.onnx's TorchScript-based exporter "
                        "(keeps training-mode ops) or its torch.export-based "
                        "one, the default of torch 2.9 and later")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()

    torch.manual_seed(0)
    model, inputs = example(args.model)
    training = args.mode == "train"
    model.train(training)
    token_models = ("transformer", "gpt", "seq2seq")
    names = ["ids", "y"] if args.model in token_models else ["x", "y"]
    if args.exporter == "dynamo":
        # torch.export-based, as `torch.onnx.export` does by default: it
        # traces the eval-mode graph (opset 18 and later).
        torch.onnx.export(
            model, inputs, args.output, input_names=names,
            output_names=["loss"], dynamic_axes={n: {0: "batch"} for n in names},
            **({"opset_version": args.opset} if args.opset else {}))
    else:
        torch.onnx.export(
            model, inputs, args.output, input_names=names,
            output_names=["loss"], dynamic_axes={n: {0: "batch"} for n in names},
            opset_version=args.opset or 17, dynamo=False,
            training=(torch.onnx.TrainingMode.TRAINING if training
                      else torch.onnx.TrainingMode.EVAL),
            do_constant_folding=not training)
    return 0


if __name__ == "__main__":
    sys.exit(main())
