"""torch.testing (assert_close, make_tensor): written below."""
