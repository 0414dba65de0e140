#!/usr/bin/python3
"""Evaluates each function of a printed graph module on integer-valued
arguments and prints its results, for comparing a program before and after
a rewrite. Float arguments are filled from a generator seeded by their
position and shape, so two programs with the same signature see the same
inputs; integer values keep float64 arithmetic exact, so equal programs
print equal text. Integer arguments (indices) are zero. Only the ops the
projection tests use are supported: constant, transpose, reshape, matmul,
add, sub, mul, div, relu, slice, split, gather.

    eval_views.py < module.mlir
"""
import ast
import re
import sys

import numpy as np

FUNC = re.compile(r"func\.func @(\w+)\((.*)\) ->")
ARG = re.compile(r"(%\w+): tensor<([0-9x]*)x?(f32|i32|i64)>")
OP = re.compile(r"^\s*(%[\w, %:]+) = graph\.(\w+) ([^{:]*?)\s*(\{.*\})?\s*:")
CONST = re.compile(
    r"^\s*(%\w+) = graph\.constant dense<([^>]*)> : tensor<([0-9x]*)x?\w+>")
RET = re.compile(r"^\s*return (.*) :")


def shape_of(text):
    return tuple(int(d) for d in text.split("x") if d)


def ints(attrs, name):
    m = re.search(name + r" = array<i64(?::([-0-9, ]*))?>", attrs)
    return [int(v) for v in m.group(1).split(",")] if m and m.group(1) else []


def evaluate(op, args, attrs, results, env):
    if op == "transpose":
        return [np.transpose(args[0], ints(attrs, "perm"))]
    if op == "reshape":
        return [np.reshape(args[0], shape_of(results[0]))]
    if op == "gather":
        axis = int(re.search(r"axis = (\d+)", attrs).group(1))
        return [np.take(args[0], args[1].astype(np.int64), axis=axis)]
    if op == "relu":
        return [np.maximum(args[0], 0)]
    if op == "matmul":
        return [np.matmul(args[0], args[1])]
    if op in ("add", "sub", "mul", "div"):
        f = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
             "div": np.divide}[op]
        return [f(args[0], args[1])]
    if op == "slice":
        window = tuple(slice(s, l, t) for s, l, t in zip(
            ints(attrs, "starts"), ints(attrs, "limits"), ints(attrs, "steps")))
        return [args[0][window]]
    if op == "split":
        axis = int(re.search(r"axis = (-?\d+)", attrs).group(1))
        sizes = [shape_of(t)[axis] for t in results]
        return np.split(args[0], np.cumsum(sizes)[:-1], axis=axis)
    sys.exit("unsupported op graph." + op)


def main():
    env = {}
    for line in sys.stdin:
        func = FUNC.search(line)
        if func:
            print("func", func.group(1))
            env = {}
            for i, (name, dims, kind) in enumerate(ARG.findall(func.group(2))):
                shape = shape_of(dims)
                if kind != "f32":
                    env[name] = np.zeros(shape, dtype=np.int64)
                    continue
                rng = np.random.default_rng(1000 * i + len(shape))
                env[name] = rng.integers(-3, 4, size=shape).astype(np.float64)
            continue
        const = CONST.match(line)
        if const:
            # A splat (`dense<2>`) or a nested list (`dense<[0, 1]>`).
            value = np.array(ast.literal_eval(const.group(2)), dtype=np.float64)
            env[const.group(1)] = np.broadcast_to(
                value, shape_of(const.group(3))).copy()
            continue
        op = OP.match(line)
        if op:
            names = [n.strip() for n in op.group(1).split(",")]
            if len(names) == 1 and ":" in names[0]:
                # `%3:2 = ...` defines %3#0 and %3#1.
                base, count = names[0].split(":")
                names = ["%s#%d" % (base, i) for i in range(int(count))]
            args = [env[a.strip()] for a in op.group(3).split(",") if a.strip()]
            types = re.findall(r"tensor<([0-9x]*)x?\w+>", line.split("->")[-1])
            values = evaluate(op.group(2), args, op.group(4) or "", types, env)
            env.update(zip(names, values))
            continue
        ret = RET.match(line)
        if ret:
            for name in ret.group(1).split(","):
                value = env[name.strip()]
                print(value.shape, " ".join("%g" % v for v in value.flat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
