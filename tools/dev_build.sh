#!/usr/bin/env bash
# Development build in place (mindtorch_v2/_C*.so next to the sources), through
# ccache, one build at a time on this machine (builds are CPU-heavy; 2 cores).
# CI and users use `pip install -e .`; this is the quick edit-compile loop.
set -uo pipefail
cd "$(dirname "$0")/.."
python tools/gen_ops.py || exit 1
if command -v ccache >/dev/null; then export CC="ccache gcc" CCACHE_NOHASHDIR=1; fi
log=$(mktemp)
flock /tmp/mindtorch-build.lock python setup.py -q build_ext --inplace >"$log" 2>&1
rc=$?
grep -E "error|warning: (implicit|incompatible)|incompatible pointer type" "$log" | head -40
[ $rc -ne 0 ] && tail -20 "$log"
rm -f "$log"
exit $rc
