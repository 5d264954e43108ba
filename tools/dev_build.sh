#!/usr/bin/env bash
# Development build in place (mindtorch_v2/_C*.so next to the sources), through
# ccache, one build at a time on this machine (builds are CPU-heavy; 2 cores).
# CI and users use `pip install -e .`; this is the quick edit-compile loop.
set -uo pipefail
cd "$(dirname "$0")/.."
python tools/gen_ops.py || exit 1
if command -v ccache >/dev/null; then export CC="ccache gcc" CCACHE_NOHASHDIR=1; fi
log=$(mktemp)
# Built outside the package, then renamed into place: a process still running the old library keeps
# its file (copying over it in place, as --inplace does, crashes such processes).
flock /tmp/mindtorch-build.lock python setup.py -q build_ext --build-lib build/dev-lib >"$log" 2>&1
rc=$?
if [ $rc -eq 0 ]; then
    for so in build/dev-lib/mindtorch_v2/*.so; do
        cp "$so" "mindtorch_v2/.$(basename "$so").new" && mv -f "mindtorch_v2/.$(basename "$so").new" "mindtorch_v2/$(basename "$so")"
    done
fi
grep -E "error|warning: (implicit|incompatible)|incompatible pointer type" "$log" | head -40
[ $rc -ne 0 ] && tail -20 "$log"
rm -f "$log"
exit $rc
