#!/usr/bin/env python3
"""The ONNX backend node test suite against Weft, with onnxruntime as a
second reference.

    scripts/onnx-suite.py [--build DIR] [--jobs 2] [--filter REGEX]
                          [--write-docs] [--keep DIR] [--list CLASS]

The node test cases come from the pinned onnx package's own generator
(onnx.backend.test.case.node.collect_testcases): one model per case with
NumPy inputs and the expected outputs. For each case the model and its
inputs are written to a temporary folder, imported with
`weft-translate --import-onnx --forward` and, when that succeeds, run with
`weft-run --forward --write-outputs`; the outputs are compared with the
suite's expected outputs and with onnxruntime's (CPUExecutionProvider) on
the same model and inputs. docs/Import.md ("The ONNX node test suite")
describes the classes and the checks.

Exit codes: 0 every check passes; 1 a check fails (a wrong answer not in
KNOWN_WRONG, a disagreement with onnxruntime not in KNOWN_ORT, a tool that
crashed or hung, the in-scope import rate below IMPORT_FLOOR); 2 bad usage;
77 skipped: no Python virtual environment in the build folder
(scripts/install-deps.sh --python makes it).
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SKIP = 77

# ---------------------------------------------------------------------------
# Tolerances: |weft - reference| <= ATOL + RTOL * |reference| elementwise,
# NaN where the reference is NaN, infinities equal. Integer and bool outputs
# must be equal.
TOLERANCE = {
    "float32": (1e-4, 1e-5),
    "float64": (1e-4, 1e-5),
    # One f16 ulp is 2^-10 relative, one bf16 ulp 2^-7: Weft rounds after
    # every op, the suite's reference once.
    "float16": (1e-2, 1e-3),
    "bfloat16": (2e-2, 1e-2),
}

# Each tool call: wall-clock limit (a hang, not a speed check: a case takes
# tens of milliseconds) and address-space limit.
TIMEOUT_S = 20
# Marks an error message printed on several lines.
MULTILINE = "[several lines] "
MEMORY_GB = 4

# The in-scope import rate (imported / in scope) measured at the commit
# that set it, rounded down: a change that imports fewer cases fails.
IMPORT_FLOOR = 0.89  # 641 of 705 (90.9%) at ecabf41, less a point

# ---------------------------------------------------------------------------
# Scope: a case is in scope when its op occurs in training graphs (not in
# OUT_OF_SCOPE below) and every input and output is a float tensor
# (float32, float16, bfloat16), except integer index inputs of INDEX_OPS.
OUT_OF_SCOPE = {
    # strings
    "RegexFullMatch": "strings", "StringConcat": "strings",
    "StringNormalizer": "strings", "StringSplit": "strings",
    "TfIdfVectorizer": "strings",
    # sequences, optionals, maps
    "SequenceInsert": "sequences", "SequenceMap": "sequences",
    "SplitToSequence": "sequences", "OptionalGetElement": "optionals",
    "OptionalHasElement": "optionals",
    # quantization and integer arithmetic
    "DequantizeLinear": "quantization", "QuantizeLinear": "quantization",
    "DynamicQuantizeLinear": "quantization", "QLinearConv": "quantization",
    "QLinearMatMul": "quantization", "ConvInteger": "quantization",
    "MatMulInteger": "quantization", "BitCast": "bit operations",
    "BitShift": "bit operations", "BitwiseAnd": "bit operations",
    "BitwiseNot": "bit operations", "BitwiseOr": "bit operations",
    "BitwiseXor": "bit operations",
    # control flow
    "If": "control flow", "Loop": "control flow", "Scan": "control flow",
    # random generators
    "Bernoulli": "random", "RandomNormal": "random",
    "RandomNormalLike": "random", "RandomUniform": "random",
    "RandomUniformLike": "random", "Multinomial": "random",
    # images and signals
    "ImageDecoder": "image decoding", "DFT": "signal processing",
    "STFT": "signal processing", "BlackmanWindow": "signal processing",
    "HammingWindow": "signal processing", "HannWindow": "signal processing",
    "MelWeightMatrix": "signal processing",
    # detection post-processing, data-dependent output shapes
    "NonMaxSuppression": "detection", "RoiAlign": "detection",
    "NonZero": "data-dependent shape", "Unique": "data-dependent shape",
    "Compress": "data-dependent shape",
    # classical ML (ai.onnx.ml) and optimizer steps (ai.onnx.preview.training)
    "ArrayFeatureExtractor": "classical ML", "Binarizer": "classical ML",
    "LabelEncoder": "classical ML", "TreeEnsemble": "classical ML",
    "Adagrad": "optimizer step", "Adam": "optimizer step",
    "Momentum": "optimizer step",
    # shape queries (integer results)
    "Shape": "shape query", "Size": "shape query",
}
INDEX_OPS = {"Gather", "GatherElements", "GatherND", "Scatter",
             "ScatterElements", "ScatterND", "OneHot",
             "SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"}
FLOAT_TYPES = {"float32", "float16", "bfloat16"}
INDEX_TYPES = {"int64", "int32"}

# ---------------------------------------------------------------------------
# Known wrong answers (imported, run, outputs differ from the suite's), by
# case name, each with why. A wrong answer not listed fails the check.
BATCHNORM_STATS = (
    "BatchNormalization in training mode: outputs 1 and 2, the updated "
    "running mean and variance, are bound to the unchanged running "
    "statistics (lib/Import/LegalizeNN.cpp); a training step never returns "
    "them, a forward program does")
KNOWN_WRONG = {
    "test_batchnorm_epsilon_training_mode": BATCHNORM_STATS,
    "test_batchnorm_example_training_mode": BATCHNORM_STATS,
    # Not wrong: the case's expected outputs are written with four digits
    # (0.1511); Weft's 0.1510555 is onnxruntime's and ONNX's reference's.
    "test_averagepool_2d_ceil_last_window_starts_on_pad": (
        "the suite's expected outputs are rounded to four digits; Weft "
        "agrees with onnxruntime"),
    # Not wrong either: expected outputs written with four digits (-0.1406);
    # ONNX's reference, onnxruntime and Weft give -0.140625.
    "test_gridsample_bicubic": (
        "the suite's expected outputs are rounded to four digits; Weft "
        "agrees with onnxruntime and ONNX's reference"),
}

# Known disagreements between Weft's outputs and onnxruntime's, by case
# (onnxruntime agrees with the suite on these).
RESIZE_ALIGN_CORNERS = (
    "Resize with align_corners where the scale does not divide the extent: "
    "ONNX's reference (the suite's expected outputs) and Weft divide by "
    "extent * scale - 1 (2.4 - 1 for 4 * 0.6), onnxruntime by the integer "
    "extent - 1")
ATTENTION_CAUSAL_BIAS = (
    "Attention's qk_matmul_output in mode 2 (scores plus bias) with "
    "is_causal: ONNX's reference (the suite's expected outputs) and Weft "
    "give -inf where the causal mask hides a key, onnxruntime the lowest "
    "float (-3.4e38)")
KNOWN_ORT = {
    "test_batchnorm_epsilon_training_mode": BATCHNORM_STATS,
    "test_batchnorm_example_training_mode": BATCHNORM_STATS,
    "test_resize_downsample_scales_cubic_align_corners": RESIZE_ALIGN_CORNERS,
    "test_resize_downsample_scales_linear_align_corners": RESIZE_ALIGN_CORNERS,
    "test_attention_4d_with_past_and_present_qk_matmul_bias_3d_mask_causal": (
        ATTENTION_CAUSAL_BIAS),
    "test_attention_4d_with_past_and_present_qk_matmul_bias_4d_mask_causal": (
        ATTENTION_CAUSAL_BIAS),
}


def snapshot_tools(build, folder):
    """Copies weft-translate and weft-run to `folder`: a build that relinks
    them during the run does not change what runs. A copy is taken only when
    the file did not change while it was copied, and is checked to start."""
    import shutil
    import subprocess
    import time
    tools = {}
    os.makedirs(folder, exist_ok=True)
    for tool in ("weft-translate", "weft-run"):
        source = os.path.join(build, "bin", tool)
        copy = os.path.join(folder, tool)
        for _ in range(60):
            try:
                before = os.stat(source)
                shutil.copy2(source, copy)
                after = os.stat(source)
                same = (before.st_size, before.st_mtime_ns) == (
                    after.st_size, after.st_mtime_ns)
                if same and subprocess.run(
                        [copy, "--help"], stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL).returncode == 0:
                    tools[tool] = copy
                    break
            except OSError:
                pass
            time.sleep(1)
        else:
            sys.exit("onnx-suite: cannot take a working copy of %s" % source)
    return tools


def venv_python(build):
    return os.path.join(build, "venv", "bin", "python")


def reexec_in_venv(build):
    """Runs this script with the build folder's venv python, or exits 77."""
    python = venv_python(build)
    if os.path.realpath(sys.prefix) == os.path.realpath(
            os.path.join(build, "venv")):
        return
    if not os.access(python, os.X_OK):
        print("onnx-suite: skipped: no Python virtual environment at %s "
              "(scripts/install-deps.sh --python creates it)"
              % os.path.join(build, "venv"))
        sys.exit(SKIP)
    os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])


