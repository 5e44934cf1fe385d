"""``torch.backends.mkldnn``: oneDNN flags (plugrad's CPU backend is NumPy)."""
enabled = True


def is_available() -> bool:
    return False
