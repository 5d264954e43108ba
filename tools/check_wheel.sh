#!/usr/bin/env bash
# Build a wheel of this checkout, then install it into a fresh virtualenv where every C compiler is
# /bin/false, and run ops from the installed package: the wheel must need no compiler (issue 23).
#   tools/check_wheel.sh            # prints the build's wall/CPU time and the checks' output
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d /tmp/mindtorch-wheel.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
/usr/bin/time -f "wheel built: wall %e s, CPU %U s user + %S s sys" \
    python -m pip wheel -q --no-deps -w "$WORK/dist" "$ROOT"
python -m venv "$WORK/venv"
mkdir "$WORK/nocc"
for c in cc gcc g++ c++ clang clang++ x86_64-linux-gnu-gcc; do ln -s /bin/false "$WORK/nocc/$c"; done
export PATH="$WORK/nocc:$WORK/venv/bin:/usr/bin:/bin" CC=/bin/false CXX=/bin/false
pip install -q "$WORK"/dist/mindtorch_v2-*.whl
cd "$WORK"  # away from the checkout: the installed package is the one imported
python - <<'EOF'
import shutil
import mindtorch_v2 as torch
assert shutil.which("gcc").startswith(__import__("os").environ["PATH"].split(":")[0]), "a real compiler is on PATH"
assert "site-packages" in torch.__file__, torch.__file__
x = torch.randn(3, 4, requires_grad=True)
(x.exp() * 2).sum().backward()
assert torch.allclose(x.grad, 2 * x.detach().exp())
assert torch.fft.fft(torch.ones(8)).abs().sum().item() == 8.0
import mindtorch_v2.distributed as dist
print("installed without a compiler:", torch.__file__)
print("gloo:", dist.is_gloo_available(), "mpi:", dist.is_mpi_available())
EOF