# ---------------------------------------------------------------------------
# Cases


def dtype_name(elem_type):
    from onnx import helper
    try:
        return helper.tensor_dtype_to_np_dtype(elem_type).name
    except Exception:  # string, float8, int4, ...
        from onnx import TensorProto
        return TensorProto.DataType.Name(elem_type).lower()


def value_kind(value_info):
    """'tensor:<dtype>' or the kind of a non-tensor type."""
    t = value_info.type
    kind = t.WhichOneof("value")
    if kind == "tensor_type":
        return "tensor:" + dtype_name(t.tensor_type.elem_type)
    return kind or "unknown"


def case_op(case, by_name):
    """The op a case tests: its node's, or its base case's if expanded."""
    base = re.sub(r"_expanded.*$", "", case.name)
    model = by_name[base].model if base in by_name else case.model
    return model.graph.node[0].op_type


def scope_of(case, op):
    """(in scope, why not) of a case."""
    if op in OUT_OF_SCOPE:
        return False, OUT_OF_SCOPE[op]
    for node in case.model.graph.node:
        if node.op_type in OUT_OF_SCOPE:
            return False, "uses " + node.op_type
    graph = case.model.graph
    inits = {i.name for i in graph.initializer}
    for vi in graph.input:
        if vi.name in inits:
            continue
        kind = value_kind(vi)
        if kind.startswith("tensor:") and kind[7:] in FLOAT_TYPES:
            continue
        if op in INDEX_OPS and kind[7:] in INDEX_TYPES:
            continue
        return False, "input %s" % kind.replace("tensor:", "")
    for vi in graph.output:
        kind = value_kind(vi)
        if not (kind.startswith("tensor:") and kind[7:] in FLOAT_TYPES):
            return False, "output %s" % kind.replace("tensor:", "")
    return True, ""


