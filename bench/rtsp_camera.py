#!/usr/bin/python3
"""A live RTSP camera for the tests and benchmarks: GStreamer's RTSP server streaming a video file as
H.264, looped, at a set size and frame rate, each frame stamped with the time it was sent
(``stamp.py``) so a reader can tell how old the frames it gets are.

Runs on Debian's Python with its GStreamer packages (``python3-gi``, ``gir1.2-gst-rtsp-server-1.0``,
``gstreamer1.0-plugins-{base,good,ugly,bad}``, ``gstreamer1.0-libav``), not in the project's
environment::

    /usr/bin/python3 bench/rtsp_camera.py --port 8554 --source vtest.avi --size 1280x720 --fps 25

It prints ``serving rtsp://...`` once clients can connect. ``--resize-after-s 5 --resize 640x360``
changes the stream's resolution mid-way; ``--credentials user:secret`` asks clients for them. Every
client gets the same encoded stream, whatever query its URL carries (``/stream?camera=7``).
"""

import argparse
import sys
import threading
import time

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402
from stamp import stamp_i420  # noqa: E402  (this folder is the script's, first on sys.path)


def size(text: str) -> tuple[int, int]:
    width, height = (int(v) for v in text.lower().split("x"))
    return width, height


def raw_caps(width: int, height: int, fps: int) -> Gst.Caps:
    return Gst.Caps.from_string(f"video/x-raw,format=I420,width={width},height={height},framerate={fps}/1")


class OneEncoder(GstRtspServer.RTSPMediaFactory):
    """A shared media keyed by the path alone: clients that ask for ``/stream?camera=1``, ``?camera=2``
    ... are separate cameras to a producer but one encoder here (a benchmark's many cameras)."""

    def do_gen_key(self, url) -> str:
        return url.abspath


class Camera:
    """Decodes the file into raw frames ahead of time (``appsink``), and feeds them, stamped, at the
    frame rate into the ``appsrc`` of every client's media (one shared media)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.width, self.height = args.size
        self.decoder = Gst.parse_launch(
            f"filesrc location={args.source} ! decodebin ! videoconvert ! videoscale ! videorate ! "
            f"capsfilter name=size caps={raw_caps(self.width, self.height, args.fps).to_string().replace(' ', '')} ! "
            "appsink name=sink sync=false max-buffers=4"
        )
        self.sink = self.decoder.get_by_name("sink")
        self.sources: list[Gst.Element] = []
        self.lock = threading.Lock()

    def factory(self) -> GstRtspServer.RTSPMediaFactory:
        gop = max(1, round(self.args.fps * self.args.keyframe_s))
        factory = OneEncoder()
        factory.set_launch(
            "( appsrc name=src is-live=true format=time do-timestamp=true "
            f"caps={raw_caps(self.width, self.height, self.args.fps).to_string().replace(' ', '')} ! "
            f"x264enc tune=zerolatency speed-preset=ultrafast key-int-max={gop} bitrate={self.args.bitrate} ! "
            "video/x-h264,profile=baseline ! rtph264pay name=pay0 pt=96 config-interval=1 )"
        )
        factory.set_shared(True)
        factory.connect("media-configure", self._configured)
        return factory

    def _configured(self, _factory, media) -> None:
        """A new client's media: its source takes the frames' size now (the launch line has the first
        size: a client that came after a resize got frames of another size than its caps, and no stream)."""
        source = media.get_element().get_by_name_recurse_up("src")
        with self.lock:
            source.set_property("caps", raw_caps(self.width, self.height, self.args.fps))
            self.sources.append(source)
        media.connect("unprepared", lambda _media: self._forget(source))

    def _forget(self, source: Gst.Element) -> None:
        with self.lock:
            self.sources = [s for s in self.sources if s is not source]

    def feed(self) -> None:
        """Pull decoded frames and push them, stamped, one every 1/fps seconds (late ones not caught up)."""
        self.decoder.set_state(Gst.State.PLAYING)
        period, started = 1.0 / self.args.fps, time.monotonic()
        due, index, resized = started, 0, False
        while True:
            if self.args.resize_after_s and not resized and time.monotonic() - started >= self.args.resize_after_s:
                width, height = self.args.resize
                self.decoder.get_by_name("size").set_property("caps", raw_caps(width, height, self.args.fps))
                resized = True
            sample = self.sink.emit("try-pull-sample", Gst.SECOND)
            if sample is None:
                if self.sink.get_property("eos"):  # the file ended: from the start again
                    self.decoder.seek_simple(Gst.Format.TIME, Gst.SeekFlags.FLUSH | Gst.SeekFlags.KEY_UNIT, 0)
                continue
            structure = sample.get_caps().get_structure(0)
            width, height = structure.get_value("width"), structure.get_value("height")
            buffer = sample.get_buffer()
            frame = bytearray(buffer.extract_dup(0, buffer.get_size()))
            time.sleep(max(0.0, due - time.monotonic()))
            stamp_i420(frame, width, height, time.time_ns() // 1_000_000, index)
            with self.lock:
                if (width, height) != (self.width, self.height):
                    self.width, self.height = width, height
                    for source in self.sources:
                        source.set_property("caps", raw_caps(width, height, self.args.fps))
                sources = list(self.sources)
            for source in sources:
                source.emit("push-buffer", Gst.Buffer.new_wrapped(bytes(frame)))
            index += 1
            due += period
            if time.monotonic() - due > period:
                due = time.monotonic()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=8554)
    parser.add_argument("--mount", default="/stream")
    parser.add_argument("--source", required=True, help="a video file, looped")
    parser.add_argument("--size", type=size, default=(1280, 720), help="WIDTHxHEIGHT")
    parser.add_argument("--fps", type=int, default=25)
    parser.add_argument("--keyframe-s", type=float, default=1.0, help="seconds between keyframes")
    parser.add_argument("--bitrate", type=int, default=2000, help="kbit/s")
    parser.add_argument("--resize-after-s", type=float, default=0.0, help="change the resolution after this")
    parser.add_argument("--resize", type=size, default=(640, 360), help="to this WIDTHxHEIGHT")
    parser.add_argument("--credentials", help="USER:PASSWORD clients must give")
    args = parser.parse_args()

    Gst.init(None)
    camera = Camera(args)
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(str(args.port))
    factory = camera.factory()
    if args.credentials:
        user, password = args.credentials.split(":", 1)
        auth = GstRtspServer.RTSPAuth()
        token = GstRtspServer.RTSPToken()
        token.set_string(GstRtspServer.RTSP_TOKEN_MEDIA_FACTORY_ROLE, "user")
        auth.add_basic(GstRtspServer.RTSPAuth.make_basic(user, password), token)
        server.set_auth(auth)
        permissions = GstRtspServer.RTSPPermissions()
        permissions.add_permission_for_role("user", GstRtspServer.RTSP_PERM_MEDIA_FACTORY_ACCESS, True)
        permissions.add_permission_for_role("user", GstRtspServer.RTSP_PERM_MEDIA_FACTORY_CONSTRUCT, True)
        factory.set_permissions(permissions)
    server.get_mount_points().add_factory(args.mount, factory)
    if server.attach(None) == 0:
        sys.exit(f"cannot serve on port {args.port}")
    threading.Thread(target=camera.feed, daemon=True).start()
    print(f"serving rtsp://127.0.0.1:{args.port}{args.mount}", flush=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
