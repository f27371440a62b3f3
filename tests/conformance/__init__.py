"""Protocol conformance: the official harness (test_official_harness.py) and hexmcp's own property suite.

The property suite (`test_prop_*.py`) is described in README.md.
"""