def to_array(value):
    """A data set entry as a NumPy array (some are TensorProtos)."""
    from onnx import TensorProto, numpy_helper
    if isinstance(value, TensorProto):
        return numpy_helper.to_array(value)
    return value


def collect(pattern):
    import warnings
    import onnx.backend.test.case.node as node_cases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = node_cases.collect_testcases(None)
    by_name = {c.name: c for c in cases}
    tasks = []
    for case in sorted(cases, key=lambda c: c.name):
        if pattern and not re.search(pattern, case.name):
            continue
        op = case_op(case, by_name)
        in_scope, why = scope_of(case, op)
        inits = {i.name for i in case.model.graph.initializer}
        inputs = [vi for vi in case.model.graph.input if vi.name not in inits]
        names = [vi.name for vi in inputs]
        symbolic = {vi.name for vi in inputs
                    if vi.type.HasField("tensor_type") and any(
                        not d.HasField("dim_value")
                        for d in vi.type.tensor_type.shape.dim)}
        data_in, data_out = (
            [to_array(a) for a in arrays] for arrays in case.data_sets[0])
        tasks.append({
            "name": case.name, "op": op, "in_scope": in_scope,
            "scope_note": why, "model": case.model.SerializeToString(),
            "input_names": names, "symbolic": symbolic,
            "inputs": list(data_in), "expected": list(data_out),
        })
    return tasks


