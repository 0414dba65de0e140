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
# Debian's PyTorch and ONNX are only visible to the system interpreter.
config.substitutions.append(("%syspython", "/usr/bin/python3"))

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tools = ["weftc", "weft-opt", "weft-translate", "weft-zoo", "weft-sched", "weft-run"]
llvm_config.add_tool_substitutions(
    [ToolSubst(t, unresolved="ignore") for t in tools], [config.weft_tools_dir])

# Built with sanitizers (scripts/check.sh --sanitize): tests that cap the
# address space cannot run beside AddressSanitizer's shadow memory.
if "address" in getattr(config, "weft_sanitize", ""):
    config.available_features.add("asan")

if os.path.exists("/usr/bin/python3"):
    try:
        import subprocess
        subprocess.check_call(["/usr/bin/python3", "-c", "import torch, onnx"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        config.available_features.add("torch")
    except Exception:
        pass
