#!/usr/bin/env bash
# Build the libFuzzer harness over the C ABI (tests/c/fuzz/fuzz_ops.c) with clang +
# ASan/UBSan and run it for a given time (default 60 s); crashes land in the corpus dir's
# parent as crash-* files (each one becomes a regression case in tests/c/fuzz/regressions/).
#   tools/fuzz.sh [seconds] [extra libFuzzer flags...]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${MT_FUZZ_DIR:-/tmp/mindtorch-fuzz}"
SECS="${1:-60}"; shift || true
mkdir -p "$WORK/corpus"
command -v clang >/dev/null || { echo "clang is needed (apt-get install clang)"; exit 1; }
# MT_FUZZ_MAX_TENSOR_BYTES: tensors of at most 16 MiB (a bigger one is an out-of-memory error): an
# instrumented per-element loop (advanced indexing, a reduction) over a 2^26-2^28-element tensor takes
# 20-40 s, a timeout that is slowness, not a hang (rounds capped at 256 and 64 MiB ended that way)
clang -std=gnu11 -O1 -g -DMT_NO_CLONES -DMT_FUZZ_MAX_TENSOR_BYTES=16777216 -fno-omit-frame-pointer -pthread -include stdint.h \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I "$ROOT/csrc/include" "$ROOT/tests/c/fuzz/fuzz_ops.c" \
    $(find "$ROOT/csrc" -name '*.c' | sort) -lopenblas -lm -o "$WORK/fuzz_ops"
cp -n "$ROOT"/tests/c/fuzz/regressions/* "$WORK/corpus/" 2>/dev/null || true
cd "$WORK"
# 64 MiB per allocation (libFuzzer's own corpus buffers need more than 16)
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=64"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
./fuzz_ops -max_total_time="$SECS" -rss_limit_mb=4096 -malloc_limit_mb=4096 -max_len=512 -timeout=30 -print_final_stats=1 "$@" corpus
