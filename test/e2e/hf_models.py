#!/usr/bin/env python3
"""Hugging Face architectures at tiny sizes, for the importer's end-to-end
tests.

    hf_models.py export {bert,gpt2,vit,t5,llama,mixtral} -o DIR
                 [--exporter {dynamo,torchscript}]
        builds the model from a tiny configuration with seeded random
        weights (nothing is downloaded), wraps it so the graph ends in the
        model's own scalar cross-entropy loss (labels are an input), exports
        it in training mode to DIR/model.onnx with its weights (the dynamo
        exporter writes those over 1 KB to DIR/model.onnx.data), saves the
        data inputs as DIR/<input>.npy, writes DIR/reference.txt (loss and
        the L2 norm of every parameter's gradient in float64, as
        torch_reference.py does; compare with `torch_reference.py compare`)
        and prints the parameter count PyTorch reports (tied weights once)
        and the float buffers the export keeps as initializers (pass them
        to --frozen).

Dropout is 0 in every configuration: the reference must be deterministic,
and PyTorch's dropout masks are not Weft's. Attention is the eager
implementation (explicit matmuls and softmax).
"""
import argparse
import os
import sys
import warnings

import numpy as np
import onnx
import torch
import torch.nn as nn

from torch_reference import write_reference

BATCH = 4
SEQ = 8
VOCAB = 100


class WithLoss(nn.Module):
    """Calls a Hugging Face model with keyword inputs (labels among them)
    and returns its loss, the graph's only output."""

    def __init__(self, model, names):
        super().__init__()
        self.model = model
        self.names = names

    def forward(self, *inputs):
        return self.model(**dict(zip(self.names, inputs))).loss


def tokens(g, vocab=VOCAB):
    return torch.randint(0, vocab, (BATCH, SEQ), generator=g)


def bert(g):
    from transformers import BertConfig, BertForMaskedLM
    config = BertConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=64,
        max_position_embeddings=SEQ, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0)
    return BertForMaskedLM(config), {"input_ids": tokens(g),
                                     "labels": tokens(g)}


def gpt2(g):
    from transformers import GPT2Config, GPT2LMHeadModel
    config = GPT2Config(
        vocab_size=VOCAB, n_positions=SEQ, n_embd=32, n_layer=2, n_head=4,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    return GPT2LMHeadModel(config), {"input_ids": tokens(g),
                                     "labels": tokens(g)}


def vit(g):
    from transformers import ViTConfig, ViTForImageClassification
    config = ViTConfig(
        image_size=16, patch_size=4, num_channels=3, hidden_size=32,
        num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        num_labels=10)
    return ViTForImageClassification(config), {
        "pixel_values": torch.randn(BATCH, 3, 16, 16, generator=g),
        "labels": torch.randint(0, 10, (BATCH,), generator=g)}


def t5(g):
    from transformers import T5Config, T5ForConditionalGeneration
    config = T5Config(
        vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2,
        num_decoder_layers=2, num_heads=4, relative_attention_num_buckets=8,
        relative_attention_max_distance=16, dropout_rate=0.0,
        decoder_start_token_id=0, pad_token_id=0)
    # The model shifts the labels right into the decoder's inputs itself (a
    # ScatterND of the labels in the export).
    return T5ForConditionalGeneration(config), {"input_ids": tokens(g),
                                                "labels": tokens(g)}


def llama(g):
    from transformers import LlamaConfig, LlamaForCausalLM
    config = LlamaConfig(
        vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=SEQ, attention_dropout=0.0)
    return LlamaForCausalLM(config), {"input_ids": tokens(g),
                                      "labels": tokens(g)}


def mixtral(g):
    from transformers import MixtralConfig, MixtralForCausalLM
    config = MixtralConfig(
        vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=SEQ, num_local_experts=4,
        num_experts_per_tok=2, attention_dropout=0.0)
    # The default experts loop picks each expert's tokens with nonzero
    # (data-dependent shapes); batched_mm gathers every token's experts.
    config._experts_implementation = "batched_mm"
    return MixtralForCausalLM(config), {"input_ids": tokens(g),
                                        "labels": tokens(g)}


MODELS = {"bert": bert, "gpt2": gpt2, "vit": vit, "t5": t5, "llama": llama,
          "mixtral": mixtral}


def build(name):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    model, inputs = MODELS[name](g)
    model.config._attn_implementation = "eager"
    return WithLoss(model, list(inputs)), inputs


def parameter_count(model):
    params = list(model.parameters())  # tied weights once
    return sum(p.numel() for p in params), len(params)


def export(args):
    model, inputs = build(args.model)
    model.train(True)
    os.makedirs(args.output, exist_ok=True)
    path = os.path.join(args.output, "model.onnx")
    names = list(inputs)
    values = tuple(inputs.values())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if args.exporter == "dynamo":
            # optimize=False keeps every parameter a named initializer
            # (torch_reference.py says why).
            torch.onnx.export(model, values, path, input_names=names,
                              output_names=["loss"], dynamo=True,
                              optimize=False, verbose=False)
        else:
            torch.onnx.export(model, values, path, input_names=names,
                              output_names=["loss"], opset_version=17,
                              dynamo=False,
                              training=torch.onnx.TrainingMode.TRAINING,
                              do_constant_folding=False)
    for name, value in inputs.items():
        np.save(os.path.join(args.output, name + ".npy"),
                np.ascontiguousarray(value.numpy()))
    elements, tensors = parameter_count(model)
    # Float buffers the export keeps as initializers, which the importer
    # takes for parameters unless they are given to --frozen.
    exported = {t.name for t in onnx.load(path, load_external_data=False)
                .graph.initializer}
    buffers = [name for name, b in model.named_buffers()
               if b.is_floating_point() and name in exported]
    write_reference(model, inputs, args.output)
    print("pytorch parameters: %d elements in %d tensors" % (elements, tensors))
    print("pytorch float buffers: %s" % (",".join(buffers) or "none"))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    e = sub.add_parser("export")
    e.add_argument("model", choices=list(MODELS))
    e.add_argument("--exporter", choices=["dynamo", "torchscript"],
                   default="dynamo")
    e.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    return export(args)


if __name__ == "__main__":
    sys.exit(main())
