#!/usr/bin/env python3
"""Runs a command and succeeds only if it exits with the given code.

Usage in lit: RUN: %expect-exit 1 weftc bad.onnx 2>&1 | FileCheck %s
The command's output is passed through; a signal never counts as a code.
"""
import subprocess
import sys

expected = int(sys.argv[1])
proc = subprocess.run(sys.argv[2:])
if proc.returncode != expected:
    sys.stderr.write("expect-exit: exit code %d, expected %d\n"
                     % (proc.returncode, expected))
    sys.exit(1)
