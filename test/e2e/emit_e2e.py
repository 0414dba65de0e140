#!/usr/bin/env python3
"""End-to-end tests of emitted programs: plans trained on gloo processes
against single-process PyTorch training of the same module.

    emit_e2e.py prepare MODEL -o DIR [--steps N] [--lr LR] [--dynamic-batch]
        builds MODEL (seeded), exports it in training mode with its weights
        to DIR/model.onnx (TorchScript exporter, opset 17, no constant
        folding; with --dynamic-batch, dim 0 of each input symbolic), writes one seeded global batch per step as
        DIR/data/<step>/<input>.npy, and trains a float64 copy of the module
        with torch.optim.Adam for N steps on those batches:
        DIR/reference/losses.csv (step,loss) and
        DIR/reference/params/<name>.npy after the last step.
    emit_e2e.py prepare moe --onnx FILE -o DIR [--batch B] [--steps N] [--lr LR]
        the same for the zoo's bert-moe (`weft-zoo bert-moe --with-weights`):
        FILE is copied to DIR/model.onnx, the batches are seeded token ids
        and labels, and the reference is test/e2e/moe_reference.py's
        rebuild of the graph in torch; parameters are saved by initializer
        name. Fails (exit 1) when some step's routing is within 1e-6 of a
        tie between two experts' probabilities.
    emit_e2e.py prepare pipe-mlp -o DIR --batch B --micro-batches M [--steps N]
        the model of the hand-written pipelined plans
        (test/lit/Exec/Inputs/pipeline-mlp*-plan.mlir: `weft-zoo mlp
        --layers 3 --hidden 64`, x @ W + b with ReLU between layers, 10
        classes): batches of B samples as arg0/arg1 (the names of a program
        emitted without --graph), the initial parameters as
        DIR/weights/<name>.npy (pass `-- --weights DIR/weights` to check),
        and the reference trained on the M micro-batches of each batch,
        gradients summed and divided by M.
    emit_e2e.py check DIR PLANS... [--steps N] [--lr LR] [--rtol R]
                      [--atol A] [-- PROGRAM FLAGS]
        runs every plan folder's torch/program.py on as many local gloo
        processes as its mesh has devices (float64, Adam, the same data and
        steps), then compares the loss of every step and every parameter
        after the last step with the reference: |a - b| <= A + R*|b|
        elementwise. Prints one PASS or FAIL line per plan and
        'N plans agree, M differ'; exit 1 if any differs.

Float64 on both sides keeps the comparison far from rounding: a ReLU kink
or a max tie cannot flip on a last-bit difference at this tolerance.
"""
import argparse
import csv
import math
import os
import re
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# Last: test/emit's ops.py, params.py... must not shadow anything.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "emit"))
import torch_reference  # noqa: E402
from ports import free_port  # noqa: E402

# The smallest gap between routing probabilities `prepare moe` accepts:
# dispatch is piecewise constant, and float64 runs differ by far less.
MOE_MIN_GAP = 1e-6


class Encoder(nn.Module):
    """A 2-layer BERT-like encoder: token and position embeddings, two
    post-norm TransformerEncoderLayers (dropout 0), an LM head and
    cross-entropy over every position."""

    def __init__(self, vocab=32, d=16, heads=2, ffn=32, seq=6, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(seq, d) * 0.02)
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d, heads, ffn, dropout=0.0, batch_first=True)
            for _ in range(layers))
        self.head = nn.Linear(d, vocab)

    def forward(self, ids, y):
        h = self.embed(ids) + self.pos
        for layer in self.layers:
            h = layer(h)
        logits = self.head(h)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


class Vit(nn.Module):
    """A small ViT: 4x4 patches of an 8x8 image by a strided convolution, a
    class token and position embeddings, one TransformerEncoderLayer, a
    LayerNorm and a linear head on the class token."""

    def __init__(self, d=16, classes=5):
        super().__init__()
        self.patch = nn.Conv2d(3, d, 4, stride=4)
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, 5, d) * 0.02)
        self.layer = nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0, batch_first=True)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, x, y):
        h = self.patch(x).flatten(2).transpose(1, 2)
        h = torch.cat([self.cls.expand(x.shape[0], -1, -1), h], 1) + self.pos
        h = self.norm(self.layer(h))
        return F.cross_entropy(self.head(h[:, 0]), y)


