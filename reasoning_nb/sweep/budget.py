"""The spend cap (``max_usd``): a run is asked only if what was spent, what the runs still
going may cost, and what this one may cost stay within the cap.

What a run may cost is the most a run of the same model and preset has cost so far (else of
the same model). Before a billed model has a price, its runs go one at a time, each only while
some of the cap is left, so the first one's cost is known before the next is asked. A model its
provider does not bill (a local one) costs nothing and is never held back.
"""

from __future__ import annotations

from collections.abc import Iterable

import anyio


class Budget:
    def __init__(self, max_usd: float | None, free: Iterable[str] = ()) -> None:
        """``free``: the models whose provider bills nothing."""
        self.max_usd = max_usd
        self.spent = 0.0
        self._going = 0.0  # reserved for the runs in flight
        self._most: dict[tuple[str, str], float] = {}
        self._most_of_model: dict[str, float] = dict.fromkeys(free, 0.0)
        self._pricing: dict[str, anyio.Event] = {}  # a model's first run, in flight

    async def admit(self, model: str, preset: str) -> float | None:
        """The amount reserved for one run (give it back with ``settle``), or None: the run
        would pass the cap, and the sweep stops here."""
        if self.max_usd is None:
            return 0.0
        while True:
            guess = self._most.get((model, preset), self._most_of_model.get(model))
            if guess is not None:
                break
            pricing = self._pricing.get(model)
            if pricing is None:  # this run finds the price: only while some of the cap is left
                if self.spent + self._going >= self.max_usd:
                    return None
                self._pricing[model] = anyio.Event()
                return 0.0
            await pricing.wait()
        if self.spent + self._going + guess > self.max_usd:
            return None
        self._going += guess
        return guess

    def settle(
        self, model: str, preset: str, reserved: float, *, spent: float, cost: float | None
    ) -> None:
        """A run ended: ``spent`` is what it billed now (0 for a replay), ``cost`` what such a
        run costs (a replay's recorded cost too; None: it failed before it could tell)."""
        self._going -= reserved
        self.spent += spent
        if cost is not None:
            self._most[model, preset] = max(cost, self._most.get((model, preset), 0.0))
            self._most_of_model[model] = max(cost, self._most_of_model.get(model, 0.0))
        pricing = self._pricing.pop(model, None)
        if pricing is not None:  # the waiting runs now know the price, or one of them finds it
            pricing.set()

    def release(self, model: str, preset: str, reserved: float) -> None:
        """A run admitted but never asked, or cut short before it could tell its cost."""
        self.settle(model, preset, reserved, spent=0.0, cost=None)
