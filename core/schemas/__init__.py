"""JSON Schema for tools: schemas derived from type hints, validators compiled once, and a quick check
for the simple schemas most tools declare."""
