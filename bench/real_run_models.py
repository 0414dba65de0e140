"""The models of bench/real_run.sh, exported to ONNX with their weights.

    real_run_models.py NAME OUT.onnx

mlp      256 -> 1024 -> 1024 -> 10, ReLU, global batch 64
encoder  a 2-layer post-norm transformer encoder, hidden 256, 4 heads,
         FFN 1024, sequence 32, vocabulary 1000, LM head; global batch 16
cnn      a small CNN with residual blocks: 3x3 stem to 32 channels, two
         residual blocks (conv-ReLU-conv + skip), a strided conv to 64,
         another residual block, global average pool, linear to 10;
         32x32 RGB, global batch 16
vit      a small ViT: 4x4 patches of a 32x32 image (64 tokens), hidden 128,
         2 layers, 4 heads, FFN 512, mean pool, linear to 10; global batch 16

Exported in training mode (TorchScript exporter, opset 17, no constant
folding) as bench/ddp_overhead.py does, the loss (cross-entropy) inside.
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(256, 1024), nn.Linear(1024, 1024), nn.Linear(1024, 10)

    def forward(self, x, y):
        return F.cross_entropy(self.fc3(F.relu(self.fc2(F.relu(self.fc1(x))))), y)


class Block(nn.Module):
    """A post-norm transformer layer, batch-first (B, S, D) all the way:
    nn.TransformerEncoderLayer's export moves the batch to dim 1 and merges
    it with the sequence before the output projection, which no
    data-parallel plan can split (DP-EV then replicates the rest of the
    layer)."""

    def __init__(self, d, heads, ffn):
        super().__init__()
        self.heads = heads
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff1, self.ff2 = nn.Linear(d, ffn), nn.Linear(ffn, d)

    def forward(self, h):
        b, s, d = h.shape
        q, k, v = self.qkv(h).reshape(b, s, 3, self.heads, d // self.heads).unbind(2)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        a = torch.softmax(q @ k.transpose(2, 3) / (d // self.heads) ** 0.5, -1) @ v
        h = self.norm1(h + self.out(a.transpose(1, 2).reshape(b, s, d)))
        return self.norm2(h + self.ff2(F.gelu(self.ff1(h))))


class Encoder(nn.Module):
    def __init__(self, vocab=1000, d=256, seq=32):
        super().__init__()
        self.vocab = vocab
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(seq, d) * 0.02)
        self.layers = nn.ModuleList(Block(d, 4, 4 * d) for _ in range(2))
        self.head = nn.Linear(d, vocab)

    def forward(self, ids, y):
        h = self.embed(ids) + self.pos
        for layer in self.layers:
            h = layer(h)
        return F.cross_entropy(self.head(h).reshape(-1, self.vocab), y.reshape(-1))


class Residual(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.a, self.b = nn.Conv2d(c, c, 3, padding=1), nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        return F.relu(x + self.b(F.relu(self.a(x))))


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 32, 3, padding=1)
        self.r1, self.r2 = Residual(32), Residual(32)
        self.down = nn.Conv2d(32, 64, 3, stride=2, padding=1)
        self.r3 = Residual(64)
        self.fc = nn.Linear(64, 10)

    def forward(self, x, y):
        h = self.r2(self.r1(F.relu(self.stem(x))))
        h = self.r3(F.relu(self.down(h)))
        return F.cross_entropy(self.fc(h.mean(dim=(2, 3))), y)


class Vit(nn.Module):
    def __init__(self, d=128, patch=4, image=32, layers=2):
        super().__init__()
        self.patch = patch
        tokens = (image // patch) ** 2
        self.embed = nn.Linear(3 * patch * patch, d)
        self.pos = nn.Parameter(torch.randn(tokens, d) * 0.02)
        self.layers = nn.ModuleList(Block(d, 4, 4 * d) for _ in range(layers))
        self.head = nn.Linear(d, 10)

    def forward(self, x, y):
        b, c, hgt, wid = x.shape
        p = self.patch
        t = x.reshape(b, c, hgt // p, p, wid // p, p).permute(0, 2, 4, 1, 3, 5)
        h = self.embed(t.reshape(b, (hgt // p) * (wid // p), c * p * p)) + self.pos
        for layer in self.layers:
            h = layer(h)
        return F.cross_entropy(self.head(h.mean(dim=1)), y)


def example(name):
    g = torch.Generator().manual_seed(0)
    if name == "mlp":
        return Mlp(), {"x": torch.randn(64, 256, generator=g),
                       "y": torch.randint(0, 10, (64,), generator=g)}
    if name == "encoder":
        return Encoder(), {"ids": torch.randint(0, 1000, (16, 32), generator=g),
                           "y": torch.randint(0, 1000, (16, 32), generator=g)}
    if name == "cnn":
        return Cnn(), {"x": torch.randn(16, 3, 32, 32, generator=g),
                       "y": torch.randint(0, 10, (16,), generator=g)}
    if name == "vit":
        return Vit(), {"x": torch.randn(16, 3, 32, 32, generator=g),
                       "y": torch.randint(0, 10, (16,), generator=g)}
    raise SystemExit("unknown model '%s' (mlp, encoder, cnn, vit)" % name)


def export(name, path):
    torch.manual_seed(0)
    model, inputs = example(name)
    model.train(True)
    torch.onnx.export(model, tuple(inputs.values()), path, input_names=list(inputs),
                      output_names=["loss"], opset_version=17, dynamo=False,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
    return next(iter(inputs.values())).shape[0]


if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore")
    print(export(sys.argv[1], sys.argv[2]))
