"""/health from the composed packs: a pack that asks keeps its fields at the top level (the classifier's,
read by routers), every other pack has a block under its name, and `warm` is true exactly when every
composed pack has finished its start-up work."""

from __future__ import annotations

from typing import Any, Mapping

from hypothesis import given, strategies as st

from hexmcp.app.compose import Composition
from hexmcp.core import McpServer
from hexmcp.core.pack import Pack


class Component(Pack):
    def __init__(self, name: str, settled: bool, top_level: bool = False) -> None:
        self.name, self.settled, self.health_top_level = name, settled, top_level

    def warm(self) -> bool:
        return self.settled

    def health(self) -> Mapping[str, Any]:
        return {"ready": self.settled, "name": self.name}


# None: the server runs without that pack; otherwise whether its start-up work is done.
component = st.none() | st.booleans()


@given(classifier=component, knowledge=component, concepts=component)
def test_warm_is_every_composed_pack_settled(classifier, knowledge, concepts) -> None:
    packs = [Component(name, state, top_level=name == "classification")
             for name, state in (("classification", classifier), ("knowledge", knowledge), ("concepts", concepts))
             if state is not None]
    report = Composition(server=McpServer("t", "1"), packs=packs, command="serve").health()
    present = [state for state in (classifier, knowledge, concepts) if state is not None]
    assert report["warm"] is all(present)
    assert ("knowledge" in report) is (knowledge is not None) and ("concepts" in report) is (concepts is not None)
    if classifier is not None:
        assert report["ready"] is classifier and report["name"] == "classification"  # top-level fields
    if knowledge is not None:
        assert report["knowledge"] == {"ready": knowledge, "name": "knowledge"}
