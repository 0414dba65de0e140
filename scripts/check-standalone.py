#!/usr/bin/env python3
"""Checks that nothing in the repository refers to a path outside it.

Scans every text file below ROOT (default: the repository holding this
script), skipping build and output folders, and reports each reference that
leaves the repository: a relative path whose `..` steps climb above ROOT from
the file's folder and from ROOT alike, an absolute path into a home or work
folder, or the names of documents that live beside the repository rather
than in it. Prints `FILE:LINE: reference` per finding; exits 1 if any.
"""
import os
import re
import sys

SKIP_DIRS = {".git", "out", "__pycache__", ".cache"}
TEXT_ENDINGS = (".cpp", ".h", ".td", ".txt", ".cmake", ".py", ".in", ".sh",
                ".md", ".mlir", ".test", ".onnxtext", ".yaml", ".yml",
                ".json", ".csv", ".cfg", ".format", "run")
# Relative references such as ../sibling/data or ${X}/../sibling/docs.
RELATIVE = re.compile(r"(?:\.\./)+[A-Za-z0-9_.\-/]*")
ABSOLUTE = re.compile(r"(?<![\w.])/(?:work|home|root)/[A-Za-z0-9_.\-/]+")
OUTSIDE_DOCS = re.compile(r"\b(?:DESIGN|BENCHMARKS|TOOLCHAIN|STYLE)\.md\b")


def leaves(root, start, rel):
    """True when `rel` taken from `start` ends outside `root`."""
    target = os.path.normpath(os.path.join(start, rel))
    return os.path.relpath(target, root).startswith("..")


def findings(root):
    this = os.path.realpath(__file__)
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs
                   if d not in SKIP_DIRS and not d.startswith("build")]
        for name in files:
            path = os.path.join(folder, name)
            if not name.endswith(TEXT_ENDINGS) or os.path.realpath(path) == this:
                continue
            try:
                with open(path, encoding="utf-8") as f:
                    lines = f.readlines()
            except (UnicodeDecodeError, OSError):
                continue
            shown = os.path.relpath(path, root)
            for number, line in enumerate(lines, 1):
                for match in RELATIVE.finditer(line):
                    rel = match.group(0)
                    if leaves(root, folder, rel) and leaves(root, root, rel):
                        yield f"{shown}:{number}: {rel}"
                for pattern in (ABSOLUTE, OUTSIDE_DOCS):
                    for match in pattern.finditer(line):
                        yield f"{shown}:{number}: {match.group(0)}"


def main(argv):
    root = os.path.realpath(argv[1] if len(argv) > 1 else
                            os.path.join(os.path.dirname(__file__), ".."))
    if not os.path.isdir(root):
        print(f"check-standalone: {root}: not a directory", file=sys.stderr)
        return 1
    found = list(findings(root))
    for line in found:
        print(line)
    print(f"check-standalone: {len(found)} reference(s) outside {root}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
