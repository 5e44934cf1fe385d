"""Counts of the differential cases run in this session (the issue's acceptance metrics),
printed at the end of the run by ``conftest.py``; torch-free so the conftest can import it."""
from __future__ import annotations

import collections
import json
import os

#: PLUGRAD_DIFF_COLLECT=path: record divergences as JSON lines there instead of failing
COLLECT = os.environ.get("PLUGRAD_DIFF_COLLECT")


class Stats:
    def __init__(self):
        self.cases = collections.Counter()     # device -> cases run
        self.bad = collections.Counter()       # (device, kind) -> cases with such a divergence
        self.known = collections.Counter()     # device -> cases whose divergences are all KNOWN
        self.by_op = collections.Counter()     # (op, kind) -> cases
        self.family = collections.Counter()    # (device, family) -> cases
        self.family_bad = collections.Counter()  # (device, family, kind) -> cases
        self.unexplained = collections.Counter()  # (device, kind) -> cases not in KNOWN

    def record(self, case, form, divs, unexplained):
        self.cases[case.device] += 1
        self.family[case.device, case.family] += 1
        for kind in sorted({d.kind for d in divs}):
            self.bad[case.device, kind] += 1
            self.by_op[case.op, kind] += 1
            self.family_bad[case.device, case.family, kind] += 1
        for kind in sorted({d.kind for d in unexplained}):
            self.unexplained[case.device, kind] += 1
        if divs and not unexplained:
            self.known[case.device] += 1
        if COLLECT and divs:
            with open(COLLECT, "a") as f:
                for d in divs:
                    f.write(json.dumps({"case": case.__dict__, "form": form, "kind": d.kind,
                                        "what": d.what, "detail": d.detail,
                                        "known": d not in unexplained}, default=str) + "\n")

    _COUNTERS = ("cases", "bad", "known", "by_op", "family", "family_bad", "unexplained")

    def dump(self) -> dict:
        """The counts as JSON-able lists, for an xdist worker to hand to the controller."""
        return {name: [[list(k) if isinstance(k, tuple) else k, n]
                       for k, n in getattr(self, name).items()] for name in self._COUNTERS}

    def merge(self, dumped: dict) -> None:
        """Add a worker's :meth:`dump` to these counts (the controller's summary)."""
        for name, items in dumped.items():
            counter = getattr(self, name)
            for k, n in items:
                counter[tuple(k) if isinstance(k, list) else k] += n

    def lines(self) -> list[str]:
        out = []
        for device, n in sorted(self.cases.items()):
            rates = ", ".join(f"{label} {self.bad[device, kind]} "
                              f"({self.bad[device, kind] / n:.2%})" for kind, label in (("wrong", "wrong results"),
                                                  ("error", "errors where torch succeeds"),
                                                  ("accepted", "accepted-invalid")))
            out.append(f"{device}: {n} cases; {rates}; {self.known[device]} cases diverge "
                       "only in KNOWN ways")
            for family in sorted({f for d, f in self.family if d == device}):
                m = self.family[device, family]
                out.append(f"  {family}: {m} cases; " + ", ".join(
                    f"{kind} {self.family_bad[device, family, kind] / m:.2%}"
                    for kind in ("wrong", "error", "accepted")))
        return out


STATS = Stats()
