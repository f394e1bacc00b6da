"""How nvImageCodec decodes JPEGs on the GPU, as ``--gpu-decoder`` spells it (``hw/keep``, ``all/t4/c64``).

Plain Python, so the command line can check and show the set-up without importing OpenCV or CuPy.
"""

from dataclasses import dataclass

# nvImageCodec backends a decoder may use, by the names ``GpuDecodeSettings.backends`` takes; each
# list is in order of preference (an image one backend cannot take goes to the next).
BACKENDS = {
    "all": (),  # nvImageCodec's default: every backend, work split by its own load hints
    "hw": ("HW_GPU_ONLY", "GPU_ONLY"),  # the hardware JPEG decoder, CUDA decoding for what it cannot take
    "gpu": ("GPU_ONLY",),
    "hybrid": ("HYBRID_CPU_GPU",),
}


@dataclass(frozen=True)
class GpuDecodeSettings:
    """How nvImageCodec is set up. The defaults are the detector's: the hardware decoder (on the H200,
    YuNet's pipeline with 4 detector processes made about 1.6x the frames/s with it as with every backend
    allowed, bench/results/history/pipeline-yunet-fp16-cuda-4-workers-{all,hw}.json), each batch in one
    call of nvImageCodec's C API (on the H100, 14,119 frames/s against 11,039 through its Python binding,
    pipeline-yunet-fp16-cuda-owner-4-fronts-640x480-b128-owner-batch-256-h100-{native,keep}.json);
    ``bench decode`` and ``bench pipeline --gpu-decoder`` compare the others."""

    backends: str = "hw"  # a key of BACKENDS
    cpu_threads: int = 0  # nvImageCodec's host threads per decoder; 0: one per core
    keep_images: bool = True  # decode into the previous batch's Images rather than allocate new ones
    chunk: int = 0  # images per nvImageCodec call; 0: the whole batch in one call
    first: bool = False  # decode on a stream of the GPU's highest priority, ahead of inference's kernels
    decoders: int = 1  # nvImageCodec decoders, each on a stream and a thread of its own, sharing each batch
    native: bool = True  # the whole batch through nvImageCodec's C API in one call (decoding/native_decoder.py)

    def __post_init__(self) -> None:
        if self.backends not in BACKENDS:
            raise ValueError(f"backends must be one of {', '.join(BACKENDS)}, got {self.backends!r}")
        if self.chunk < 0:
            raise ValueError(f"images per decoding call must be >= 1 (or 0: the whole batch), got {self.chunk}")
        if self.decoders < 1:
            raise ValueError(f"a GPU decoder set-up needs at least 1 decoder, got {self.decoders}")
        if self.native and (self.decoders > 1 or self.chunk):
            raise ValueError("/native decodes each batch in one call of one decoder: it takes no /cN or /dN")

    @classmethod
    def parse(cls, text: str) -> "GpuDecodeSettings":
        """``backends[/keep][/first][/native][/tN][/cN][/dN]``, as ``--gpu-decoder`` takes it:
        ``hw/keep/t4/c64/d2`` is the hardware decoder, decoding into kept Images, 4 host threads, 64 images
        per call, each batch shared by 2 decoders; ``/first`` puts decoding on a high-priority stream;
        ``/native`` hands each batch to nvImageCodec's C API in one call, with no Python per image (it
        always decodes into kept images, so it needs no ``/keep``); ``hw/native`` (the defaults) is
        DEFAULT_GPU_DECODER, and a set-up without ``/native`` decodes through nvImageCodec's Python binding."""
        backends, *flags = text.split("/")
        numbers = {"t": 0, "c": 0, "d": 1}  # host threads, images per call, decoders
        for flag in flags:
            if flag[:1] in numbers and flag[1:].isdigit():
                numbers[flag[0]] = int(flag[1:])
            elif flag not in ("keep", "first", "native"):
                raise ValueError(
                    f"unknown part {flag!r} in GPU decoder {text!r} (expected keep, first, native, tN, cN or dN)"
                )
        return cls(
            backends=backends,
            cpu_threads=numbers["t"],
            keep_images="keep" in flags or "native" in flags,
            chunk=numbers["c"],
            first="first" in flags,
            decoders=numbers["d"],
            native="native" in flags,
        )

    def __str__(self) -> str:
        """The ``--gpu-decoder`` spelling, which ``parse`` reads back."""
        numbers = (
            (f"/t{self.cpu_threads}" if self.cpu_threads else "")
            + (f"/c{self.chunk}" if self.chunk else "")
            + (f"/d{self.decoders}" if self.decoders > 1 else "")
        )
        flags = "/keep" * (self.keep_images and not self.native) + "/first" * self.first + "/native" * self.native
        return self.backends + flags + numbers


DEFAULT_GPU_DECODER = str(GpuDecodeSettings())  # "hw/native": detect's and bench pipeline's default
# What the default falls back to, in order, where it cannot start (no C compiler to build the native
# decoder; a GPU that refuses the hardware decoder): loudly, and the metrics say so. A set-up given by
# name never falls back.
DEFAULT_FALLBACKS = ("hw/keep", "all")
