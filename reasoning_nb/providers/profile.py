"""One provider's facts (``Profile``), and a parsed model id (``ModelRef``).

A profile is everything the package knows about one provider, apart from the request code: its
address and keys, which wire protocol speaks it, its preset rows, where its models' capability
facts come from, its cost rule, what its earlier turns send back, how a running server of it is
probed, and its dialect inside the protocol. The generic machinery takes these as input:
``core.presets.plan`` a row, ``core.capabilities.lookup`` the snapshot id, ``core.cost`` the
cost rule, ``core.history`` the replay rule. Profiles live in ``providers/profiles/`` (one
module per wire family) and are registered in ``providers/catalog.py``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.capabilities import Capabilities, lookup
from ..core.cost import CostRule
from ..core.history import Replay
from ..core.presets import ReasoningPlan, Row, plan

Listing = list[tuple[Any, bool]]
"""A server's models: (name as listed, whether the server itself says the model thinks)."""


@dataclass(frozen=True)
class Probes:
    """How a running server of a local provider is asked what it has (each probe is short and
    tells nothing when it fails): its models (``%think --list``, the default model), one model's
    runtime facts (Ollama ``/api/show``), whether it holds a model in memory (Ollama
    ``/api/ps``; None: cannot say)."""

    models: Callable[[str], Awaitable[Listing]]
    show: Callable[[str, str], Awaitable[dict[str, Any] | None]] | None = None
    loaded: Callable[[str, str], Awaitable[bool | None]] | None = None


@dataclass(frozen=True)
class Profile:
    id: str
    protocol: str
    """The module of ``providers/`` that speaks its wire protocol (``openai_chat``...)."""
    base_url: str | None
    presets: Row | Callable[[Capabilities], Row]
    """The preset row (``spec/presets.md``), or a choice of row by model."""
    base_url_env: str | None = None
    key_envs: tuple[str, ...] = ()
    name: str = ""
    """As hints name it (``Anthropic``), with ``example_model``, a model that runs there."""
    example_model: str = ""
    local: bool = False
    """Runs on the user's machine: no key required, no price, the family rules on model names
    apply, a longer wait is normal."""
    loads_models: bool = False
    """The server loads the model a request names, if it is not loaded yet: the wait before
    its first byte can be a model load."""
    start_hint: str = ""
    """What to start when nothing listens at the base URL."""
    bare_host_port: int | None = None
    """The port of an address given with no scheme and no port (``OLLAMA_HOST=0.0.0.0``), where
    the server's own tools read it so; such a provider also reads a missing host as this
    machine (``:11434``)."""
    key_homes: tuple[str, ...] = ()
    """Addresses besides the default and the base-URL variable where the env key belongs."""
    own_server_key: bool = False
    """The key variables hold the key of the user's own server, wherever it runs: they go to any
    address of this provider (see ``providers/address.py``)."""
    snapshot_id: str | None = None
    """The provider's id in the shipped models.dev capability data (None: not listed there)."""
    cost: CostRule | None = None
    """How its runs are priced; by default a hosted provider's by its snapshot id (genai-prices
    names it so), None for local servers."""
    replay: Replay | None = None
    """What its earlier ``--chat`` turns send back besides the answer; None: the answer only."""
    probes: Probes | None = None
    notice: str = ""
    """Said at the start of every run (the demo server's nature)."""
    hints: Mapping[int, str] = field(default_factory=dict)
    """HTTP status -> what to do, for errors the protocol's own explanation does not cover;
    ``{message}`` is the server's message."""
    # The dialect inside Chat Completions (``providers/openai_chat.py`` reads these):
    tokens_field: str = "max_tokens"
    """The request field of the output cap (OpenAI: ``max_completion_tokens``)."""
    reasoning_text: bool = True
    """The stream carries reasoning text; False: only its token count (OpenAI Chat Completions),
    said once."""
    sampling_on_reasoning: bool = True
    """Reasoning models take a temperature; False: it is dropped with a warning (OpenAI)."""
    thinking_ignores_temperature: bool = False
    """A temperature is sent but ignored while the model thinks, with a warning (DeepSeek)."""

    def __post_init__(self) -> None:
        if self.cost is None and not self.local and self.snapshot_id:
            object.__setattr__(self, "cost", CostRule(self.snapshot_id))

    def row(self, caps: Capabilities) -> Row:
        """The preset row for this model."""
        return self.presets if isinstance(self.presets, Row) else self.presets(caps)

    def plan(
        self,
        preset: str,
        budget_tokens: int | None,
        caps: Capabilities,
        *,
        max_tokens: int | None = None,
    ) -> ReasoningPlan:
        """The request fields that express ``preset`` / ``budget_tokens`` for this model."""
        return plan(self.id, self.row(caps), preset, budget_tokens, caps, max_tokens=max_tokens)

    def capabilities(self, model: str, discovered: dict | None = None) -> Capabilities:
        """What ``model`` can do, from this provider's sources (``core.capabilities``)."""
        return lookup(self.id, model, discovered, snapshot_id=self.snapshot_id, family=self.local)


@dataclass(frozen=True)
class ModelRef:
    """A parsed ``PROVIDER:MODEL`` id."""

    full: str
    provider: Profile
    name: str
