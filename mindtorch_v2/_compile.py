"""torch.compile: there is no graph compiler, so compiling returns the model or function itself,
which then runs eagerly with the same results. Every torch.compile keyword is accepted."""


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None, name=None,
            disable=False, recompile_limit=None, isolate_recompiles=False, shapes_spec=None):
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if model is None:
        def fn(model):
            if model is None:
                raise RuntimeError("Model can't be None")
            return compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                           name=name, disable=disable, recompile_limit=recompile_limit,
                           isolate_recompiles=isolate_recompiles, shapes_spec=shapes_spec)
        return fn
    if not callable(model):
        raise RuntimeError(f"torch.compile: model must be callable, got {type(model).__name__}")
    return model
