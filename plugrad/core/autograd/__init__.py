"""The autograd engine: graph nodes, grad mode, backward, custom Functions, anomaly mode."""