class ResCnn(nn.Module):
    """A small CNN with residual adds and BatchNorm in training mode."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.bn0 = nn.BatchNorm2d(8)
        self.conv1 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 5)

    def forward(self, x, y):
        h = F.relu(self.bn0(self.stem(x)))
        r = F.relu(self.bn1(self.conv1(h)))
        h = F.relu(h + self.bn2(self.conv2(r)))
        h = F.adaptive_avg_pool2d(F.max_pool2d(h, 2), 1).flatten(1)
        return F.cross_entropy(self.fc(h), y)


class MatLinear(nn.Module):
    """x @ weight + bias with weight (in, out): the zoo's layer."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_in, n_out) * 0.1)
        self.bias = nn.Parameter(torch.randn(n_out) * 0.1)

    def forward(self, x):
        return x @ self.weight + self.bias


class PipeMlp(nn.Module):
    """`weft-zoo mlp --layers 3 --hidden 64`: three MatLinear layers with
    ReLU between them and cross-entropy over 10 classes."""

    def __init__(self, hidden=64, classes=10, layers=3):
        super().__init__()
        self.layers = nn.ModuleList(
            MatLinear(hidden, classes if i == layers - 1 else hidden) for i in range(layers))

    def forward(self, x, y):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i + 1 < len(self.layers):
                x = F.relu(x)
        return F.cross_entropy(x, y)


def make(name, batch=4):
    """The module and a function drawing the global batch of step s."""
    if name == "pipe-mlp":
        model = PipeMlp()

        def data(g):
            return {"arg0": torch.randn(batch, 64, generator=g),
                    "arg1": torch.randint(0, 10, (batch,), generator=g)}
    elif name == "mlp":
        model = torch_reference.Mlp()

        def data(g):
            return {"x": torch.randn(8, 16, generator=g),
                    "y": torch.randint(0, 5, (8,), generator=g)}
    elif name == "encoder":
        model = Encoder()

        def data(g):
            return {"ids": torch.randint(0, 32, (4, 6), generator=g),
                    "y": torch.randint(0, 32, (4, 6), generator=g)}
    elif name == "vit":
        model = Vit()

        def data(g):
            return {"x": torch.randn(6, 3, 8, 8, generator=g),
                    "y": torch.randint(0, 5, (6,), generator=g)}
    else:
        model = ResCnn()

        def data(g):
            return {"x": torch.randn(8, 3, 8, 8, generator=g),
                    "y": torch.randint(0, 5, (8,), generator=g)}
    return model, data


def train_reference(model, batches, args, named):
    """Float64 Adam on the batches: reference/losses.csv and params."""
    model = model.double()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    ref = os.path.join(args.output, "reference")
    os.makedirs(os.path.join(ref, "params"), exist_ok=True)
    with open(os.path.join(ref, "losses.csv"), "w") as f:
        f.write("step,loss\n")
        m = getattr(args, "micro_batches", 1)
        for s, b in enumerate(batches):
            opt.zero_grad()
            values = [v.double() if v.is_floating_point() else v for v in b.values()]
            # Micro-batches: each one's loss backward / m, the mean reported.
            total = 0.0
            for chunk in zip(*[v.chunk(m) for v in values]):
                loss = model(*chunk)
                (loss / m).backward()
                total += loss.item() / m
            opt.step()
            f.write("%d,%.17g\n" % (s, total))
    for name, p in named(model):
        np.save(os.path.join(ref, "params", name + ".npy"), p.detach().numpy())


def write_batches(batches, output):
    for s, b in enumerate(batches):
        folder = os.path.join(output, "data", str(s))
        os.makedirs(folder, exist_ok=True)
        for name, value in b.items():
            np.save(os.path.join(folder, name + ".npy"), np.ascontiguousarray(value.numpy()))


