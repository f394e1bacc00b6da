#!/usr/bin/env bash
# The Debian/Ubuntu packages of the real servers `make test` starts, installed when any part is missing.
# `make test` and .ci/run both call this; `make test-fast` needs none of it.
#
#   tests/system-packages.sh           install what is missing (apt-get; through sudo when not root)
#   tests/system-packages.sh --check   only say what is missing (exit 1 if anything is)
#
# Each program and each GStreamer element the tests use is looked for on its own: a machine that has
# some of these packages is the usual case, and one missing decoder is enough to break the cameras.
set -euo pipefail

check_only=""
case "${1:-}" in
  --check) check_only=1 ;;
  "") ;;
  -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "unknown option: $1 (try --help)" >&2; exit 2 ;;
esac

missing=()  # Debian packages to install
why=()      # what was missing, for the message
need() { missing+=("$2"); why+=("$1"); }

# Programs: the Kafka broker's Java and Maven, the compose stack (podman, runc, and debootstrap for
# the images' root file system), the dashboard's browser, PostgreSQL, Mosquitto.
for pair in java:openjdk-17-jre-headless mvn:maven podman:podman runc:runc debootstrap:debootstrap \
  chromium:chromium chromedriver:chromium-driver mosquitto:mosquitto gst-inspect-1.0:gstreamer1.0-tools; do
  command -v "${pair%%:*}" >/dev/null || need "${pair%%:*}" "${pair#*:}"
done
ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || need "PostgreSQL's server (pg_ctl)" postgresql
# The reverse proxy that signs users in before the dashboard (tests/e2e/test_access.py).
[ -x /usr/sbin/nginx ] || need "nginx" nginx
# The alert rules' checks and unit tests (tests/deploy/test_prometheus_rules.py).
command -v promtool >/dev/null || need "promtool" prometheus
# The network faults between containers (tests/deploy/test_network_faults.py): nftables and
# iptables in a container's namespace, and NetfilterQueue (the `faults` extra, built against
# libnetfilter_queue's headers) for the slow, lossy link.
for pair in nft:nftables iptables:iptables nsenter:util-linux gcc:gcc; do
  command -v "${pair%%:*}" >/dev/null || need "${pair%%:*}" "${pair#*:}"
done
[ -f /usr/include/libnetfilter_queue/libnetfilter_queue.h ] || need "libnetfilter_queue's headers" libnetfilter-queue-dev

# The RTSP cameras (bench/rtsp_camera.py) run on Debian's Python with GStreamer's RTSP server bindings.
/usr/bin/python3 -c 'import gi' 2>/dev/null || need "python3-gi" python3-gi
/usr/bin/python3 -c 'import gi; gi.require_version("GstRtspServer", "1.0")' 2>/dev/null \
  || need "GStreamer's RTSP server bindings" "gir1.2-gst-rtsp-server-1.0 gstreamer1.0-rtsp"

# Every element in bench/rtsp_camera.py's pipelines and what decodebin needs for the test video
# (vtest.avi: an AVI of DivX 3, i.e. MS-MPEG4 v3), with its package (tests/test_test_tiers.py checks
# that this list covers the camera's pipelines).
ELEMENTS="
filesrc libgstreamer1.0-0
capsfilter libgstreamer1.0-0
decodebin gstreamer1.0-plugins-base
videoconvert gstreamer1.0-plugins-base
videoscale gstreamer1.0-plugins-base
videorate gstreamer1.0-plugins-base
appsink gstreamer1.0-plugins-base
appsrc gstreamer1.0-plugins-base
avidemux gstreamer1.0-plugins-good
rtph264pay gstreamer1.0-plugins-good
x264enc gstreamer1.0-plugins-ugly
avdec_msmpeg4 gstreamer1.0-libav
"
if command -v gst-inspect-1.0 >/dev/null; then
  while read -r element package; do
    [ -n "$element" ] || continue
    gst-inspect-1.0 --exists "$element" || need "GStreamer element $element" "$package"
  done <<< "$ELEMENTS"
else
  need "GStreamer's elements" "$(awk 'NF {print $2}' <<< "$ELEMENTS" | sort -u | tr '\n' ' ')"
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "system packages: all the tests' servers are here"
  exit 0
fi
packages=$(printf '%s\n' "${missing[@]}" | tr ' ' '\n' | grep . | sort -u | tr '\n' ' ')
echo "system packages: missing $(IFS=,; echo "${why[*]}" | sed 's/,/, /g')"
if [ "$(id -u)" -eq 0 ]; then
  sudo=""
elif command -v sudo >/dev/null; then
  sudo="sudo"
else
  sudo="NONE"
fi
command="apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $packages"
if [ -n "$check_only" ] || [ "$sudo" = NONE ] || ! command -v apt-get >/dev/null; then
  echo "install them with (as root): $command" >&2
  exit 1
fi
echo "installing: $packages"
$sudo apt-get update -q
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $packages
