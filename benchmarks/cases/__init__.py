"""One module per area; each registers cases with benchmarks.registry.case."""
