"""``facestream search``: where else was this face? Asks the dashboard's search API (``--search``), so
every search lands in the same audit log as the page's, under the API token's account."""

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import click

from facestream.errors import ConfigError


@click.command(
    epilog="""\b
Examples:
  facestream search --photo visitor.jpg --since 24h
  facestream search --alert 3f2a9c... --since 7d --json
  facestream search --person barack-obama --threshold 0.6
  facestream search --audit --csv > audit.csv
  facestream search --forget --person barack-obama      # erasure on request: sightings and gallery entry
""",
    context_settings={"show_default": True},
)
@click.option("--photo", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="A photo of the face.")
@click.option("--alert", "alert_id", help="An alert whose evidence shows the face.")
@click.option("--face", type=int, default=None, help="With --alert: which of its faces (default: all).")
@click.option("--person", help="An enrolled person's id (as `facestream gallery list` shows it).")
@click.option("--since", default="24h", help="How far back: a duration (90m, 24h, 7d) or Unix milliseconds.")
@click.option("--threshold", type=float, default=0.5, help="Least similarity a sighting needs.")
@click.option("--limit", type=int, default=1000, help="Sightings looked at, the most alike first.")
@click.option("--forget", is_flag=True, help="Erase the face (--person or --photo) instead of searching.")
@click.option("--audit", is_flag=True, help="Print the audit log instead (the role admin).")
@click.option("--csv", "as_csv", is_flag=True, help="With --audit: as CSV.")
@click.option("--json", "as_json", is_flag=True, help="Print the API's answer as it is.")
@click.option("--url", default="http://127.0.0.1:8080", envvar="FACESTREAM_DASHBOARD_URL", help="The dashboard.")
@click.option(
    "--token", default="", envvar="FACESTREAM_API_TOKEN", help="Your API token (`facestream users token NAME`)."
)
def search(
    photo: Path | None,
    alert_id: str | None,
    face: int | None,
    person: str | None,
    since: str,
    threshold: float,
    limit: int,
    forget: bool,
    audit: bool,
    as_csv: bool,
    as_json: bool,
    url: str,
    token: str,
) -> None:
    """Find the sightings of a face across the cameras' history (the alert store's sightings), grouped
    into visits, newest first; or erase a face; or show who searched for what."""
    api = Api(url, token)
    if audit:
        answer = api.call("GET", "/api/audit", {"format": "csv"} if as_csv else {})
        click.echo(answer if as_csv else _audit_lines(json.loads(answer)), nl=not as_csv)
        return
    if sum(x is not None for x in (photo, alert_id, person)) != 1:
        raise click.UsageError("give one of --photo, --alert, --person")
    params: dict[str, str] = {"threshold": str(threshold)}
    if alert_id is not None:
        params["alert"] = alert_id
        if face is not None:
            params["face"] = str(face)
    if person is not None:
        params["person"] = person
    body = photo.read_bytes() if photo is not None else b""
    if photo is not None:
        params["photo"] = photo.name
    if forget:
        answer = json.loads(api.call("POST", "/api/search/forget", params, body))
        places = ", ".join(f"{n} {place}" for place, n in answer["removed"].items())
        said = (
            f"forgotten: {answer['forgotten']} sightings ({places}; audit {answer['audit_id']}); {answer['in_kafka']}"
        )
        click.echo(json.dumps(answer) if as_json else said)
        return
    answer = json.loads(api.call("POST", "/api/search", {**params, "since": since, "limit": str(limit)}, body))
    click.echo(json.dumps(answer, indent=1) if as_json else visit_lines(answer))


class Api:
    """The dashboard's search API, as the token's holder."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url.rstrip("/"), token

    def call(self, method: str, path: str, params: dict[str, str], body: bytes | None = None) -> str:
        request = urllib.request.Request(
            f"{self.url}{path}?{urllib.parse.urlencode(params)}", data=body if method == "POST" else None, method=method
        )
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=300) as response:
                return response.read().decode()
        except urllib.error.HTTPError as exc:
            raise ConfigError(f"the dashboard answered {exc.code}: {exc.read().decode(errors='replace')}") from None
        except urllib.error.URLError as exc:
            raise ConfigError(f"cannot reach the dashboard at {self.url}: {exc.reason}") from None


def _when(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000))


def visit_lines(answer: dict) -> str:
    """A search's answer as lines: the count, then one line per visit."""
    lines = [f"{answer['sightings']} sighting(s) in {len(answer['visits'])} visit(s) (audit {answer['audit_id']})"]
    for visit in answer["visits"]:
        lines.append(
            f"  {visit['camera_id']:<14} {_when(visit['first_ms'])} - {_when(visit['last_ms'])[11:]}  "
            f"{len(visit['sightings'])} sighting(s), best similarity {visit['best_similarity']:.2f}"
        )
    return "\n".join(lines)


def _audit_lines(answer: dict) -> str:
    return "\n".join(
        f"{entry['audit_id']:>6} {_when(entry['at_ms'])} {entry['who']:<12} {entry['kind']:<7} "
        f"{entry['subject']} -> {entry['results']}"
        for entry in answer["entries"]
    )