# ---------------------------------------------------------------------------
# One case (runs in a worker process)


def limit_child():
    import resource
    cap = MEMORY_GB << 30
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_tool(argv):
    """(status, exit code, first stderr line); status ok/bad/crash."""
    import subprocess
    try:
        proc = subprocess.run(argv, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=TIMEOUT_S,
                              preexec_fn=limit_child)
    except subprocess.TimeoutExpired:
        return "crash", None, "timed out after %d s (a hang)" % TIMEOUT_S
    lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    if lines:
        lines[0] = re.sub(r"^[\w-]+: error: ", "", lines[0])
    # The error line; a message of several lines (a tool should print one)
    # is kept whole, joined, and marked.
    line = " / ".join(l for l in lines if l.strip())
    if len(lines) > 1:
        line = "%s%s" % (MULTILINE, line)
    code = proc.returncode
    if code == 0:
        return "ok", 0, line
    if code in (1, 2):
        return "bad", code, line
    what = "signal %d" % -code if code < 0 else "exit %d" % code
    return "crash", code, "%s: %s" % (what, line or "(no message)")


def as_npy(array):
    """The array as weft-run reads it (float32/64, int64, bool), or None."""
    import numpy as np
    a = np.asarray(array)
    if a.dtype in (np.bool_, np.float32, np.float64):
        return np.asarray(a, order="C")
    if a.dtype.kind in "iu":
        return np.asarray(a, dtype=np.int64, order="C")
    if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
        return np.asarray(a, dtype=np.float32, order="C")
    return None


def compare(got, want, label="expected"):
    """None when `got` (weft's .npy) equals `want`, else why not; `label`
    names the reference in the message."""
    import numpy as np
    want = np.asarray(want)
    if got.shape != want.shape:
        return "shape %s, %s %s" % (list(got.shape), label,
                                    list(want.shape))
    kind = want.dtype.kind
    if want.dtype.name == "bfloat16":
        kind = "f"
    if kind == "b" or kind in "iu":
        ok = got.dtype.kind in ("b" if kind == "b" else "iu")
        if not ok:
            return "type %s, %s %s" % (got.dtype, label, want.dtype)
        bad = np.argwhere(np.atleast_1d(got.astype(np.int64) !=
                                        want.astype(np.int64)))
        if len(bad) == 0:
            return None
        at = tuple(int(i) for i in bad[0]) if got.ndim else ()
        return "%d of %d elements differ, first at %s: %s, %s %s" % (
            len(bad), got.size, list(at), got[at], label, want[at])
    if kind != "f" or got.dtype.kind != "f":
        return "type %s, %s %s" % (got.dtype, label, want.dtype)
    rtol, atol = TOLERANCE.get(want.dtype.name, TOLERANCE["float32"])
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    close = np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return None
    bad = np.argwhere(np.atleast_1d(~close))
    at = tuple(int(i) for i in bad[0]) if got.ndim else ()
    return "%d of %d elements differ, first at %s: %.7g, %s %.7g" % (
        len(bad), g.size, list(at), g[at], label, w[at])


def run_onnxruntime(model_bytes, names, inputs):
    """(outputs, None) or (None, why)."""
    import numpy as np
    try:
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 4
        options.enable_cpu_mem_arena = False
        runner = ort.InferenceSession(model_bytes, options,
                                      providers=["CPUExecutionProvider"])
        feeds = {n: np.asarray(a) for n, a in zip(names, inputs)}
        return runner.run(None, feeds), None
    except Exception as e:  # noqa: BLE001 - any failure is reported
        text = str(e).strip().splitlines()
        return None, (text[0] if text else type(e).__name__)[:200]


