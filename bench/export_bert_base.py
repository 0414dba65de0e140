#!/usr/bin/env python3
"""Exports a BERT-Base-sized encoder (12 layers, hidden 768, 12 heads, FFN
3072, vocabulary 30522, sequence 128) from PyTorch with its weights, in
training mode, ending in the masked-LM cross-entropy loss."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class BertBase(nn.Module):
    def __init__(self, vocab=30522, hidden=768, heads=12, ffn=3072, layers=12,
                 seq=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Parameter(torch.randn(seq, hidden) * 0.02)
        self.norm = nn.LayerNorm(hidden)
        layer = nn.TransformerEncoderLayer(hidden, heads, ffn, dropout=0.1,
                                           activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, ids, labels):
        h = self.encoder(self.norm(self.tok(ids) + self.pos))
        logits = self.head(h)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               labels.reshape(-1))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = BertBase().train()
    ids = torch.randint(0, 30522, (2, 128))
    torch.onnx.export(model, (ids, ids), args.output,
                      input_names=["ids", "labels"], output_names=["loss"],
                      dynamic_axes={"ids": {0: "batch"}, "labels": {0: "batch"}},
                      opset_version=17,
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, dynamo=False)


if __name__ == "__main__":
    main()
