"""A PyTorch reference of the zoo's bert-moe (docs/Zoo.md), rebuilt from the
ONNX file's initializers and the graph's constants, for emit_e2e.py.

The forward follows the zoo graph op for op: word + position embeddings,
LayerNorm; post-LN layers (attention, residual, LayerNorm, FFN or MoE,
residual, LayerNorm); an LM head and the mean cross-entropy over every
token. Odd layers replace the FFN with GShard top-2 MoE: the gating is
written here in plain torch from the specification in docs/Zoo.md, not
taken from weft_runtime.

The attention scale and the LayerNorm epsilon are read from the file (the
float32 values the plan computes with). GELU is torch's exact erf form, not
the graph's Div/Erf/Add/Mul chain with float32 sqrt(2): weftc fuses that
chain into graph.gelu, which the emitted program computes exactly, so
float64 training here and in the programs agrees to rounding.
"""
import math

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import numpy_helper


def _constants(graph):
    """Constant values by the name of the Constant's output."""
    out = {}
    for node in graph.node:
        if node.op_type == "Constant":
            for a in node.attribute:
                if a.name == "value":
                    out[node.output[0]] = numpy_helper.to_array(a.t)
    return out


def top2_gating(x, gate_weight, capacity):
    """GShard top-2 gating with a per-group capacity (docs/Zoo.md).

    x [G, S, H], gate_weight [H, E]. Per token: p = softmax(x W) over the
    experts; the first choice is the largest p (the lowest index among
    equals), the second the largest of the others; their gates are
    p1/(p1+p2) and p2/(p1+p2). Within a group, tokens take the next free
    slot of their expert in token order, every first choice before any
    second choice; an assignment finding its expert's C slots full is
    dropped. Returns dispatch, combine [G, S, E, C] and the smallest gap
    between probabilities that decide the routing (first vs second, second
    vs third), a measure of how far the routing is from a tie."""
    probs = torch.softmax(torch.matmul(x, gate_weight), dim=2)
    g, s, e = probs.shape
    p = probs.detach()
    order = torch.argsort(-p, dim=2, stable=True)
    first, second = order[..., 0], order[..., 1]
    sorted_p = torch.gather(p, 2, order)
    gap = (sorted_p[..., 0] - sorted_p[..., 1]).min()
    if e > 2:
        gap = torch.minimum(gap, (sorted_p[..., 1] - sorted_p[..., 2]).min())
    p1 = probs.gather(2, first.unsqueeze(2)).squeeze(2)
    p2 = probs.gather(2, second.unsqueeze(2)).squeeze(2)
    gates = (p1 / (p1 + p2), p2 / (p1 + p2))
    # The slots, by a plain loop over tokens: routing is not differentiable.
    slot = torch.full((2, g, s), -1, dtype=torch.int64)
    for gi in range(g):
        used = [0] * e
        for k, choice in enumerate((first, second)):
            for si in range(s):
                ex = int(choice[gi, si])
                if used[ex] < capacity:
                    slot[k, gi, si] = used[ex]
                    used[ex] += 1
    dispatch = torch.zeros(g, s, e, capacity, dtype=x.dtype)
    rows = []
    for k, choice in enumerate((first, second)):
        for gi in range(g):
            for si in range(s):
                if slot[k, gi, si] >= 0:
                    index = (gi, si, int(choice[gi, si]), int(slot[k, gi, si]))
                    dispatch[index] = 1.0
                    rows.append((index, k))
    # combine holds the gate at the dispatched positions; built by index_put
    # so the gradient reaches the gates.
    combine = torch.zeros(g * s * e * capacity, dtype=x.dtype)
    if rows:
        flat = torch.tensor([((a * s + b) * e + c) * capacity + d for (a, b, c, d), _ in rows])
        values = torch.stack([gates[k][a, b] for (a, b, _, _), k in rows])
        combine = combine.index_put((flat,), values)
    return dispatch, combine.reshape(g, s, e, capacity), gap