def run_case(task, tools, work, keep):
    import shutil
    import numpy as np
    name = task["name"]
    folder = os.path.join(work, name)
    os.makedirs(folder, exist_ok=True)
    result = {k: task[k] for k in ("name", "op", "in_scope", "scope_note")}
    result.update(status="", reason="", ort="", ort_reason="")
    try:
        model = os.path.join(folder, "model.onnx")
        with open(model, "wb") as f:
            f.write(task["model"])
        args = [tools["weft-translate"], "--import-onnx", "--forward",
                "--with-weights", model, "-o", os.path.join(folder, "m.mlir")]
        for n, a in zip(task["input_names"], task["inputs"]):
            shape = getattr(a, "shape", ())
            if n in task["symbolic"] and len(shape) > 0:
                args.append("--input-shape=%s=%s" % (
                    n, "x".join(str(d) for d in shape)))
        status, code, line = run_tool(args)
        if status != "ok":
            result["status"] = "crash" if status == "crash" else "rejected"
            result["reason"] = "weft-translate: " + line \
                if status == "crash" else line
            return result
        run = [tools["weft-run"], os.path.join(folder, "m.mlir"),
               "--forward", "--write-outputs", os.path.join(folder, "out")]
        for i, (n, a) in enumerate(zip(task["input_names"], task["inputs"])):
            arr = as_npy(a)
            if arr is None:
                result["status"] = "run-failed"
                result["reason"] = "input '%s' of type %s has no .npy form " \
                    "weft-run reads" % (n, np.asarray(a).dtype)
                return result
            path = os.path.join(folder, "in%d.npy" % i)
            np.save(path, arr)
            run.append("--input=%s=%s" % (n, path))
        status, code, line = run_tool(run)
        if status != "ok":
            result["status"] = "crash" if status == "crash" else "run-failed"
            result["reason"] = ("weft-run: " + line) if status == "crash" \
                else line
            return result
        got = []
        for i in range(len(task["expected"])):
            path = os.path.join(folder, "out", "%d.npy" % i)
            got.append(np.load(path) if os.path.exists(path) else None)
        wrong = None
        for i, (g, w) in enumerate(zip(got, task["expected"])):
            why = "missing" if g is None else compare(g, w)
            if why:
                wrong = "output %d: %s" % (i, why)
                break
        result["status"] = "mismatch" if wrong else "match"
        result["reason"] = wrong or ""
        outs, why = run_onnxruntime(task["model"], task["input_names"],
                                    task["inputs"])
        if outs is None:
            result["ort"], result["ort_reason"] = "unavailable", why
            return result
        for i, (g, o) in enumerate(zip(got, outs)):
            why = "missing" if g is None else compare(g, o, "onnxruntime")
            if why:
                result["ort"] = "differs"
                result["ort_reason"] = "output %d: %s" % (i, why)
                return result
        result["ort"] = "agrees"
        return result
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)


# ---------------------------------------------------------------------------
# Reports


def reason_group(reason):
    """A rejection reason without names and numbers, to group cases."""
    text = re.sub(r"'[^'\s]*'", "'…'", reason)
    text = re.sub(r"\(node [^)]*\)", "(node …)", text)
    return re.sub(r"\b\d+\b", "N", text)


def md_cell(text, limit=110):
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[:limit - 1] + "…"


def op_table(results):
    ops = {}
    for r in results:
        ops.setdefault(r["op"], []).append(r)
    lines = ["| op | cases | in scope | imported | matches | first rejection "
             "reason |", "| --- | ---: | ---: | ---: | ---: | --- |"]
    for op in sorted(ops, key=str.lower):
        rs = ops[op]
        imported = [r for r in rs if r["status"] not in ("rejected", "crash")]
        rejected = [r for r in rs if r["status"] == "rejected"]
        lines.append("| %s | %d | %d | %d | %d | %s |" % (
            op, len(rs), sum(r["in_scope"] for r in rs), len(imported),
            sum(r["status"] == "match" for r in rs),
            md_cell(rejected[0]["reason"]) if rejected else ""))
    return "\n".join(lines)


