#!/usr/bin/env bash
# Builds Weft and runs every test: lit (FileCheck), GoogleTest and the
# end-to-end tests with PyTorch, all registered with ctest.
#   scripts/check.sh [CTEST ARGS]   the normal build in build/ (what CI runs);
#                                   first installs the pinned Python packages
#                                   into build/venv (end-to-end tests)
#   scripts/check.sh --sanitize     the same tests built with AddressSanitizer
#                                   and UndefinedBehaviorSanitizer in
#                                   build-sanitize/ (a second full build,
#                                   shared with scripts/fuzz.sh; not part
#                                   of CI)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == --sanitize ]]; then
  shift
  scripts/install-deps.sh --python
  [ -f build-sanitize/build.ninja ] ||
    cmake -G Ninja -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Release \
      -DWEFT_SANITIZE=address,undefined -DWEFT_FUZZ=ON >/dev/null
  ninja -C build-sanitize
  # Leaks are reported; a sanitizer finding fails the test that hit it.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  ctest --test-dir build-sanitize --output-on-failure -j"$(nproc)" "$@"
  exit
fi
scripts/install-deps.sh --python
scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
