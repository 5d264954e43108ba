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
python3 "$ROOT/tools/gen_ops.py"  # the call cases follow mt.h (tests/c/fuzz/fuzz_calls.h)
# MT_FUZZ_MAX_TENSOR_BYTES: tensors of at most 4 MiB (a bigger one is an out-of-memory error): an
# instrumented per-element loop (advanced indexing, a reduction) over a 2^26-2^28-element tensor takes
# 20-40 s, a timeout that is slowness, not a hang (rounds capped at 256 and 64 MiB ended that way; at
# 16 MiB a repeat into 12 dims of size 2-5 copied 16M bool elements at ~1 us each)
# each source compiled to its own object (through ccache when present, two at a time): a rebuild after
# an edit compiles what changed, not the whole instrumented core (5 minutes on 2 cores)
CC="clang"; command -v ccache >/dev/null && CC="ccache clang"
FLAGS="-std=gnu11 -O1 -g -DMT_FUZZ_MAX_TENSOR_BYTES=4194304 -fno-omit-frame-pointer -pthread -include stdint.h
       -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -I $ROOT/csrc/include"
rm -rf "$WORK/obj"; mkdir -p "$WORK/obj"  # no object of a removed source
export CC FLAGS ROOT WORK
find "$ROOT/csrc" "$ROOT/tests/c/fuzz/fuzz_ops.c" -name '*.c' | sort |
    xargs -P 2 -I{} sh -c 'o="$WORK/obj/$(echo "{}" | sed "s|^$ROOT/||; s|/|_|g").o"; $CC $FLAGS -c "{}" -o "$o"'
clang -fsanitize=fuzzer,address,undefined "$WORK"/obj/*.o -lopenblas -lm -pthread -o "$WORK/fuzz_ops"
cp -n "$ROOT"/tests/c/fuzz/regressions/* "$WORK/corpus/" 2>/dev/null || true
cd "$WORK"
# 64 MiB per allocation (libFuzzer's own corpus buffers need more than 16); every allocation filled
# with ASan's byte (mt_empty's uninitialised memory: the same input computes the same values)
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=64:max_malloc_fill_size=67108864"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
./fuzz_ops -max_total_time="$SECS" -rss_limit_mb=4096 -malloc_limit_mb=4096 -max_len=512 -timeout=30 -print_final_stats=1 "$@" corpus
