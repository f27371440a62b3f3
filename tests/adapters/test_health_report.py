"""/health's `warm`: true exactly when every component the server has has finished its start-up work."""

from __future__ import annotations

from hypothesis import given, strategies as st

from hexmcp.app.health_report import health_report

# None: the server runs without that component; otherwise whether its start-up work is done.
component = st.none() | st.booleans()


@given(classifier=component, knowledge=component, concepts=component)
def test_warm_is_every_present_component_settled(classifier, knowledge, concepts) -> None:
    report = health_report(
        classifier=None if classifier is None else (lambda: {"ready": classifier, "model": "m"}),
        knowledge=None if knowledge is None else (lambda: {"ready": True, "complete": knowledge}),
        concepts=None if concepts is None else (lambda: {"ready": concepts}),
        gateway=lambda: {"configured": False},
    )()
    present = [state for state in (classifier, knowledge, concepts) if state is not None]
    assert report["warm"] is all(present)
    assert ("knowledge" in report) is (knowledge is not None) and ("concepts" in report) is (concepts is not None)
    assert report["gateway"] == {"configured": False}
    if classifier is not None:
        assert report["ready"] is classifier and report["model"] == "m"  # the classifier's fields stay top-level
