"""What can be checked of the deployment files without starting them, for both profiles (the GPU
one cannot run here): the compose file resolves, every command it gives the facestream image is one
the CLI accepts, every variable is documented, the images copy what exists and pin what the
services need."""

import json
import re
import subprocess
import sys
import tomllib

import click
import pytest
import yaml
from helpers.compose import COMPOSE_FILE, ROOT, SECURE_FILE, podman_env

from facestream import paths
from facestream.tools.cli import cli

SPEC = yaml.safe_load(COMPOSE_FILE.read_text())
OUR_IMAGES = ("facestream:", "facestream-producer:")
FACESTREAM_SERVICES = [name for name, s in SPEC["services"].items() if s["image"].startswith(OUR_IMAGES)]
DOCKERFILES = [ROOT / "Dockerfile", ROOT / "deploy" / "gpu.Dockerfile", ROOT / "deploy" / "kafka" / "Dockerfile"]
# Stand-ins for official images that start as root and drop to their own user, as the originals do.
STAND_INS = [ROOT / "deploy" / "postgres" / "Dockerfile", ROOT / "deploy" / "mosquitto" / "Dockerfile"]


@pytest.mark.compose  # podman-compose asks podman for its version before it reads the file
@pytest.mark.parametrize("profiles", [("cpu",), ("gpu",), ("cpu", "cluster")], ids="+".join)
def test_podman_compose_resolves_the_file(profiles: tuple[str, ...]) -> None:
    cluster = "cluster" in profiles
    options = [arg for profile in profiles for arg in ("--profile", profile)]
    options += ["--env-file", str(ROOT / "deploy" / "cluster.env")] if cluster else []
    done = subprocess.run(
        [sys.executable, "-m", "podman_compose", "-f", str(COMPOSE_FILE), *options, "config"],
        capture_output=True,
        text=True,
        env=podman_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    resolved = yaml.safe_load(done.stdout)
    assert ("detector-gpu" in resolved["services"]) == ("gpu" in profiles)
    assert ("kafka-3" in resolved["services"]) == cluster
    bootstrap = resolved["services"]["detector" if "cpu" in profiles else "detector-gpu"]["environment"]
    assert bootstrap["KAFKA_BOOTSTRAP"] == ("kafka:9092,kafka-2:9092,kafka-3:9092" if cluster else "kafka:9092")
    if cluster:
        node = resolved["services"]["kafka-3"]["environment"]
        assert str(node["KAFKA_NODE_ID"]) == "3" and str(node["KAFKA_MIN_INSYNC_REPLICAS"]) == "2"


@pytest.mark.parametrize("service", FACESTREAM_SERVICES)
def test_every_facestream_command_in_the_file_is_one_the_cli_accepts(service: str) -> None:
    # Variables at their defaults; the image's data folder is this machine's (the same layout, the same
    # fetched files), so paths the CLI checks for existence are checked too.
    args = [
        re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", a).replace("/var/lib/facestream", str(paths.home()))
        for a in SPEC["services"][service]["command"]
    ]
    group = cli.make_context("facestream", [], resilient_parsing=True)
    command = cli.get_command(group, args[0])
    assert command is not None, f"{service}: no facestream command {args[0]!r}"
    rest = args[1:]
    if isinstance(command, click.Group):  # e.g. models build-engine, gallery enroll
        sub = command.get_command(group, rest[0])
        assert sub is not None, f"{service}: no facestream {args[0]} {rest[0]!r}"
        command, rest = sub, rest[1:]
    command.make_context(args[0], rest)  # raises on an unknown option or a bad value


def test_every_variable_the_files_read_is_documented() -> None:
    text = COMPOSE_FILE.read_text() + SECURE_FILE.read_text()
    variables = set(re.findall(r"(?<!\$)\$\{(\w+)", text))  # $${X}: the container's shell reads it
    documented = (ROOT / "docs" / "deploy.md").read_text()
    assert variables and not [v for v in sorted(variables) if f"`{v}`" not in documented]


def test_the_services_have_no_fixed_names_or_host_ports_where_they_scale() -> None:
    for name, service in SPEC["services"].items():
        assert "container_name" not in service, name
        if name.startswith("detector") or name in ("pose", "alerting"):
            assert "ports" not in service, f"{name} scales: no host port"


@pytest.mark.parametrize("dockerfile", DOCKERFILES + STAND_INS, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_dockerfile_copies_only_what_exists_and_the_project_s_run_as_a_user(dockerfile) -> None:
    text = dockerfile.read_text()
    context = dockerfile.parent if dockerfile.parent.name in ("kafka", "postgres", "mosquitto") else ROOT
    made_by_the_images_script = {"lib/", "log4j2.xml"}  # deploy/local-images.sh puts them in the context
    for line in re.findall(r"^COPY (?!--from)(.+)$", text, re.M):
        for source in line.split()[:-1]:
            if not source.startswith("--") and source not in made_by_the_images_script:
                assert (context / source).exists(), f"{dockerfile.name}: COPY {source} does not exist"
    if dockerfile not in STAND_INS:
        assert re.search(r"^USER (?!root)\w+", text, re.M), f"{dockerfile.name} runs as root"


@pytest.mark.parametrize("dockerfile", [ROOT / "Dockerfile", ROOT / "deploy" / "gpu.Dockerfile"], ids=str)
def test_an_image_gets_every_folder_the_wheel_installs(dockerfile) -> None:
    # A new service's folder missing from the image broke its wheel build ("package directory ... does not exist").
    folders = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"].values())
    copied = {line.split()[0] for line in re.findall(r"^COPY (?!--from)(.+)$", dockerfile.read_text(), re.M)}
    assert folders - copied == set()


def pins(path) -> dict[str, str]:
    """A requirements file's ``name==version`` lines, by normalised name."""
    pairs = [line.split("==") for line in path.read_text().splitlines() if "==" in line]
    return {name.lower().replace("_", "-"): version for name, version in pairs}


def requirement_names(requirements: list[str]) -> set[str]:
    """The distributions a list of requirements names, less the project's own extras (``facestream[...]``)."""
    names = {re.split(r"[<>=\[ ;]", requirement)[0].lower().replace("_", "-") for requirement in requirements}
    return names - {"facestream"}


def test_the_images_pin_every_package_the_services_need() -> None:
    cpu, gpu = pins(ROOT / "deploy" / "requirements.txt"), pins(ROOT / "deploy" / "requirements-gpu.txt")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    services = ("detector", "alerting", "store", "notify", "dashboard", "search")  # what [all] brings
    needed = requirement_names(project["dependencies"] + [r for extra in services for r in extras[extra]])
    for name in needed:
        assert name in cpu, f"deploy/requirements.txt does not pin {name}"
    assert "torch" not in cpu and "torch" not in gpu  # exporting only; the services never import it
    swapped = {"onnxruntime": "onnxruntime-gpu"}
    for name, version in cpu.items():
        assert gpu.get(swapped.get(name, name)) == version or name in swapped, f"{name}: CPU and GPU pins differ"


def test_the_producer_image_pins_the_light_install_as_the_services_image_does() -> None:
    producer, cpu = pins(ROOT / "deploy" / "requirements-producer.txt"), pins(ROOT / "deploy" / "requirements.txt")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert requirement_names(project["dependencies"]) <= set(producer)
    assert {name: cpu.get(name) for name in producer} == producer  # one version of each package
    assert not {"onnxruntime", "opencv-python-headless", "sqlalchemy", "onnx"} & set(producer)


def test_the_torch_variant_adds_the_pytorch_its_engine_was_measured_with() -> None:
    # deploy/gpu.Dockerfile --build-arg TORCH=true: the GPU image's pins, and the PyTorch of the committed
    # torch-engine benchmark (the engine's builds depend on Inductor's version)
    path = ROOT / "deploy" / "requirements-gpu-torch.txt"
    assert "-r requirements-gpu.txt" in path.read_text().splitlines()
    measured = json.loads(
        (ROOT / "bench" / "results" / "engine-mogface-fp16-cuda-torch-quick-fused-b32.json").read_text()
    )
    assert pins(path)["torch"] == measured["machine"]["versions"]["torch"].split("+")[0]
    assert not set(pins(path)) & set(pins(ROOT / "deploy" / "requirements-gpu.txt"))  # each pinned once
    assert "requirements-gpu-torch.txt" in (ROOT / "deploy" / "gpu.Dockerfile").read_text()
