"""The engine (ONNX Runtime sessions per batch bucket, the provider chosen with its fallbacks, the
graph rewritten for the GPU), boxes back in frame pixels, and the face embedder."""
