def is_available():
    """False: the core parallelises with its own thread pool, not OpenMP."""
    return False
