"""One provider's facts (``Profile``), and a parsed model id (``ModelRef``).

Everything known about a provider apart from its request code; the generic machinery in
``core`` takes it as input. Profiles live in ``providers/profiles/``, registered in
``providers/catalog.py``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.capabilities import Capabilities, lookup
from ..core.cost import CostRule
from ..core.history import Replay
from ..core.presets import ReasoningPlan, Row, plan

Listing = list[tuple[Any, bool]]
"""A server's models: (name as listed, whether the server itself says the model thinks)."""


@dataclass(frozen=True)
class Probes:
    """Short probes of a running local server (a failed probe tells nothing): its models, one
    model's facts (Ollama ``/api/show``), whether a model is loaded (``/api/ps``; None: unknown)."""

    models: Callable[[str], Awaitable[Listing]]
    show: Callable[[str, str], Awaitable[dict[str, Any] | None]] | None = None
    loaded: Callable[[str, str], Awaitable[bool | None]] | None = None


@dataclass(frozen=True)
class EndReasoning:
    """A server's way to end the reasoning of a running stream (``providers/control.py``)."""

    path: str
    """Under the base URL (``/chat/completions/control``)."""
    arm: Mapping[str, Any]
    """Sent with the request: the server allows the control only for a request that asked."""
    action: Mapping[str, Any]
    """The control request's fields besides the completion id and the model."""

    def body(self, completion_id: str, model: str) -> dict[str, Any]:
        # ``model`` routes the control in llama-server's router mode; one model ignores it
        return {"id": completion_id, "model": model, **self.action}


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
    """On the user's machine: no key, no price, family rules on names, longer waits."""
    loads_models: bool = False
    """The wait before the first byte can be the server loading the named model."""
    start_hint: str = ""
    """What to start when nothing listens at the base URL."""
    bare_host_port: int | None = None
    """The port of a bare host (``OLLAMA_HOST=0.0.0.0``), as the server's own tools read it; a
    missing host then means this machine (``:11434``)."""
    key_homes: tuple[str, ...] = ()
    """More addresses where the env key belongs."""
    own_server_key: bool = False
    """The key is the user's own server's, so it goes to any address (``providers/address.py``)."""
    snapshot_id: str | None = None
    """The provider's id in the shipped models.dev capability data (None: not listed there)."""
    cost: CostRule | None = None
    """By default a hosted provider's snapshot id (genai-prices names it so); None when local."""
    replay: Replay | None = None
    """What its earlier ``--chat`` turns send back besides the answer; None: the answer only."""
    probes: Probes | None = None
    openai_path: str = ""
    """Where the server also speaks Chat Completions, under its default address (Ollama
    ``/v1``): a Chat Completions provider pointed there is told that this one honours presets."""
    end_reasoning: EndReasoning | None = None
    """How to end a running stream's reasoning (Answer now with no second request), where the
    server has it (``providers/control.py``); None: Answer now asks again."""
    resume: str | None = None
    """How it goes on from prefilled reasoning (``think(resume_from=...)``, ``providers/resume``):
    ``completion`` (the chat prompt rendered by the server, then a raw completion of it and the
    reasoning: llama-server), ``final_message`` (a last assistant turn the server continues:
    vLLM's ``continue_final_message``); None: it cannot, and says so."""
    notice: str = ""
    """Said at the start of every run (the demo server's nature)."""
    hints: Mapping[int, str] = field(default_factory=dict)
    """HTTP status -> what to do, beyond the protocol's own explanation (``{message}``)."""
    # The dialect inside Chat Completions (``providers/openai_chat.py`` reads these):
    tokens_field: str = "max_tokens"
    """The request field of the output cap (OpenAI: ``max_completion_tokens``)."""
    reasoning_text: bool = True
    """False: the stream carries only a reasoning token count, said once (OpenAI)."""
    sampling_on_reasoning: bool = True
    """Reasoning models take a temperature; False: it is dropped with a warning (OpenAI)."""
    thinking_ignores_temperature: bool = False
    """A temperature is sent but ignored while the model thinks, with a warning (DeepSeek)."""
    keeps_reasoning: tuple[str, ...] = ()
    """The ``chat_template_kwargs`` that make a template keep or drop earlier turns' reasoning
    (Qwen 3.5+ ``preserve_thinking``): sent with a chat's earlier turns, true exactly when
    their reasoning goes back (``--history``, the ``replay`` rule)."""
    efforts: tuple[str, ...] = ()
    """The efforts its API now documents for every model that takes one, over an older
    snapshot's list (a user's ``override`` still wins)."""

    def __post_init__(self) -> None:
        if self.cost is None and not self.local and self.snapshot_id:
            object.__setattr__(self, "cost", CostRule(self.snapshot_id))

    def row(self, caps: Capabilities) -> Row:
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
        caps = lookup(self.id, model, discovered, snapshot_id=self.snapshot_id, family=self.local)
        if self.efforts and caps.efforts and "override" not in caps.sources:
            caps = replace(caps, efforts=self.efforts)
        return caps


@dataclass(frozen=True)
class ModelRef:
    """A parsed ``PROVIDER:MODEL`` id."""

    full: str
    provider: Profile
    name: str
