"""``torch.backends.opt_einsum``: contraction-order search for ``einsum``."""
enabled = True
strategy = "auto"


def is_available() -> bool:
    return False
