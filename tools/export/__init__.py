"""Turning model checkpoints into ONNX files the detector service runs (needs the ``export`` extra).

Nothing on a service's path imports this package: PyTorch is for exporting, not for serving.
"""
