"""torch._dynamo.config: the settings are plain attributes (nothing reads them without a compiler)."""
cache_size_limit = 8
recompile_limit = 8
accumulated_cache_size_limit = 256
accumulated_recompile_limit = 256
capture_scalar_outputs = False
capture_dynamic_output_shape_ops = False
suppress_errors = False
verbose = False
optimize_ddp = True
automatic_dynamic_shapes = True
assume_static_by_default = True
force_parameter_static_shapes = True
inline_inbuilt_nn_modules = True
allow_unspec_int_on_nn_module = False
error_on_recompile = False
