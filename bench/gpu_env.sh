#!/usr/bin/env bash
# Source this at the start of a command on the GPU machine (the `run` tool), from the repository root:
#   source bench/gpu_env.sh && python3 -m bench engine --model mogface ...
# It unpacks the package bundle (carried as .devsite/), installs any wheels carried in .whl/
# (onnxconverter-common for FP16 conversion, pytest for the GPU-only tests), and gives the run a
# FACESTREAM_HOME holding the models, sample photos and bench files carried in .fshome/. bench/README.md lists
# what to carry and how each folder is made. A later call on the still-warm machine may carry none of
# them: what the first call unpacked under /tmp is used again.
set -e
if [ -f .devsite/device-site-cp312.tar.xz ]; then
  mkdir -p /tmp/site
  tar xJf .devsite/device-site-cp312.tar.xz -C /tmp/site
fi
[ -d /tmp/site ] || { echo "carry .devsite (no package bundle on this machine yet)"; exit 1; }
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --upgrade --target /tmp/site .whl/*.whl 2>/dev/null
fi
# The checkout as the wheel lays it out (schemas/ is facestream.schemas, and so on: pyproject.toml's
# package-dir), made of links in /tmp/fsrc, and the command goes on from there: nothing is built or
# installed, and paths relative to the repository root (tests/, bench/results/) still work.
rm -rf /tmp/fsrc && mkdir -p /tmp/fsrc/facestream
ln -s "$PWD"/facestream/* /tmp/fsrc/facestream/
for part in schemas producers detector_service alerting alert_store notifier dashboard tools; do ln -s "$PWD/$part" "/tmp/fsrc/facestream/$part"; done
for entry in "$PWD"/* "$PWD"/.[!.]*; do
  case "$(basename "$entry")" in facestream | .git | ".[!.]*") ;; *) ln -s "$entry" /tmp/fsrc/ ;; esac
done
cd /tmp/fsrc
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 FACESTREAM_HOME=/tmp/fsh
# The copy has no git metadata: the commit it was made from, written here before the carry with
# `git describe --always --dirty > .fshome/commit`, names the code in every result file.
if [ -f .fshome/commit ]; then export FACESTREAM_COMMIT="$(cat .fshome/commit)"; fi
mkdir -p "$FACESTREAM_HOME"
for part in models samples bench native; do  # what was carried (a folder left by an earlier call may hold only one)
  if [ -d ".fshome/$part" ]; then cp -r ".fshome/$part" "$FACESTREAM_HOME/"; fi
done
set +e
