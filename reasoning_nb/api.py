"""``think()`` and ``astream()``: the plain-Python face of a run."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import anyio
from anyio.from_thread import start_blocking_portal

from .core import rescue
from .core.continuation import Continuation
from .core.events import Event
from .core.trace import Trace
from .errors import ConfigError
from .options import check_sendable, keywords
from .providers import catalog
from .run import Run


@keywords
async def astream(
    prompt: str,
    *,
    continue_from: Trace | None = None,
    hint: str = "",
    answer_now: bool = False,
    more_room: bool = False,
    resume_from: Trace | None = None,
    at: int | None = None,
    edit: str | None = None,
    history: Sequence[dict[str, Any]] = (),
    sleep: Callable[[float], Awaitable[Any]] = anyio.sleep,
    **options: Any,
) -> AsyncIterator[Event]:
    """Stream one call: ``ReasoningDelta`` / ``TextDelta`` / ``Usage`` / ... then ``Done(trace)``.

    Options are those of :func:`think`, and ``history``: earlier turns (chat messages) sent
    before the prompt; ``sleep``: how the run waits (a retry's Retry-After, a paced replay), a
    fake one in tests. A ``ProviderError`` raised mid-stream carries the partial trace in
    ``.trace``.
    """
    resume = _resume(resume_from, at, edit, options)
    run = _prepare(
        prompt, options, continue_from, hint, answer_now, more_room, history, sleep, resume
    )
    async with contextlib.aclosing(run.events()) as events:
        async for event in events:
            yield event


@keywords
def think(
    prompt: str,
    *,
    continue_from: Trace | None = None,
    hint: str = "",
    answer_now: bool = False,
    more_room: bool = False,
    resume_from: Trace | None = None,
    at: int | None = None,
    edit: str | None = None,
    **options: Any,
) -> Trace:
    """Ask a reasoning model and wait for the whole answer; returns the ``Trace``.

    ``model`` is ``PROVIDER:MODEL`` (``ollama:qwen3``, ``llamacpp:default``, ...); ``preset`` is
    ``auto | off | low | medium | high | max``; ``budget_tokens`` overrides the preset's budget.
    Works inside a running event loop (a Jupyter kernel): the call runs on its own loop in a
    worker thread. On KeyboardInterrupt the request is closed at once and the interrupt is
    re-raised with the partial trace (status ``cancelled``) in its ``.trace`` attribute.
    ``continue_from``: a stopped run's trace; its reasoning is sent back, with ``hint``, so
    the model picks up where it stopped (see ``core.steering``). When ``continue_from`` spent
    its tokens thinking and gave no answer (its warning says so), ``answer_now=True`` sends its
    reasoning back with an instruction to answer directly, with thinking off (``preset``
    ``auto`` means ``off`` here) and room for the answer (``max_tokens``: the one given, else
    at least ``core.rescue.ANSWER_ROOM``, within the model's output limit); ``more_room=True``
    asks its question again with a larger ``max_tokens`` (twice the budget, within the model's
    output limit) unless one is given.
    Both use ``continue_from``'s model unless ``model`` is given (see ``core.rescue``).
    ``resume_from``: a finished or stopped run's trace; the model goes on thinking from
    character ``at`` of its reasoning (its end by default), the text before that point replaced
    by ``edit`` when given, then answers. The new trace's reasoning starts with that text, and
    ``trace.continued`` says where it came from (see ``core.continuation``). Only providers that
    take prefilled reasoning can (llama.cpp, vLLM, ``local:``); the others raise a ConfigError
    that says so, and Continue with a hint (``continue_from``) asks again instead.

    A key from the environment goes only to its provider's own address (its default, or the one
    in ``OLLAMA_HOST`` / ``OPENAI_BASE_URL``); ``LLAMACPP_API_KEY`` and ``VLLM_API_KEY`` go to
    any address of their provider. For another address pass ``api_key=`` or ``api_key_env=``,
    the name of the variable that holds the key for it.

    ``cache=True`` replays a complete earlier run of the identical request instead of calling
    the model (``trace.replay`` says so); ``refresh=True`` asks again and replaces it. ``pace``:
    a replay arrives at once (``"instant"``) or at the recorded speed (``"recorded"``).
    ``log=True`` (or ``REASONING_NB_LOG=1``) adds the run to the log table of the same
    database (``python -m reasoning_nb cache info`` prints where it is).

    Reasoning that repeats itself adds a warning; ``stop_on_loop=True`` also ends the run there
    (status ``cancelled``, with what arrived). A run whose reasoning and answer pass
    ``max_chars`` characters is ended there (status ``truncated``, with a warning, keeping what
    arrived); ``None`` sets no limit.
    """
    resume = _resume(resume_from, at, edit, options)
    return run_blocking(
        _prepare(prompt, options, continue_from, hint, answer_now, more_room, resume=resume)
    )


def _resume(
    trace: Trace | None, at: int | None, edit: str | None, options: dict[str, Any]
) -> Continuation | None:
    """The continuation ``resume_from``, ``at`` and ``edit`` ask for, checked; the model is
    ``resume_from``'s unless ``model`` is given (the same model thinks on)."""
    if trace is None:
        if at is not None or edit is not None:
            raise ConfigError("at= and edit= need resume_from=, the trace to go on from.")
        return None
    if not isinstance(trace, Trace):
        raise ConfigError(f"resume_from must be a Trace, not {type(trace).__name__}.")
    end = len(trace.reasoning)
    if at is not None and not (isinstance(at, int) and not isinstance(at, bool) and 0 <= at <= end):
        raise ConfigError(
            f"at must be a character position in the reasoning, 0 to {end}, not {at!r}."
        )
    if edit is not None and not isinstance(edit, str):
        raise ConfigError(f"edit must be text, not {type(edit).__name__}.")
    check_sendable("edit", edit)
    continuation = Continuation.resume(trace, at, edit)
    options["model"] = options.get("model") or trace.model or None
    if not continuation.prefix:
        raise ConfigError(
            "There is no reasoning before that point to go on from: pick a later point, pass "
            "edit= with some text, or ask again without resume_from."
        )
    return continuation


def _prepare(
    prompt: str,
    options: dict[str, Any],
    continue_from: Trace | None,
    hint: str,
    answer_now: bool,
    more_room: bool,
    history: Sequence[dict[str, Any]] = (),
    sleep: Callable[[float], Awaitable[Any]] = anyio.sleep,
    resume: Continuation | None = None,
) -> Run:
    """The run a call asks for: its options, and how it continues ``continue_from`` (or goes on
    from ``resume``, a point in an earlier run's reasoning)."""
    continuation = None
    if resume is not None:
        if continue_from is not None or answer_now or more_room:
            raise ConfigError(
                "Pass resume_from= or continue_from= (with answer_now or more_room), not both: "
                "a run goes on from one point."
            )
        if options.get("preset") == "off":
            raise ConfigError(
                "resume_from goes on thinking, so it cannot run with preset='off': leave the "
                "preset out, or use continue_from= to ask again."
            )
        continuation = resume
    elif answer_now or more_room:
        if continue_from is None or (answer_now and more_room):
            raise ConfigError(
                "Pass answer_now=True or more_room=True (one of them) with continue_from=, the "
                "trace of the run that lost its answer."
            )
        options["model"] = options.get("model") or continue_from.model or None
        limit = catalog.output_limit(continue_from.model)
        if answer_now:  # max_tokens given here is the answer's own; else room of its own
            max_tokens = options.get("max_tokens") or rescue.answer_room(continue_from, limit)
            options["max_tokens"] = max_tokens
            continuation = rescue.answer_now(continue_from, max_tokens)
            if options.get("preset", "auto") == "auto":
                options["preset"] = rescue.ANSWER_NOW_PRESET
        else:
            max_tokens = options.get("max_tokens") or rescue.room(continue_from, limit)
            if max_tokens is None:
                raise ConfigError(rescue.AT_LIMIT)
            options["max_tokens"] = max_tokens
            continuation = rescue.more_room(continue_from, max_tokens)
    elif continue_from is not None:
        continuation = Continuation.of(continue_from, hint)
    return Run(prompt, history=history, continuation=continuation, sleep=sleep, **options)


def run_blocking(run: Run) -> Trace:
    """Drive a run to its end from synchronous code; Ctrl-C cancels it and keeps the trace."""

    async def consume() -> None:
        async for _ in run.events():
            pass

    try:
        call_blocking(consume)
    except KeyboardInterrupt as interrupt:
        interrupt.trace = run.trace  # type: ignore[attr-defined]
        raise
    return run.trace


def call_blocking(async_fn: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``async_fn`` on a fresh event loop in a worker thread and wait for it.

    A worker thread because the caller may already be inside a running loop (a Jupyter kernel).
    On KeyboardInterrupt the task is cancelled and awaited before the interrupt propagates, so
    the HTTP response is closed and the partial trace is final.
    """
    context = contextvars.copy_context()

    async def in_callers_context() -> Any:
        # Keep the caller's context variables (ipykernel keeps the parent message there, which
        # routes outputs to the right cell).
        return await context.run(asyncio.ensure_future, async_fn())

    with start_blocking_portal() as portal:
        future = portal.start_task_soon(in_callers_context)
        try:
            return future.result()
        except KeyboardInterrupt:
            future.cancel()
            with contextlib.suppress(BaseException):  # the cancellation we just asked for
                future.result()
            raise
