"""Read what one run of the official conformance harness left behind, and summarise it.

The harness (`@modelcontextprotocol/conformance`, `conformance server ... -o OUT`) writes one folder a
scenario, `OUT/server-<scenario>-<UTC time with ':' and '.' as '-'>/checks.json`, holding a list of
checks `{id, status, errorMessage?, ...}` with status SUCCESS, FAILURE, WARNING, INFO or SKIPPED. Its
console output ends with a `=== SUMMARY ===` block (`✓ name: 3 passed, 0 failed`) and, for
`--requirements REV` runs, a `Not scored for REV:` block naming scenarios that do not count.

Rules, the harness's own: a scenario fails when any check is FAILURE; one that ran but left no readable
checks.json fails too. The console summary says which scenarios ran; folders it does not list are
added, so a scenario can never vanish from the count.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import attrs

FOLDER = re.compile(r"^(?:server-)?(?P<scenario>.+)-(?P<time>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z)$")
SUMMARY_LINE = re.compile(r"^[✓✗] (?P<scenario>\S+): \d+ passed, \d+ failed\s*$")
UNSCORED_HEAD = re.compile(r"^Not scored for \S+:")
UNSCORED_LINE = re.compile(r"^\s+[✓✗] (?P<scenario>\S+) \((?P<reason>[^)]*)\)\s*$")
COLOUR = re.compile(r"\x1b\[[0-9;]*m")


@attrs.frozen(kw_only=True)
class Scenario:
    name: str
    passed: bool
    failures: tuple[str, ...]  # "check-id: message", first failing checks first
    unscored_reason: str | None = None


@attrs.frozen(kw_only=True)
class LegResult:
    label: str
    exit_code: int
    scenarios: tuple[Scenario, ...]

    @property
    def scored(self) -> tuple[Scenario, ...]:
        return tuple(s for s in self.scenarios if s.unscored_reason is None)

    @property
    def failing(self) -> tuple[Scenario, ...]:
        return tuple(s for s in self.scenarios if not s.passed)

    @property
    def ok(self) -> bool:
        """The harness exited 0 and every scored scenario passed (and at least one ran)."""
        return self.exit_code == 0 and bool(self.scenarios) and all(s.passed for s in self.scored)

    def summary(self, reason_chars: int = 160) -> str:
        passed = sum(s.passed for s in self.scenarios)
        notes = [f"harness exit {self.exit_code}"]
        if len(self.scored) != len(self.scenarios):
            notes.insert(0, f"scored {sum(s.passed for s in self.scored)}/{len(self.scored)}")
        if not self.scenarios:
            notes.append("NO RESULTS: the harness ran nothing")
        lines = [f"{self.label}: {passed}/{len(self.scenarios)} scenarios pass ({'; '.join(notes)})"]
        for scenario in self.failing:
            tag = f" [unscored: {scenario.unscored_reason}]" if scenario.unscored_reason else ""
            reason = " ".join(scenario.failures[0].split()) if scenario.failures else "failed"
            lines.append(f"  FAIL {scenario.name}{tag}: {reason[:reason_chars]}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "exit_code": self.exit_code, "ok": self.ok,
                "scenarios": [attrs.asdict(s) for s in self.scenarios]}


def read_leg(out_dir: Path, console: str, *, label: str, exit_code: int) -> LegResult:
    folders = _scenario_folders(out_dir)
    listed, unscored = _read_console(console)
    names = listed + sorted(name for name in folders if name not in listed)
    scenarios = tuple(_read_scenario(name, folders.get(name), unscored.get(name)) for name in names)
    return LegResult(label=label, exit_code=exit_code, scenarios=scenarios)


def _scenario_folders(out_dir: Path) -> dict[str, Path]:
    """Scenario name -> its newest result folder."""
    newest: dict[str, tuple[str, Path]] = {}
    if not out_dir.is_dir():
        return {}
    for folder in out_dir.rglob("*"):
        match = FOLDER.match(folder.relative_to(out_dir).as_posix()) if folder.is_dir() else None
        if match and (match["scenario"] not in newest or match["time"] > newest[match["scenario"]][0]):
            newest[match["scenario"]] = (match["time"], folder)
    return {name: folder for name, (_, folder) in newest.items()}


def _read_console(console: str) -> tuple[list[str], dict[str, str]]:
    listed: list[str] = []
    unscored: dict[str, str] = {}
    in_summary = in_unscored = False
    for raw in console.splitlines():
        line = COLOUR.sub("", raw)
        if line.strip() == "=== SUMMARY ===":
            in_summary, listed = True, []
            continue
        if UNSCORED_HEAD.match(line):
            in_unscored = True
            continue
        if in_unscored:
            if match := UNSCORED_LINE.match(line):
                unscored[match["scenario"]] = match["reason"]
                continue
            in_unscored = False
        if in_summary:
            if match := SUMMARY_LINE.match(line):
                listed.append(match["scenario"])
            elif line.startswith("Total:"):
                in_summary = False
    return listed, unscored


def _read_scenario(name: str, folder: Path | None, unscored_reason: str | None) -> Scenario:
    def failed(why: str) -> Scenario:
        return Scenario(name=name, passed=False, failures=(why,), unscored_reason=unscored_reason)

    if folder is None or not (folder / "checks.json").is_file():
        return failed("(no checks.json): the harness recorded no checks for this scenario")
    try:
        checks = json.loads((folder / "checks.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return failed(f"(unreadable checks.json): {exc}")
    statuses = Counter(str(check.get("status")) for check in checks)
    failures = tuple(f"{c.get('id', '?')}: {c.get('errorMessage') or c.get('description') or ''}"
                     for c in checks if c.get("status") == "FAILURE")
    return Scenario(name=name, passed=not statuses["FAILURE"], failures=failures, unscored_reason=unscored_reason)
