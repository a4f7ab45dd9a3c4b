"""Unit tests: no store server, no model beyond a tiny one; python -m pytest tests/unit -q."""
