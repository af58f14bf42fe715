"""One run: model id -> provider + plan -> request -> event stream, folded into a Trace.

Everything a view shows comes from ``Run.events()``; ``Run.trace`` is always the fold of what has
arrived, also after an error or a cancellation (its ``status`` says which).

With ``cache=True`` an identical earlier run is replayed instead: first by what was asked,
before any I/O, then by the exact request body. A replayed trace equals the recorded one (timing
and ``started_at`` too: it *is* that run) except ``trace.replay``.

Reasoning that repeats itself (``core.loops``) adds one ``Notice`` starting with
``LOOP_NOTICE``; with ``stop_on_loop=True`` the run also ends there, ``cancelled``, keeping what
arrived. A run whose text passes ``max_chars`` ends there too, ``truncated``: an endless stream
must not take all the memory (a run holds at most about three times its text, cache included).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import fields, replace
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import anyio

from .core import history, rescue
from .core.continuation import Continuation
from .core.cost import estimate as estimate_cost
from .core.events import Done, Event, Notice, ReasoningDelta, Waiting
from .core.loops import LOOP_NOTICE, LoopWatch
from .core.trace import Trace
from .errors import ConfigError, ProviderError, ReasoningNBError
from .options import RunOptions, check_sendable
from .providers import catalog, resume
from .providers import control as controls
from .providers.address import api_key_for, base_url_for, normalise
from .providers.base import RequestContext, StreamParser
from .providers.discovery import default_model, discovered_caps, model_loaded, native_hint
from .providers.profile import EndReasoning
from .providers.protocols import protocol_module
from .providers.transport import Clock, HttpRequest, Transport, drain
from .store import db as store
from .store.keys import address_of, ask_key, entry_key
from .store.recording import Recorder, replay, restored

LOADING = "loading model…"
FIRST_TOKEN = "waiting for the first token…"
"""What a run waits for before its first token (``Waiting``): a model to load, then the server
to begin its answer."""
CUT_NOTICE = (
    "The run was stopped at max_chars={:,} characters of reasoning and answer, keeping what "
    "arrived: pass a larger max_chars (or None) to let such a run go on."
)
REPLAY_LOOP_STOP = "The replay was stopped at the recorded loop, as stop_on_loop asks."
_ATTRIBUTES = tuple(f.name for f in fields(RunOptions) if f.name != "api_key")


class Run:
    """A prepared call; iterate ``events()`` once to perform it."""

    def __init__(
        self,
        prompt: str,
        options: RunOptions | None = None,
        *,
        history: Sequence[dict[str, Any]] = (),
        continuation: Continuation | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[Any]] = anyio.sleep,
        sample: int = 0,
        **keywords: Any,
    ):
        """``options``, or their fields as ``keywords`` (``Run(prompt, model=..., preset=...)``);
        each is also an attribute (``run.model``, ``run.preset``, ...), the key excepted.
        ``sample``: the n-th time the same run is asked on purpose (``store.keys``)."""
        if not isinstance(prompt, str):
            raise ConfigError("The prompt must be a string.")
        check_sendable("prompt", prompt)
        check_sendable("history", history)
        options = RunOptions(**keywords) if options is None else replace(options, **keywords)
        self.options = options
        for name in _ATTRIBUTES:
            setattr(self, name, getattr(options, name))
        self._api_key = options.api_key
        self.prompt, self.history, self.continuation = prompt, list(history), continuation
        self._sleep, self._sample = sleep, sample
        self._ask: str | None = None
        self._entry: str | None = None
        self._replayed: dict[str, Any] | None = None  # the recorded trace being replayed
        # Answer now on this stream (``end_reasoning``): the control, where the request armed it
        self._control: tuple[EndReasoning, str, str, dict[str, str]] | None = None
        self._parser: StreamParser | None = None
        self._reasoning_ended = False
        self._said: list[Notice] = []  # from outside the stream: yielded with the next event
        self.trace = Trace(
            model=options.model or "",
            preset=self.preset,
            budget_tokens=self.budget_tokens,
            prompt=prompt,
            clock=clock,
            continued=continuation.saved() if continuation else None,
        )

    def messages(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if self.system:
            out.append({"role": "system", "content": self.system})
        out.extend(self.history)
        prompt = self.prompt
        if self.continuation is not None:
            prompt = self.continuation.user_turn(prompt)
        out.append({"role": "user", "content": prompt})
        return out

    async def events(self) -> AsyncIterator[Event]:
        """Perform the call, yielding every event; the last one is ``Done(trace)``."""
        trace = self.trace.start()
        recorder = Recorder(trace.clock) if self.cache or self.refresh else None
        watch = LoopWatch()
        cut = False  # at max_chars
        try:
            # aclosing: closing this generator closes the HTTP response now, not at GC time
            async with aclosing(self._stream()) as stream:
                async for event in stream:
                    said = self._said  # (notices from outside the stream: rarely any)
                    if said:
                        self._said = []
                    for each in (event, *said, *self._loop_check(event, watch)):
                        trace.fold(each)
                        if recorder is not None:
                            recorder.add(each)
                        yield each
                    if watch.detected and self.stop_on_loop:
                        break  # aclosing closes the response: the server stops generating
                    if self.max_chars is not None and trace.chars > self.max_chars:
                        cut = True
                        notice = Notice(CUT_NOTICE.format(self.max_chars))
                        trace.fold(notice)
                        yield notice
                        break  # as above: the server stops generating
        except ConfigError as exc:
            self._ended(trace.finish("error", error=str(exc)))
            raise
        except ProviderError as exc:
            self._ended(trace.finish("error", error=exc.message))
            exc.trace = trace if (trace.reasoning or trace.answer) else None
            raise
        except (anyio.get_cancelled_exc_class(), KeyboardInterrupt, GeneratorExit):
            self._ended(trace.finish("cancelled"))
            raise
        looped = watch.detected and self.stop_on_loop
        trace.finish("cancelled" if looped else "truncated" if cut else None)
        rescue.warn_if_lost(trace, catalog.output_limit(trace.model))  # said in every view
        # a replay bills nothing new: it shows the recorded cost (restored below) or none
        profile = catalog.PROVIDERS.get(trace.provider)
        rule = profile.cost if profile is not None and self._replayed is None else None
        trace.cost = estimate_cost(trace, rule)
        stopped = looped or cut
        if self._replayed is not None and not stopped:  # stopped: the partial trace is the run
            self._restore(self._replayed)
        elif recorder is not None and trace.status == "complete" and self._entry is not None:
            # only complete runs: a cancelled, failed or cut-off one must never be served
            recording = recorder.recording(trace)
            at = trace.started_at
            await self._stored(store.save, self._entry, self._ask_key(), recording, at)
        self._ended(trace)
        yield Done(trace)

    async def end_reasoning(self) -> bool:
        """Answer now on this running stream: the server ends the reasoning here and the answer
        follows in the same stream, with no second request. False where it cannot (the server
        has no such control, the stream is not running or has no id yet, or the server refused):
        then ask again with the reasoning so far (``core.rescue.answer_now``)."""
        parser, armed = self._parser, self._control
        if armed is None or parser is None or not parser.stream_id:
            return False
        if self.trace.status != "running":
            return False
        if self._reasoning_ended:  # a second click: the server did it already
            return True
        control, base_url, model, headers = armed
        if not await controls.end(control, base_url, parser.stream_id, model, headers):
            return False
        self._reasoning_ended = True
        self._said.append(Notice(controls.NOTICE))
        return True

    def _loop_check(self, event: Event, watch: LoopWatch) -> tuple[Event, ...]:
        """The loop notice, once. A replay carries the recorded notice: ``stop_on_loop`` stops the
        replay where the run would have stopped."""
        if watch.detected:
            return ()
        if self._replayed is not None:
            if isinstance(event, Notice) and event.text.startswith(LOOP_NOTICE):
                watch.detected = True
                if self.stop_on_loop:
                    return (Notice(REPLAY_LOOP_STOP),)
            return ()
        if isinstance(event, ReasoningDelta) and watch.feed(event.text):
            return (Notice(watch.describe(stopped=self.stop_on_loop)),)
        return ()

    # -- the replay cache and the log ----------------------------------------------------------

    def _ask_key(self) -> str:
        if self._ask is None:
            options = {
                "preset": self.preset,
                "budget_tokens": self.budget_tokens,
                "max_tokens": self.max_tokens,
                "temperature": self.temperature,
            }
            if self.continuation is not None and self.continuation.prefix is not None:
                options["resume"] = self.continuation.prefix  # (the prompt goes on from it)
            self._ask = ask_key(
                model=self.model,
                address=address_of(self._asked_address()),
                messages=self.messages(),
                options=options,
                sample=self._sample,
            )
        return self._ask

    def _asked_address(self) -> str | None:
        """The base URL as known before any I/O; None where discovery or the embedded server
        decides it."""
        if self.model is None:
            return self.base_url and normalise(self.base_url)
        info = catalog.parse_model(self.model).provider
        if self.base_url is None and protocol_module(info.protocol).SERVER is not None:
            return None
        try:
            return base_url_for(info, self.base_url)  # the env var may point elsewhere
        except ConfigError:  # no default address: the run itself says so
            return None

    def _cache_call(self, action: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """A cache or log operation; a broken database costs a warning, never the run."""
        try:
            return action(*args, **kwargs)
        except (sqlite3.Error, OSError) as exc:
            self.trace.warn(store.unusable(exc, "; the run went on without it"))
            return None

    async def _stored(self, action: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``_cache_call`` in a worker thread: a write's commit waits on the disk, and on the
        event loop it would hold every other stream of the loop (a sweep's runs) until it ends."""
        return await anyio.to_thread.run_sync(partial(self._cache_call, action, *args, **kwargs))

    async def _replay(self, recording: dict[str, Any]) -> AsyncIterator[Event]:
        saved = recording["trace"]
        trace = self.trace
        trace.model, trace.provider = saved.get("model", ""), saved.get("provider", "")
        trace.replay = {"recorded_at": saved.get("started_at"), "pace": self.pace}
        self._replayed = saved
        async for event in replay(recording["timeline"], self.pace, self._sleep):
            yield event

    def _restore(self, saved: dict[str, Any]) -> None:
        """Make the trace the recorded one, keeping only the replay mark of its own."""
        recorded = Trace.from_dict(restored(saved, self.trace))
        for f in fields(Trace):
            if f.compare and f.name != "replay":
                setattr(self.trace, f.name, getattr(recorded, f.name))

    def _ended(self, trace: Trace) -> None:
        if store.log_enabled(self.log):
            self._cache_call(store.log_run, trace.to_dict())

    async def _stream(self) -> AsyncIterator[Event]:
        trace = self.trace
        lookups = self.cache and not self.refresh
        if lookups:
            recording = await self._stored(store.lookup, ask=self._ask_key())
            if recording is not None:  # asked before: no I/O at all
                async for event in self._replay(recording):
                    yield event
                return
        model = self.model or await default_model()
        ref = catalog.parse_model(model)
        info = ref.provider
        trace.model, trace.provider = ref.full, info.id
        prefix = self.continuation.prefix if self.continuation is not None else None
        if prefix is not None:
            resume.check(info)  # before the request: a provider that cannot says so
        proto = protocol_module(info.protocol)
        embedded = proto.SERVER if self.base_url is None else None
        if embedded is not None:
            if not embedded.started():
                yield Waiting(LOADING)  # the embedded demo server starts with its model loaded
            base_url = await embedded.start()
        else:
            base_url = base_url_for(info, self.base_url)
        api_key = api_key_for(info, base_url, self._api_key, self.api_key_env)
        if info.notice:
            yield Notice(info.notice)
        hint = native_hint(info, base_url, self.preset, self.budget_tokens)
        if hint:
            yield Notice(hint)
        found = await discovered_caps(info, base_url, ref.name, self.preset, self.budget_tokens)
        caps = info.capabilities(ref.name, found)
        plan = info.plan(self.preset, self.budget_tokens, caps, max_tokens=self.max_tokens)
        ctx = RequestContext(
            ref=ref,
            base_url=base_url,
            messages=self.messages(),
            plan=plan,
            caps=caps,
            api_key=api_key,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            prefix=prefix,
        )
        if resume.raw(ctx):
            ctx.rendered = await resume.render(ctx)
        request = proto.build_request(ctx)
        # the embedded server's port changes per start
        address = "embedded" if embedded is not None else address_of(base_url)
        self._entry = entry_key(info.id, address, ref.full, request.body, self._sample)
        if lookups:
            recording = await self._stored(store.lookup, entry=self._entry)
            if recording is not None:  # the same request, asked another way: not sent
                await self._stored(store.link, self._ask_key(), self._entry)  # next time: no I/O
                async for event in self._replay(recording):
                    yield event
                return
        for text in (*plan.warnings, *ctx.warnings):
            yield Notice(text)
        self._arm(info.end_reasoning, base_url, ref.name, request)
        transport = Transport(
            timeout=self.timeout,
            local=info.local,
            # a password in the base URL (https://user:pass@host) is a secret too
            secrets=tuple(filter(None, (api_key, urlsplit(base_url).password))),
            start_hint=info.start_hint,
            clock=Clock(sleep=self._sleep),  # the run waits its retries as it paces a replay
        )
        loaded = info.loads_models and await model_loaded(info, base_url, ref.name)
        waiting = LOADING if info.loads_models and not loaded else FIRST_TOKEN
        fallback_used = False
        while True:
            keys = (*plan.fields, *proto.REASONING_KEYS)
            trace.request = _sent_fields(request.body, keys)
            if self.history:  # what the earlier turns add to this request (an estimate)
                trace.request |= history.size(self.history, ref.name, info)
            try:
                async with transport.open(request) as sending:
                    if await sending.delivered():
                        yield Waiting(waiting)
                    response = await sending.response()
                    if waiting is LOADING:  # it answers: the model is loaded
                        yield Waiting(FIRST_TOKEN)
                    parser = self._parser = proto.Parser(ctx)
                    batches = transport.frames(response, request.framing)
                    async with aclosing(batches):
                        async for batch in batches:
                            for data, name in batch:
                                for event in _read(parser.feed, data, name):
                                    yield event
                                if parser.finished:
                                    break
                            if parser.finished:
                                await drain(batches)  # (so its connection is kept)
                                break
                    for event in _read(parser.close):
                        yield event
                    if not parser.finished:
                        yield Notice(rescue.STREAM_ENDED)
                        trace.finish_reason = trace.finish_reason or "length"
                    return
            except ProviderError as exc:
                # Parser errors quote the server (an in-band error may echo the key): scrub here.
                _set_message(exc, transport.scrub(exc.message))
                retry = None if fallback_used else proto.fallback(exc, request.body)
                if retry is None:
                    if exc.status is not None:
                        hint = info.hints.get(exc.status)  # the profile's word comes first
                        explained = (
                            hint.format(message=exc.message) if hint else proto.explain(exc, ctx)
                        )
                        if explained:
                            _set_message(exc, explained)
                    raise
                request.body, warning = retry
                fallback_used = True
                yield Notice(warning)

    def _arm(self, control: EndReasoning | None, base_url: str, model: str, request: HttpRequest):
        """Ask for the server's reasoning control with the request, where the profile names one
        (after the cache key: the arm changes no output)."""
        if control is not None:
            request.body = {**(request.body or {}), **control.arm}
            self._control = (control, base_url, model, dict(request.headers))


def _read(parse: Callable[..., list[Event]], *frame: Any) -> list[Event]:
    """A parser's events; valid JSON of a shape no parser expects (``choices: [null]``, a string
    where an object belongs) ends the run as a ProviderError that keeps what arrived, never as
    a raw AttributeError or TypeError."""
    try:
        return parse(*frame)
    except ReasoningNBError:
        raise
    except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
        shown = f" in {frame[0][:80]!r}" if frame and isinstance(frame[0], str) else ""
        raise ProviderError(
            f"The server sent a frame of a shape this client cannot read ({type(exc).__name__}"
            f"{shown}); what arrived is kept in the trace: check that the model id and base URL "
            "match the server."
        ) from None


def _set_message(exc: ProviderError, message: str) -> None:
    if message != exc.message:
        exc.message = message
        exc.args = (message,)


def _sent_fields(body: dict[str, Any] | None, keys: Sequence[str]) -> dict[str, Any]:
    """The reasoning-related fields as actually sent (after any fallback), for the trace."""
    body = body or {}
    return json.loads(json.dumps({k: body[k] for k in keys if k in body}))
