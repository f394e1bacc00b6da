"""The GPU's memory and utilisation in /metrics, read through NVML (``nvidia-ml-py``, NVIDIA's own
binding) at scrape time: what an operator checks first when a replica slows down (another process on
the card, memory near full, the card idle because the replica starves it).

Only a replica that infers on a GPU registers it; on the CPU there is no such series. NVML reports
the whole card, not this process: replicas that share a card report the same figures, told apart by
their ``instance``.
"""

import logging
import os
from collections.abc import Iterator, Mapping

from prometheus_client.core import GaugeMetricFamily

from facestream.detector_service.inference import gpu_choice

log = logging.getLogger(__name__)

GPU_PROVIDERS = {"tensorrt", "cuda", "torch"}


def visible_gpu(env: Mapping[str, str]) -> str:
    """The card this process runs on as CUDA names it: the first of ``CUDA_VISIBLE_DEVICES`` (an index
    or a UUID, as ``--device`` sets it), else card 0."""
    return next(iter(gpu_choice.visible(env)), "0")


class GpuCollector:
    """Gauges of one card: memory used and total (bytes), and the share of the last sample period in
    which a kernel ran (``nvmlDeviceGetUtilizationRates``: 0-1)."""

    def __init__(self, gpu: str) -> None:
        import pynvml  # nvidia-ml-py, in the gpu extras: a CPU install never imports it

        self.nvml = pynvml
        pynvml.nvmlInit()
        self.handle = (
            pynvml.nvmlDeviceGetHandleByIndex(int(gpu)) if gpu.isdigit() else pynvml.nvmlDeviceGetHandleByUUID(gpu)
        )
        name = pynvml.nvmlDeviceGetName(self.handle)
        self.labels = [gpu, name.decode() if isinstance(name, bytes) else name]

    def collect(self) -> Iterator[GaugeMetricFamily]:
        nvml = self.nvml
        try:
            memory = nvml.nvmlDeviceGetMemoryInfo(self.handle)
            busy = nvml.nvmlDeviceGetUtilizationRates(self.handle)
        except nvml.NVMLError as exc:  # a card lost under the driver: the scrape goes on without it
            log.warning("NVML could not read GPU %s: %s", self.labels[0], exc)
            return
        for name, text, value in (
            ("facestream_gpu_memory_used_bytes", "GPU memory in use on the card (all processes)", memory.used),
            ("facestream_gpu_memory_total_bytes", "GPU memory of the card", memory.total),
            ("facestream_gpu_utilization_ratio", "Share of the last sample period a kernel ran (0-1)", busy.gpu / 100),
            (
                "facestream_gpu_memory_bandwidth_utilization_ratio",
                "Share of the last sample period the card's memory was read or written (0-1)",
                busy.memory / 100,
            ),
        ):
            family = GaugeMetricFamily(name, text, labels=["gpu", "name"])
            family.add_metric(self.labels, value)
            yield family


def gpu_collector(provider: str, env: Mapping[str, str] = os.environ) -> GpuCollector | None:
    """A collector for the card a ``provider`` infers on; None on the CPU, or (logged) where NVML is
    missing or finds no card: the replica serves on without these series."""
    if provider not in GPU_PROVIDERS:
        return None
    try:
        return GpuCollector(visible_gpu(env))
    except ImportError:
        log.warning("no GPU metrics: nvidia-ml-py is missing (pip install 'facestream[gpu]')")
    except Exception as exc:  # pynvml.NVMLError and its many subclasses: no driver, no such card
        log.warning("no GPU metrics: NVML could not open GPU %s: %s", visible_gpu(env), exc)
    return None
