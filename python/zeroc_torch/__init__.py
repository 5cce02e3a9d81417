"""zeroc_torch: export PyTorch modules as faithful ONNX training graphs for
zeroc (see export.py and docs/Models.md).

    from zeroc_torch.export import export
"""

MARKER_KEY = "zeroc.parameters"
