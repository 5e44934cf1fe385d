"""``torch.onnx``: importable, so that programs which import it at the top and export only
on request (``--onnx-export``) run; :func:`export` itself is not written yet (DESIGN.md:
it will write the capture of a model's forward as an ONNX graph) and says so."""


def is_in_onnx_export() -> bool:
    """False: no export is ever running (models branch on it to stay traceable)."""
    return False


def export(model, args=(), f=None, *unused, **kwargs):
    raise NotImplementedError("plugrad.onnx.export (torch.onnx.export) is not available yet: "
                              "plugrad cannot write ONNX graphs. Save the weights with "
                              "torch.save(model.state_dict(), path) instead")
