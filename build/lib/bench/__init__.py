"""Benchmarks: retrieval quality of the memory search (``python -m bench.retrieval``)."""
