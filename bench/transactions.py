"""Exactly once under faults, in rounds: how docs/performance.md reads the result file that
``tests/e2e/test_cluster.py -k rounds`` writes (the workload and its checker live with the cluster's
other fault tests, on the same three local nodes)."""

from bench.figures import source


def render(result: dict) -> list[str]:
    s, m = result["settings"], result["machine"]
    rows = [
        f"| {run['mode']} | {', '.join(f'{kind} x{n}' for kind, n in run['rounds'].items())} | {run['frames']} | "
        f"{run['lost']} | {run['duplicates_read_committed']} | {run['aborted_reads']} | {run['out_of_order']} | "
        f"{run['transactions_committed']} / {run['transactions_aborted']} | {run['replica_exits']} |"
        for run in result["runs"]
    ]
    return [
        f"**Exactly once under faults, three local nodes, {m['cores']} cores** (`{result['command']}`): "
        f"{s['cameras']} cameras at {s['fps']:g} fps through two detector replicas, one fault a round "
        f"(a killed leader down {s['down_s']:g} s). Duplicates and aborted reads are counted under "
        f"read_committed; transactions by the header each record carries. {source(result)}",
        "",
        "| mode | rounds | frames | lost | duplicates | aborted reads | out of order "
        "| transactions committed / aborted | replica restarts |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
    ]
