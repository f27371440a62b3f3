"""The Qdrant collection passages go into when a `--vector-store` spec names none.

Its own module because both the spec parser (`factory.py`) and the store (`qdrant.py`) need it, and the
factory imports the store: the name here is what lets the store not import the factory back.
"""

DEFAULT_COLLECTION = "hexmcp_passages"
