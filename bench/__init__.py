"""Benchmarks (never tests): each writes a JSON result under bench/results/ and prints a table."""

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
