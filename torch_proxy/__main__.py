"""python -m torch_proxy script.py args... | -m module args... | -c command args... | --install-hook / --uninstall-hook [dir]
| --register-torch / --unregister-torch [dir]"""
import os
import runpy
import sys
import types

from . import ENV_VAR, install, install_hook, register_torch, uninstall_hook, unregister_torch

USAGE = ("usage: python -m torch_proxy script.py [args...]\n"
         "       python -m torch_proxy -m module [args...]\n"
         "       python -m torch_proxy -c command [args...]\n"
         "       python -m torch_proxy --install-hook [site-dir]    (MINDTORCH_PROXY=1 then activates the proxy)\n"
         "       python -m torch_proxy --uninstall-hook [site-dir]\n"
         "       python -m torch_proxy --register-torch [site-dir]  (pip then counts mindtorch_v2 as torch)\n"
         "       python -m torch_proxy --unregister-torch [site-dir]")

# the site-packages commands: each takes an optional site-dir and prints the path(s) it wrote or removed
COMMANDS = {"--install-hook": install_hook, "--uninstall-hook": uninstall_hook,
            "--register-torch": register_torch, "--unregister-torch": unregister_torch}


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        sys.exit(USAGE)
    if args[0] in COMMANDS:
        if len(args) > 2:
            sys.exit(USAGE)
        try:
            result = COMMANDS[args[0]](args[1] if len(args) > 1 else None)
        except (RuntimeError, OSError) as e:  # a real PyTorch there (register), a bad site-dir
            sys.exit(f"torch_proxy {args[0]}: {e}")
        for path in result if isinstance(result, list) else [result]:
            print(path)
        return
    os.environ[ENV_VAR] = "1"  # processes the program spawns get the proxy too (with the hook installed)
    install()
    if args[0] in ("-m", "-c") and len(args) < 2:
        sys.exit(USAGE)
    if args[0] == "-m":
        sys.argv = args[1:]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    elif args[0] == "-c":  # as python -c: argv[0] is "-c", the code runs as __main__ from "<string>"
        sys.argv = ["-c"] + args[2:]
        sys.modules["__main__"] = main_module = types.ModuleType("__main__")
        exec(compile(args[1], "<string>", "exec"), main_module.__dict__)
    else:
        sys.argv = args
        runpy.run_path(args[0], run_name="__main__")


main()
