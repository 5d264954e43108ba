"""Deterministic-algorithm flags. mindtorch_v2's kernels are deterministic for a given thread count
(no atomics-based reductions), so the flags are recorded and every algorithm qualifies."""
_state = {"enabled": False, "warn_only": False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    _state["enabled"] = bool(mode)
    _state["warn_only"] = bool(warn_only)


def are_deterministic_algorithms_enabled():
    return _state["enabled"]


def is_deterministic_algorithms_warn_only_enabled():
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    modes = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in modes:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = modes[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not _state["enabled"]:
        return 0
    return 1 if _state["warn_only"] else 2
