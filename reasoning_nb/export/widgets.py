"""Saved widget state (``nb.metadata.widgets``): keep only the models remaining views reach (a
``%%think`` widget saves ~37, which refer to each other as ``"IPY_MODEL_<id>"``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..core.schema import WIDGET_STATE, WIDGET_VIEW

_REF = "IPY_MODEL_"


def view_id(data: Any) -> str | None:
    view = data.get(WIDGET_VIEW) if isinstance(data, dict) else None
    model_id = view.get("model_id") if isinstance(view, dict) else None
    return model_id if isinstance(model_id, str) else None


def _refs(value: Any, found: set[str]) -> None:
    if isinstance(value, str):
        if value.startswith(_REF):
            found.add(value[len(_REF) :])
    elif isinstance(value, dict):
        for item in value.values():
            _refs(item, found)
    elif isinstance(value, list):
        for item in value:
            _refs(item, found)


def reachable(state: dict[str, Any], roots: Iterable[str]) -> set[str]:
    seen: set[str] = set()
    todo = [r for r in roots if r in state]
    while todo:
        model_id = todo.pop()
        if model_id in seen:
            continue
        seen.add(model_id)
        found: set[str] = set()
        _refs(state[model_id], found)
        todo.extend(f for f in found if f in state and f not in seen)
    return seen


def is_view_only(output: Any) -> bool:
    """A widget view with nothing else worth showing (the live half of a ``%%think`` cell)."""
    data = output.get("data") if isinstance(output, dict) else None
    if not isinstance(data, dict) or not view_id(data):
        return False
    plain = data.get("text/plain", "")
    return set(data) <= {WIDGET_VIEW, "text/plain"} and not "".join(plain).strip()


def kept_views(nb: Any) -> set[str]:
    ids = set()
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []) if isinstance(cell, dict) else []:
            model_id = view_id(output.get("data")) if isinstance(output, dict) else None
            if model_id:
                ids.add(model_id)
    return ids


def prune(
    nb: Any,
    *,
    scrub: Callable[[Any], Any] | None = None,
    warn: Callable[[str], None] = lambda _: None,
) -> int:
    """Keep only the models that the views still in the notebook reach (a saved ``%%think``
    widget also leaves orphans: panes it replaced while streaming), pass each through
    ``scrub``, and remove ``metadata.widgets`` when nothing is left. Returns models removed."""
    widgets = nb.get("metadata", {}).get("widgets")
    if widgets is None:
        return 0
    holder = widgets.get(WIDGET_STATE) if isinstance(widgets, dict) else None
    state = holder.get("state") if isinstance(holder, dict) else None
    if not isinstance(state, dict):
        warn("the notebook's saved widget state is malformed; it is left out")
        del nb["metadata"]["widgets"]
        return 0
    keep = reachable(state, kept_views(nb))
    gone = [model_id for model_id in state if model_id not in keep]
    for model_id in gone:
        del state[model_id]
    if scrub is not None:
        for model_id in state:
            state[model_id] = scrub(state[model_id])
    if not state:
        del nb["metadata"]["widgets"]
    return len(gone)
