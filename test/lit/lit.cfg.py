# -*- Python -*-
import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "Weft"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtext", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py", "expect-exit.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.weft_obj_root, "test", "lit")

config.environment["FILECHECK_OPTS"] = "-enable-var-scope"
llvm_config.use_default_substitutions()

config.substitutions.append(("%weft_src", config.weft_src_root))
config.substitutions.append(("%data", os.path.join(config.weft_src_root, "data")))
config.substitutions.append(
    ("%expect-exit", "%s %s" % (config.python_executable,
                                os.path.join(config.weft_src_root, "test", "lit", "expect-exit.py"))))
config.substitutions.append(("%syspython", "/usr/bin/python3"))

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tools = ["weftc", "weft-opt", "weft-translate", "weft-zoo", "weft-sched", "weft-run"]
llvm_config.add_tool_substitutions(
    [ToolSubst(t, unresolved="ignore") for t in tools], [config.weft_tools_dir])

# Built with sanitizers (scripts/check.sh --sanitize): tests that cap the
# address space cannot run beside AddressSanitizer's shadow memory.
if "address" in getattr(config, "weft_sanitize", ""):
    config.available_features.add("asan")

# rsvg-convert (Debian's librsvg2-bin) renders the timeline picture.
if shutil.which("rsvg-convert"):
    config.available_features.add("rsvg")

# The pinned packages of python/requirements.txt live in a virtual
# environment (scripts/install-deps.sh --python): %venvpython runs it, and its
# packages are features. %syspython is Debian's interpreter, for scripts that
# need only the standard library and numpy.
def find_venv_python():
    candidates = [os.environ.get("WEFT_VENV", ""),
                  os.path.join(config.weft_obj_root, "venv"),
                  os.path.join(config.weft_src_root, "build", "venv")]
    for venv in candidates:
        python = os.path.join(venv, "bin", "python")
        if venv and os.path.exists(python):
            return python
    return None


venv_python = find_venv_python()
config.substitutions.append(("%venvpython", venv_python or "/usr/bin/python3"))


def venv_features(python):
    """The features the environment offers. Probing imports torch (about
    2 s) and each lit test is its own ctest test, so the answer is kept in
    the build folder, keyed by the environment's requirements stamp."""
    import json
    import subprocess
    stamp = os.path.join(os.path.dirname(os.path.dirname(python)),
                         ".weft-requirements")
    key = "%s %s" % (python, os.path.getmtime(stamp)
                     if os.path.exists(stamp) else "no-stamp")
    cache = os.path.join(config.weft_obj_root, "venv-features.json")
    try:
        with open(cache) as f:
            kept = json.load(f)
        if kept.get("key") == key:
            return kept["features"]
    except (OSError, ValueError, KeyError):
        pass
    features = []
    for feature, modules in [("torch", "torch, onnx"),
                             ("onnxruntime", "onnxruntime"),
                             ("transformers", "transformers")]:
        if subprocess.call([python, "-c", "import " + modules],
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL) == 0:
            features.append(feature)
    # Written whole and renamed: lit tests run in parallel.
    tmp = "%s.%d" % (cache, os.getpid())
    with open(tmp, "w") as f:
        json.dump({"key": key, "features": features}, f)
    os.replace(tmp, cache)
    return features


if venv_python:
    for feature in venv_features(venv_python):
        config.available_features.add(feature)
