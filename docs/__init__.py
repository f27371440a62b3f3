"""hexmcp's own documentation, shipped as package data: the ADRs are the knowledge tools' default corpus."""
