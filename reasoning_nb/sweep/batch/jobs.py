"""One request of a batch: made as a live run makes it, and read back into a ``Row``.

The body comes from the provider protocol's own ``build_request`` (the same plan of the preset,
the same warnings), with ``stream: false``: a preset means in a batch what it means in a live
run. A result body is read by the protocol's ``read_body``, the stream parser fed whole, and
folded into a ``Trace`` like any run's; a batch has no per-request timing, so the trace has
none, and its cost is the estimate at the batch price.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field
from typing import Any

from ...core.cost import estimate as estimate_cost
from ...core.events import Event
from ...core.trace import Trace
from ...errors import ConfigError, ProviderError, ReasoningNBError
from ...options import RunOptions
from ...providers import catalog
from ...providers.base import RequestContext
from ...providers.protocols import protocol_module
from ...providers.transport import HttpRequest
from ...run import Run
from ...store.keys import address_of, entry_key
from ...store.recording import Recorder
from ..rows import Row

PROTOCOLS = {"openai_responses": "openai", "anthropic": "anthropic"}
"""Wire protocol -> the batch service that speaks it (``services``)."""
BATCH_PRICE = 0.5
"""Both services bill a batch at half the price of the same requests made live."""


@dataclass
class Job:
    """What one request's result needs to become a row again, after a kernel restart too (it is
    saved with the batch, ``store.batches``): never the API key."""

    custom_id: str
    prompt_id: int
    prompt: str
    model: str
    preset: str
    budget_tokens: int | None = None
    max_tokens: int | None = None
    sent: dict[str, Any] = field(default_factory=dict)
    """The reasoning fields of the body, as a live run's ``trace.request`` holds them."""
    warnings: list[str] = field(default_factory=list)
    """What the plan and the request builder said (a dropped temperature, a clamped effort)."""
    expected: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    entry: str | None = None
    """The replay cache's key of the live request (``store.keys.entry_key``): a batch result
    is kept under it, so the same run asked again, live or in a batch, replays."""
    cache: bool = False
    """Keep its complete result in the replay cache (the run's ``cache`` or ``refresh``)."""
    sample: int = 0
    """``Prompt.sample``: a repeated prompt's own key in the replay cache."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Job:
        return cls(**data)


def service_of(model: str) -> str | None:
    """The batch service a model's requests can go through (``openai``, ``anthropic``), or None."""
    return PROTOCOLS.get(catalog.parse_model(model).provider.protocol)


def context(job: Job, base_url: str, api_key: str | None = None, messages=()) -> RequestContext:
    """The request context of ``job``, as ``Run`` builds it for a hosted provider (they have no
    runtime probes, so the capabilities are the shipped data's)."""
    ref = catalog.parse_model(job.model)
    info = ref.provider
    caps = info.capabilities(ref.name, None)
    plan = info.plan(job.preset, job.budget_tokens, caps, max_tokens=job.max_tokens)
    return RequestContext(
        ref=ref,
        base_url=base_url,
        messages=list(messages),
        plan=plan,
        caps=caps,
        api_key=api_key,
        max_tokens=job.max_tokens,
        temperature=None,
    )


def prepare(
    job: Job, options: RunOptions, base_url: str, api_key: str | None
) -> tuple[Job, HttpRequest]:
    """The job with what its request sends, and the request (its body not streamed)."""
    run = Run(job.prompt, options, model=job.model, preset=job.preset)  # checks, and messages
    ref = catalog.parse_model(job.model)
    ctx = context(job, base_url, api_key, run.messages())
    ctx.temperature = options.temperature
    proto = protocol_module(ref.provider.protocol)
    request = proto.build_request(ctx)
    job.entry = entry_key(
        ref.provider.id, address_of(base_url), ref.full, request.body, job.sample
    )
    job.cache = bool(options.cache or options.refresh)
    request.body = {**(request.body or {}), "stream": False}
    keys = (*ctx.plan.fields, *proto.REASONING_KEYS)
    job.sent = copy.deepcopy({k: request.body[k] for k in keys if k in request.body})
    job.warnings = [*ctx.plan.warnings, *ctx.warnings]
    return job, request


def trace_of(
    job: Job,
    *,
    body: dict[str, Any] | None,
    error: str | None,
    status: str = "error",
    base_url: str,
    submitted_at: str,
    recorder: Recorder | None = None,
) -> Trace:
    """The trace of one result: ``body`` read as the protocol reads a response, or ``error``
    (``status`` says which kind: ``error``, or ``cancelled`` for a request the batch never ran);
    ``recorder`` gets its events, for the replay cache."""
    ref = catalog.parse_model(job.model)
    trace = Trace(
        model=ref.full,
        provider=ref.provider.id,
        preset=job.preset,
        budget_tokens=job.budget_tokens,
        prompt=job.prompt,
        started_at=submitted_at,  # prices are looked up by it: the batch's day
    )
    trace.request = dict(job.sent)
    for text in job.warnings:
        trace.warn(text)
    if body is None:
        trace.finish(status, error=error or "The batch service gave no result for this request.")
    else:
        try:
            for event in _events(job, body, base_url):
                trace.fold(event)
                if recorder is not None:
                    recorder.add(event)
            trace.finish()
        except ReasoningNBError as exc:
            trace.finish("error", error=str(exc))
    trace.timing = dict.fromkeys(trace.timing)  # the fold timed the reading, not the model
    trace.cost = batch_price(estimate_cost(trace, ref.provider.cost))
    return trace


def _events(job: Job, body: dict[str, Any], base_url: str) -> list[Event]:
    proto = protocol_module(catalog.parse_model(job.model).provider.protocol)
    try:
        return proto.read_body(context(job, base_url), body)
    except ReasoningNBError:
        raise
    except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
        raise ProviderError(
            f"The batch service sent a result of a shape this client cannot read "
            f"({type(exc).__name__}); check that the base URL points at the provider's API."
        ) from None


def batch_price(cost: dict[str, Any] | None) -> dict[str, Any] | None:
    """A live price estimate at the batch rate (the source line says so)."""
    if not cost:
        return cost
    out = dict(cost)
    for key in ("usd", "input_usd", "output_usd"):
        if isinstance(out.get(key), int | float):
            out[key] = out[key] * BATCH_PRICE
    out["source"] = f"{out.get('source') or 'prices'} at the batch rate (half)"
    return out


def row_of(job: Job, trace: Trace, *, sweep_id: str, keep_reasoning: bool = True) -> Row:
    return Row.of(
        trace,
        sweep_id=sweep_id,
        prompt_id=job.prompt_id,
        expected=job.expected,
        keep_reasoning=keep_reasoning,
        extra=job.extra,
    )


def unsupported(models: list[str]) -> ConfigError:
    names = ", ".join(repr(m) for m in models)
    return ConfigError(
        f"batch=True sends requests through OpenAI's Batch API or Anthropic's Message Batches, "
        f"and {names} goes to neither: sweep those models without batch=True."
    )
