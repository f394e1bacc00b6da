"""A slow, lossy link, for a network namespace whose kernel has no netem (this machine's has none):
every packet the namespace's firewall sends to NFQUEUE ``--queue`` is held ``--delay-ms`` and then let
through, in order, and a ``--loss`` share of them, chosen at random, is dropped instead. Run inside the
namespace (``nsenter -n``); it prints ``ready`` once bound, and on SIGTERM the packets it held go
through and it prints what it did as JSON.

    nsenter -t PID -n python tests/helpers/slow_link.py --queue 7 --delay-ms 100 --loss 0.01
"""

import argparse
import collections
import json
import random
import select
import signal
import socket
import sys
import time

from netfilterqueue import NetfilterQueue, Packet

QUEUE_PACKETS = 16384  # held at once: 100 ms of a busy link; the kernel drops (and counts) beyond it


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queue", type=int, required=True, help="the NFQUEUE number the firewall rules name")
    parser.add_argument("--delay-ms", type=float, required=True, help="how long each packet is held")
    parser.add_argument("--loss", type=float, default=0.0, help="the share of packets dropped, 0..1")
    args = parser.parse_args()
    delay_s, held = args.delay_ms / 1000.0, collections.deque()
    counts = {"packets": 0, "dropped": 0}

    def arrived(packet: Packet) -> None:
        counts["packets"] += 1
        if random.random() < args.loss:
            counts["dropped"] += 1
            packet.drop()
        else:
            held.append((time.monotonic() + delay_s, packet))

    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    queue = NetfilterQueue()
    queue.bind(args.queue, arrived, max_len=QUEUE_PACKETS)
    incoming = socket.fromfd(queue.get_fd(), socket.AF_NETLINK, socket.SOCK_RAW)
    print("ready", flush=True)
    while not stopping:
        wait = max(0.0, held[0][0] - time.monotonic()) if held else 0.5
        try:
            readable, _, _ = select.select([incoming], [], [], wait)
        except InterruptedError:
            continue
        if readable:
            queue.run(block=False)
        now = time.monotonic()
        while held and held[0][0] <= now:
            held.popleft()[1].accept()
    while held:
        held.popleft()[1].accept()
    queue.unbind()
    json.dump(counts, sys.stdout)


if __name__ == "__main__":
    main()
