"""python -m torch_proxy script.py args... | -m module args... | --install-hook [dir] | --uninstall-hook [dir]"""
import os
import runpy
import sys

from . import ENV_VAR, install, install_hook, uninstall_hook

USAGE = ("usage: python -m torch_proxy script.py [args...]\n"
         "       python -m torch_proxy -m module [args...]\n"
         "       python -m torch_proxy --install-hook [site-dir]    (MINDTORCH_PROXY=1 then activates the proxy)\n"
         "       python -m torch_proxy --uninstall-hook [site-dir]")


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        sys.exit(USAGE)
    if args[0] in ("--install-hook", "--uninstall-hook"):
        fn = install_hook if args[0] == "--install-hook" else uninstall_hook
        print(fn(args[1] if len(args) > 1 else None))
        return
    os.environ[ENV_VAR] = "1"  # processes the program spawns get the proxy too (with the hook installed)
    install()
    if args[0] == "-m":
        if len(args) < 2:
            sys.exit(USAGE)
        sys.argv = args[1:]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = args
        runpy.run_path(args[0], run_name="__main__")


main()
