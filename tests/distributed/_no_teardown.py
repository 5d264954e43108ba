"""Runs a script as __main__, then leaves through os._exit: real PyTorch 2.13's gloo ranks abort in
about one exit of three at interpreter teardown ("terminate called without an active exception", a
joinable std::thread destroyed, with or without destroy_process_group) once their work is done.

    python -m torch.distributed.run --nproc_per_node=2 tests/distributed/_no_teardown.py SCRIPT ARGS..."""
import os
import runpy
import sys

if __name__ == "__main__":
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    runpy.run_path(script, run_name="__main__")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