class BertMoe(nn.Module):
    """The zoo bert-moe's forward, parameters named as the ONNX initializers
    (dots become '__' in the module, `names` maps them back)."""

    def __init__(self, path):
        super().__init__()
        model = onnx.load(path)
        graph = model.graph
        self.params = nn.ParameterDict()
        self.names = []
        for t in graph.initializer:
            self.params[t.name.replace(".", "__")] = nn.Parameter(
                torch.from_numpy(numpy_helper.to_array(t).copy()))
            self.names.append(t.name)
        consts = _constants(graph)
        self.layers = 0
        self.moe_layers = set()
        for t in graph.initializer:
            if t.name.startswith("encoder.layer."):
                index = int(t.name.split(".")[2])
                self.layers = max(self.layers, index + 1)
                if ".moe." in t.name:
                    self.moe_layers.add(index)
        self.capacity = None
        self.scale = None
        self.epsilon = None
        for node in graph.node:
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            if node.op_type == "Top2Gating":
                self.capacity = int(attrs["capacity"])
            elif node.op_type == "LayerNormalization":
                self.epsilon = float(np.float32(attrs["epsilon"]))
            elif (node.op_type == "Div" and node.input[1] in consts
                  and "attention" in node.output[0]):
                self.scale = float(consts[node.input[1]])
        # Heads and head size from the query's Reshape to [0, 0, heads, d].
        shape = next(consts[n.input[1]] for n in graph.node
                     if n.op_type == "Reshape" and "attention.query" in n.input[0])
        self.heads, self.head_dim = int(shape[2]), int(shape[3])
        assert None not in (self.capacity, self.scale, self.epsilon)
        self.min_gap = math.inf

    def p(self, name):
        return self.params[name.replace(".", "__")]

    def named_onnx_parameters(self):
        return [(n, self.p(n)) for n in self.names]

    def layer_norm(self, x, prefix):
        return F.layer_norm(x, x.shape[-1:], self.p(prefix + ".weight"),
                            self.p(prefix + ".bias"), self.epsilon)

    def gelu(self, x):
        return F.gelu(x)  # 0.5 x (1 + erf(x / sqrt(2)))

    def linear(self, x, prefix):
        return torch.matmul(x, self.p(prefix + ".weight")) + self.p(prefix + ".bias")

    def attention(self, x, prefix):
        b, s, h = x.shape

        def heads(t):
            return t.reshape(b, s, self.heads, self.head_dim)
        q = heads(self.linear(x, prefix + ".query")).permute(0, 2, 1, 3)
        k = heads(self.linear(x, prefix + ".key")).permute(0, 2, 3, 1)
        v = heads(self.linear(x, prefix + ".value")).permute(0, 2, 1, 3)
        a = torch.softmax(torch.matmul(q, k) / self.scale, dim=-1)
        o = torch.matmul(a, v).permute(0, 2, 1, 3).reshape(b, s, h)
        return self.linear(o, prefix + ".output")

    def moe(self, x, prefix):
        g, s, h = x.shape
        dispatch, combine, gap = top2_gating(x, self.p(prefix + ".gate.weight"), self.capacity)
        self.min_gap = min(self.min_gap, float(gap))
        e, c = dispatch.shape[2], dispatch.shape[3]
        # GSEC,GSH->EGCH
        r = torch.einsum("gsec,gsh->egch", dispatch, x)
        w1 = self.p(prefix + ".experts.intermediate.weight")   # [E, H, F]
        b1 = self.p(prefix + ".experts.intermediate.bias")     # [E, F]
        w2 = self.p(prefix + ".experts.output.weight")         # [E, F, H]
        b2 = self.p(prefix + ".experts.output.bias")           # [E, H]
        hid = self.gelu(torch.matmul(r, w1.unsqueeze(1)) + b1[:, None, None, :])
        o = torch.matmul(hid, w2.unsqueeze(1)) + b2[:, None, None, :]
        # GSEC,EGCH->GSH
        return torch.einsum("gsec,egch->gsh", combine, o)

    def forward(self, input_ids, labels):
        x = self.p("embeddings.word_embeddings")[input_ids] + \
            self.p("embeddings.position_embeddings")
        x = self.layer_norm(x, "embeddings.LayerNorm")
        for i in range(self.layers):
            prefix = "encoder.layer.%d" % i
            x = self.layer_norm(x + self.attention(x, prefix + ".attention"),
                                prefix + ".attention_norm")
            if i in self.moe_layers:
                y = self.moe(x, prefix + ".moe")
            else:
                y = self.linear(self.gelu(self.linear(x, prefix + ".ffn.intermediate")),
                                prefix + ".ffn.output")
            x = self.layer_norm(x + y, prefix + ".output_norm")
        logits = self.linear(x, "lm_head")
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
