#!/usr/bin/env bash
# Build the C core with AddressSanitizer + UndefinedBehaviorSanitizer into a scratch
# copy of the package and run the Python tests against it (default: the whole suite).
#   tools/sanitize.sh                      # all of tests/
#   tools/sanitize.sh tests/reliability    # a subset
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${MT_SANITIZE_DIR:-/tmp/mindtorch-asan}"
rm -rf "$WORK"; mkdir -p "$WORK"
cp -r "$ROOT/csrc" "$ROOT/mindtorch_v2" "$ROOT/torch_proxy" "$ROOT/tests" "$ROOT/tools" "$ROOT/setup.py" "$ROOT/pyproject.toml" "$WORK/"
[ -d "$ROOT/examples" ] && cp -r "$ROOT/examples" "$WORK/"
rm -f "$WORK"/mindtorch_v2/_C*.so
cd "$WORK"
MT_SANITIZE=1 CC="${CC:-gcc}" python setup.py -q build_ext --inplace >/dev/null
LIBASAN="$(gcc -print-file-name=libasan.so)"
# libstdc++ preloaded too: ASan's __cxa_throw interceptor must find the real one at start-up, or the
# first C++ exception thrown by the reference PyTorch aborts the process
LIBSTDCXX="$(gcc -print-file-name=libstdc++.so.6)"
# Python itself leaks by design at exit: leak checking stays off here (tests/c checks leaks from C).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:allocator_may_return_null=1}"
# (set UBSAN_OPTIONS=halt_on_error=0:print_stacktrace=1 to collect every UBSan report in one run)
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
# --capture=sys: a sanitizer report written to fd 2 reaches the log (fd capture lost it on abort)
LD_PRELOAD="$LIBASAN:$LIBSTDCXX" python -m pytest -q -p no:cacheprovider --capture=sys "${@:-tests}"
