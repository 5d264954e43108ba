def get_cpu_capability():
    """The SIMD level the core selected at run time ("DEFAULT", "AVX2" or "AVX512")."""
    from ..._C import ffi, lib
    f = getattr(lib, "mt_cpu_capability", None)
    return ffi.string(f()).decode() if f is not None else "DEFAULT"
