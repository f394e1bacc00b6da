"""JPEG bytes -> a letterboxed batch for the engine: on the CPU (a thread pool) or on the GPU
(nvImageCodec and one CUDA kernel); faces cut from the decoded frames for the embedder."""
