"""torch.compiler.config: plain settings (read by nothing without a compiler)."""
job_id = None
dynamic_sources = ""
unbacked_sources = ""