def summarize(results, full):
    """(summary lines, failure lines)."""
    imported = [r for r in results if r["status"] not in ("rejected", "crash")]
    scope = [r for r in results if r["in_scope"]]
    scope_imported = [r for r in scope if r in imported]
    ran = [r for r in imported if r["status"] in ("match", "mismatch")]
    match = [r for r in imported if r["status"] == "match"]
    ort_ran = [r for r in ran if r["ort"] in ("agrees", "differs")]
    ort_agree = [r for r in ort_ran if r["ort"] == "agrees"]

    def pct(a, b):
        return "%.1f%%" % (100.0 * a / b) if b else "-"

    lines = [
        "cases:              %d (%d in scope)" % (len(results), len(scope)),
        "in scope imported:  %d of %d (%s)" % (
            len(scope_imported), len(scope),
            pct(len(scope_imported), len(scope))),
        "imported:           %d of %d (%s); run %d, run failed %d" % (
            len(imported), len(results), pct(len(imported), len(results)),
            len(ran), len(imported) - len(ran)),
        "matched:            %d of %d imported (%s) match the suite's "
        "expected outputs" % (len(match), len(imported),
                              pct(len(match), len(imported))),
        "onnxruntime:        agrees with Weft on %d of %d run (%d could not "
        "run in onnxruntime)" % (len(ort_agree), len(ort_ran),
                                 len(ran) - len(ort_ran)),
    ]
    multi = [r for r in results if r["reason"].startswith(MULTILINE)]
    if multi:
        lines.append("one-line errors:    %d cases got a message of several "
                     "lines (first: %s)" % (len(multi), multi[0]["name"]))
    failures = []
    for r in results:
        if r["status"] == "crash":
            failures.append("%s: crashed: %s" % (r["name"], r["reason"]))
        elif r["status"] == "mismatch" and r["name"] not in KNOWN_WRONG:
            failures.append("%s: wrong answer: %s" % (r["name"], r["reason"]))
        if r["ort"] == "differs" and r["name"] not in KNOWN_ORT:
            failures.append("%s: differs from onnxruntime: %s" % (
                r["name"], r["ort_reason"]))
    rate = len(scope_imported) / len(scope) if scope else 1.0
    if full and rate < IMPORT_FLOOR:
        failures.append("in-scope import rate %.1f%% is below the floor of "
                        "%.1f%% (IMPORT_FLOOR)" % (100 * rate,
                                                   100 * IMPORT_FLOOR))
    stale = sorted(n for n in KNOWN_WRONG
                   if any(r["name"] == n and r["status"] == "match"
                          for r in results))
    stale += sorted(n for n in KNOWN_ORT
                    if any(r["name"] == n and r["ort"] == "agrees"
                           for r in results))
    for n in stale:
        lines.append("known failure now passes (remove it from the list): "
                     + n)
    return lines, failures


def rejection_groups(results, limit=15):
    groups = {}
    for r in results:
        if r["status"] in ("rejected", "run-failed"):
            key = (r["status"], reason_group(r["reason"]))
            groups.setdefault(key, []).append(r)
    ranked = sorted(groups.items(), key=lambda kv: -len(kv[1]))
    lines = []
    for (status, key), rs in ranked[:limit]:
        lines.append("  %4d %-10s %s" % (len(rs), status, md_cell(key, 100)))
    if len(ranked) > limit:
        rest = sum(len(rs) for _, rs in ranked[limit:])
        lines.append("  %4d in %d more groups" % (rest, len(ranked) - limit))
    return lines


