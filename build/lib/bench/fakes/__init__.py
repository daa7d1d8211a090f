"""Test doubles at the process boundary: servers on 127.0.0.1 that speak the real protocols.

Shared by the tests and the benchmarks (they live here so that ``bench`` never imports
``tests``); they need the ``dev`` extra (aiohttp).
"""