def prepare_moe(args):
    import shutil
    import moe_reference
    if not args.onnx:
        print("emit_e2e.py: prepare moe needs --onnx FILE", file=sys.stderr)
        return 1
    os.makedirs(args.output, exist_ok=True)
    shutil.copyfile(args.onnx, os.path.join(args.output, "model.onnx"))
    model = moe_reference.BertMoe(args.onnx)
    vocab, _ = model.p("embeddings.word_embeddings").shape
    seq = model.p("embeddings.position_embeddings").shape[0]
    batches = []
    for s in range(args.steps):
        g = torch.Generator().manual_seed(100 + s)
        batches.append({"input_ids": torch.randint(0, vocab, (args.batch, seq), generator=g),
                        "labels": torch.randint(0, vocab, (args.batch, seq), generator=g)})
    write_batches(batches, args.output)
    train_reference(model, batches, args, lambda m: m.named_onnx_parameters())
    if model.min_gap < MOE_MIN_GAP:
        print("emit_e2e.py: a routing decision is %.1e from a tie (below %.0e): choose "
              "other data or weights" % (model.min_gap, MOE_MIN_GAP), file=sys.stderr)
        return 1
    return 0


def prepare(args):
    if args.model == "moe":
        return prepare_moe(args)
    torch.manual_seed(0)
    model, data = make(args.model, args.batch)
    os.makedirs(args.output, exist_ok=True)
    if args.model == "pipe-mlp":
        # The plan is hand-written: the program reads these initial values.
        batches = [data(torch.Generator().manual_seed(100 + s)) for s in range(args.steps)]
        write_batches(batches, args.output)
        os.makedirs(os.path.join(args.output, "weights"), exist_ok=True)
        for name, p in model.named_parameters():
            np.save(os.path.join(args.output, "weights", name + ".npy"),
                    p.detach().double().numpy())
        train_reference(model, batches, args, lambda m: m.named_parameters())
        return 0
    batches = [data(torch.Generator().manual_seed(100 + s)) for s in range(args.steps)]
    names = list(batches[0])
    model.train(True)
    torch.onnx.export(model, tuple(batches[0].values()), os.path.join(args.output, "model.onnx"),
                      input_names=names, output_names=["loss"], opset_version=17, dynamo=False,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      dynamic_axes={n: {0: "batch"} for n in names} if args.dynamic_batch
                      else None)
    write_batches(batches, args.output)
    # The reference: the same module in float64, Adam, the same batches.
    train_reference(model, batches, args, lambda m: m.named_parameters())
    return 0


def devices_of(program):
    """The plan's device count, from the program's MESH line: nodes times
    the local axes (`MESH = Mesh(2, (2,), ...)`), read from the text when it
    has that form (no process importing torch), else by running it."""
    with open(program) as f:
        found = re.search(r"^MESH = Mesh\((\d+), \(([\d, ]*)\)", f.read(), re.M)
    if found:
        return int(found.group(1)) * math.prod(
            int(d) for d in found.group(2).split(",") if d.strip())
    out = subprocess.run([sys.executable, "-c",
                          "import runpy,sys; sys.argv=['p']; "
                          "m=runpy.run_path(%r); print(m['MESH'].num_devices)" % program],
                         capture_output=True, text=True, check=True)
    return int(out.stdout.strip().splitlines()[-1])


