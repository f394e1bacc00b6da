"""Benchmarks (never tests): each writes a JSON result under bench/results/ and prints a table."""
