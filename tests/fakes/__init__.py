"""Test doubles at the process boundary: servers on 127.0.0.1 that speak the real protocols."""
