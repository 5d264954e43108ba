"""torch.nn.functional: PyTorch's names and signatures over the C core's NN kernels."""
