#!/usr/bin/env python3
"""Runs lit on one test for ctest: run-one.py LIT_PY [LIT ARGS] TEST.

ctest starts one lit process per test file, two or more at a time. Each
lit process reads and rewrites the suite's shared timing file
(.lit_test_times.txt), so a process could read another's half-written file
and fail the test. The file only orders tests within one lit process, which
here holds one test: this runner neither reads nor writes it."""
import os
import sys

lit_py = sys.argv.pop(1)
sys.path.insert(0, os.path.dirname(os.path.abspath(lit_py)))
import lit.main  # noqa: E402
import lit.Test  # noqa: E402

lit.Test.read_test_times = lambda suite: {}
lit.main.record_test_times = lambda tests, lit_config: None
sys.exit(lit.main.main())