def write_docs(table, summary):
    path = os.path.join(ROOT, "docs", "Import.md")
    begin, end = "<!-- suite-table begin -->", "<!-- suite-table end -->"
    with open(path) as f:
        text = f.read()
    if begin not in text or end not in text:
        sys.exit("onnx-suite: %s has no %s / %s markers" % (path, begin, end))
    body = "%s\n```\n%s\n```\n\n%s\n%s" % (begin, "\n".join(summary), table,
                                            end)
    text = text[:text.index(begin)] + body + text[text.index(end) + len(end):]
    with open(path, "w") as f:
        f.write(text)
    print("onnx-suite: wrote the table into %s" % path)


# ---------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(
        description="The ONNX backend node test suite against Weft's "
        "importer and reference interpreter, with onnxruntime as a second "
        "reference.")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"),
                        help="build folder with bin/ and venv/ (default: "
                        "build)")
    parser.add_argument("--jobs", type=int, default=2,
                        help="cases run in parallel (default 2)")
    parser.add_argument("--filter", default="",
                        help="run only cases whose name matches this regex "
                        "(the import floor is then not checked)")
    parser.add_argument("--write-docs", action="store_true",
                        help="write the per-op table into docs/Import.md")
    parser.add_argument("--keep", default="",
                        help="keep each case's files in this folder")
    parser.add_argument("--list", default="",
                        choices=["", "match", "mismatch", "run-failed",
                                 "rejected", "crash", "ort-differs",
                                 "ort-unavailable"],
                        help="print the cases of one class with reasons")
    args = parser.parse_args()
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    build = os.path.abspath(args.build)
    reexec_in_venv(build)

    import concurrent.futures
    import shutil
    import tempfile
    import time
    for t in ("weft-translate", "weft-run"):
        path = os.path.join(build, "bin", t)
        if not os.path.exists(path):
            sys.exit("onnx-suite: %s is not built (%s)" % (t, path))
    start = time.monotonic()
    tasks = collect(args.filter)
    if not tasks:
        parser.error("--filter '%s' matches no case" % args.filter)
    scratch = tempfile.mkdtemp(prefix="weft-onnx-suite-")
    tools = snapshot_tools(build, os.path.join(scratch, "bin"))
    work = os.path.abspath(args.keep) if args.keep else scratch
    results = []
    with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(run_case, t, tools, work, bool(args.keep))
                   for t in tasks]
        for done, (task, future) in enumerate(zip(tasks, futures), 1):
            if done % 200 == 0 or done == len(tasks):
                # Progress on stderr: a full run takes minutes.
                print("onnx-suite: %d of %d cases, %.0f s" %
                      (done, len(tasks), time.monotonic() - start),
                      file=sys.stderr, flush=True)
            try:
                results.append(future.result())
            except Exception as e:  # noqa: BLE001 - a harness failure
                results.append({"name": task["name"], "op": task["op"],
                                "in_scope": task["in_scope"],
                                "scope_note": task["scope_note"],
                                "status": "crash", "ort": "", "ort_reason": "",
                                "reason": "harness: %s" % e})
    shutil.rmtree(scratch, ignore_errors=True)
    seconds = time.monotonic() - start

    summary, failures = summarize(results, full=not args.filter)
    summary.append("wall time:          %.0f s (%d jobs)" % (seconds,
                                                            args.jobs))
    if args.list:
        for r in results:
            ort = args.list.startswith("ort-")
            if r["status"] == args.list or (ort and
                                            r["ort"] == args.list[4:]):
                why = r["ort_reason"] if ort else r["reason"]
                print("%s [%s]%s: %s" % (r["name"], r["op"],
                                        "" if r["in_scope"] else " (out)",
                                        why))
    print("\n".join(summary))
    print("rejected and run-failed cases by reason:")
    print("\n".join(rejection_groups(results)))
    if args.write_docs:
        write_docs(op_table(results), summary[:-1])
    for f in failures:
        print("FAIL " + f)
    passed = sum(r["status"] == "match" and r["ort"] != "differs"
                 for r in results)
    print("%d passed, %d failed" % (passed, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
