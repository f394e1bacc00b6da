"""MogFace as a PyTorch network: the official checkpoint loaded strictly, its heads merged.

Used by ``facestream export mogface`` (checkpoint -> ONNX) and by the PyTorch engine (checkpoint ->
``torch.compile`` build); nothing else imports PyTorch.
"""
