"""python -m torch_proxy script.py args...: run a script with `import torch` -> mindtorch_v2."""
import runpy
import sys

from . import install


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: python -m torch_proxy script.py [args...]")
    install()
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    runpy.run_path(script, run_name="__main__")


main()