def run_plan(program, n, flags, timeout=300):
    """Runs `program` on n local gloo ranks; (exit code, stderr lines)."""
    port = free_port()
    procs = []
    for r in range(n):
        env = dict(os.environ, WORLD_SIZE=str(n), RANK=str(r), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), WEFT_RUNTIME_TIMEOUT_S="120")
        procs.append(subprocess.Popen([sys.executable, program] + flags, env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    code, errors = 0, []
    for p in procs:
        try:
            _, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            return 124, ["timed out"]
        errors += err.strip().splitlines()
        code = code or p.returncode
    return code, errors


def read_losses(path):
    with open(path) as f:
        return [float(row["loss"]) for row in csv.DictReader(f)]


def compare(ref, run, rtol, atol):
    """(problems, the largest share of the tolerance a difference uses)."""
    problems, worst = [], 0.0

    def close(a, b, what):
        nonlocal worst
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        if a.shape != b.shape:
            problems.append("%s: shape %s, reference %s" % (what, a.shape, b.shape))
            return
        diff = np.abs(a - b)
        worst = max(worst, float((diff / (atol + rtol * np.abs(b))).max(initial=0.0)))
        bad = diff > atol + rtol * np.abs(b)
        if bad.any():
            i = np.unravel_index(np.argmax(diff - rtol * np.abs(b)), diff.shape)
            problems.append("%s: %d of %d differ, e.g. at %s %.9g vs %.9g"
                            % (what, bad.sum(), bad.size, tuple(int(k) for k in i),
                               a[i], b[i]))
    want = read_losses(os.path.join(ref, "losses.csv"))
    got = read_losses(os.path.join(run, "loss.csv"))
    if len(got) != len(want):
        problems.append("%d losses, reference %d" % (len(got), len(want)))
    else:
        close(got, want, "losses")
    for name in sorted(os.listdir(os.path.join(ref, "params"))):
        path = os.path.join(run, "params", name)
        if not os.path.exists(path):
            problems.append("parameter %s not saved" % name[:-4])
            continue
        close(np.load(path), np.load(os.path.join(ref, "params", name)), name[:-4])
    return problems, worst


def check(args, extra):
    ref = os.path.join(args.dir, "reference")
    agree = differ = 0
    for plan in args.plans:
        program = os.path.join(plan, "torch", "program.py")
        run = os.path.join(plan, "run")
        label = os.path.relpath(plan, args.dir)
        if not os.path.exists(program):
            print("FAIL %s: no %s" % (label, program))
            differ += 1
            continue
        n = devices_of(program)
        flags = ["--steps", str(args.steps), "--data", os.path.join(args.dir, "data"),
                 "--dtype", "float64", "--lr", str(args.lr), "--log",
                 os.path.join(run, "loss.csv"), "--save", os.path.join(run, "params")] + extra
        os.makedirs(run, exist_ok=True)
        code, errors = run_plan(program, n, flags)
        if code:
            print("FAIL %s (%d ranks): exit %d: %s" % (label, n, code,
                                                       errors[0] if errors else ""))
            differ += 1
            continue
        problems, worst = compare(ref, run, args.rtol, args.atol)
        if problems:
            print("FAIL %s (%d ranks): %s" % (label, n, "; ".join(problems[:3])))
            differ += 1
        else:
            print("PASS %s (%d ranks): %d losses and every parameter agree (the largest "
                  "difference is %.1e of the tolerance)" % (label, n, args.steps, worst))
            agree += 1
    print("%d plans agree, %d differ" % (agree, differ))
    return 1 if differ else 0


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("model", choices=["mlp", "encoder", "vit", "cnn", "moe", "pipe-mlp"])
    p.add_argument("--onnx", help="moe: the weft-zoo bert-moe file (--with-weights)")
    p.add_argument("--batch", type=int, default=4,
                   help="moe: sequences per batch; pipe-mlp: samples per batch")
    p.add_argument("--micro-batches", type=int, default=1,
                   help="the reference's micro-batches per step (gradients summed / M)")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--dynamic-batch", action="store_true",
                   help="export dim 0 of every input as symbolic (for --micro-batches)")
    c = sub.add_parser("check")
    c.add_argument("dir")
    c.add_argument("plans", nargs="+")
    c.add_argument("--steps", type=int, default=3)
    c.add_argument("--lr", type=float, default=0.01)
    c.add_argument("--rtol", type=float, default=1e-4)
    c.add_argument("--atol", type=float, default=1e-6)
    args = ap.parse_args(argv)
    return prepare(args) if args.command == "prepare" else check(args, extra)


if __name__ == "__main__":
    sys.exit(main())
