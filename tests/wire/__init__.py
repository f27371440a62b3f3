"""Tests of the sans-IO wire both ends share (hexmcp.wire)."""
