"""The live ``%%think`` view, measured on the wire: a recording comm (testing.md §3.1) replays
every message into a fake front end, and a fake clock drives the pacer. The texts are
``Output`` widgets holding markdown that the front end renders (test_browser.py shows it does)."""

from __future__ import annotations

import html
import itertools
import json
import random
import re
from dataclasses import dataclass, field

import comm
import pytest
from comm.base_comm import BaseComm
from markdown_it import MarkdownIt

from reasoning_nb.core.events import Finish, Notice, ReasoningDelta, Reclassify, TextDelta, Usage
from reasoning_nb.core.trace import Trace
from reasoning_nb.notebook.live_text import LiveText
from reasoning_nb.notebook.style import CONT_CLASS
from reasoning_nb.notebook.widget import Actions
from reasoning_nb.views.live_markdown import live_markdown
from reasoning_nb.views.markdown_blocks import TAIL_LIMIT, find_cut

MAX_RATE = 25.0
RATIO = 5
SLACK = 8_000
"""Update bytes allowed on top of 5x the text (the widget's own slack is 6 KB; the rest covers
the status line, pane title and Stop button at the end)..."""
PER_SECOND = 100
"""...and per second of a stream: each update wraps its text in ~100 bytes, so a slow model's
text could not show every second or two within a ratio alone (pacing.BYTE_RATE)."""


def budget(text: str, seconds: float) -> float:
    return RATIO * len(text.encode()) + SLACK + PER_SECOND * seconds


XSS = ("<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "[x](javascript:alert(1))")
UNSAFE = re.compile(r"<script|<img|<[a-z][^>]*\son\w+\s*=|href=[\"']?\s*javascript:", re.I)
_TRUSTING = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
_TRUSTING.validateLink = lambda url: True  # as a front end that renders an Output trusts it


def trusted_render(markdown: str) -> str:
    """What a front end that trusts the markdown (raw HTML on, every link kept) makes of it."""
    return _TRUSTING.render(markdown)


def plain(markdown: str) -> str:
    """The text a reader sees, tags dropped and spaces squashed."""
    return " ".join(html.unescape(re.sub(r"<[^>]*>", " ", trusted_render(markdown))).split())


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0  # a time like any other (Trace used to read 0.0 as "unset")

    def __call__(self) -> float:
        return self.t


@dataclass
class Wire:
    """Every comm message, with the fake time it left at."""

    clock: FakeClock
    msgs: list[tuple[float, str, str, dict]] = field(default_factory=list)

    def updates(self, since: int = 0) -> list[tuple[float, str, dict]]:
        return [
            (t, cid, d["state"])
            for t, kind, cid, d in self.msgs[since:]
            if kind == "comm_msg" and d.get("method") == "update"
        ]

    def front_end(self) -> dict[str, dict]:
        """Model id -> state, as a front end holds it after replaying all messages."""
        models: dict[str, dict] = {}
        for _, kind, cid, data in self.msgs:
            if kind == "comm_open":
                models[cid] = dict(data["state"])
            elif kind == "comm_msg" and data.get("method") == "update":
                models[cid].update(data["state"])
        return models

    def state(self, widget) -> dict:
        """The replayed front-end state of one widget."""
        return self.front_end()[widget.model_id]

    def shown(self, widget) -> str:
        """The markdown of the Outputs under ``widget`` in the replayed front end, in order."""
        return shown_markdown(self.front_end(), widget.model_id)


def shown_markdown(models: dict[str, dict], model_id: str) -> str:
    state = models[model_id]
    if "children" in state:
        return "".join(
            shown_markdown(models, c.removeprefix("IPY_MODEL_")) for c in state["children"]
        )
    if state["_model_name"] != "OutputModel":
        return ""
    assert len(state["outputs"]) <= 1  # one markdown display per Output, never a list
    return "".join(o["data"]["text/markdown"] for o in state["outputs"])


@pytest.fixture
def wire(monkeypatch):
    clock = FakeClock()
    rec = Wire(clock)

    class RecordingComm(BaseComm):
        def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
            rec.msgs.append((clock.t, msg_type, self.comm_id, data or {}))

    monkeypatch.setattr(comm, "create_comm", lambda **kw: RecordingComm(**kw))
    return rec


def make_widget(wire, **kw):
    from reasoning_nb.notebook.widget import ThinkWidget

    kw = {"model": "ollama:qwen3", "preset": "low", "max_rate": MAX_RATE, **kw}
    return ThinkWidget(clock=wire.clock, **kw)


def new_trace(wire, preset="low") -> Trace:
    return Trace(model="ollama:qwen3", preset=preset, clock=wire.clock).start()


def feed(widget, trace, events, clock=None, step=0.0, tick_every=0):
    for i, event in enumerate(events):
        trace.fold(event)
        widget.on_event(event)
        if clock is not None:
            clock.t += step
        if tick_every and i % tick_every == 0:
            widget.tick()


def idle(widget, clock, seconds=0.5, step=0.04):
    """The stream pauses; the magic keeps calling tick()."""
    for _ in range(round(seconds / step)):
        clock.t += step
        widget.tick()


def wire_bytes(state: dict) -> int:
    """An update's state as the kernel packs it (jupyter_client: JSON, ensure_ascii=False)."""
    return len(json.dumps(state, ensure_ascii=False).encode())


def sent_bytes(wire, start: int = 0) -> int:
    """The bytes of every update since ``start``, and the text Outputs were opened with (a
    block joined from the pieces of a forced cut opens holding it)."""
    total = 0
    for _, kind, _, data in wire.msgs[start:]:
        if kind == "comm_msg" and data.get("method") == "update":
            total += wire_bytes(data["state"])
        elif kind == "comm_open" and (markdown := markdown_of(data["state"])):
            total += len(markdown.encode())
    return total


def max_per_window(times, window=1.0):
    times, best, j = sorted(times), 0, 0
    for i, t in enumerate(times):
        while times[j] < t - window:
            j += 1
        best = max(best, i - j + 1)
    return best


# -- a synthetic stream ------------------------------------------------------------------------

WORDS = ("the", "model", "weighs", "each", "step", "and", "checks", "a", "small", "case")


def prose(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def synthetic_text(rng: random.Random, size: int, nasty: str) -> str:
    parts = [f"First, {nasty} appears here."]
    while sum(map(len, parts)) < size:
        roll = rng.random()
        if roll < 0.08:  # a code fence with blank lines inside: never split there
            body = "\n".join(f"x{i} = {i} * 2" if i % 4 else "" for i in range(rng.randint(5, 40)))
            parts.append(f"```python\ndef f():\n{body}\n```")
        elif roll < 0.16:
            parts.append("\n".join(f"- item {i}: {prose(rng, 5)}" for i in range(4)))
        elif roll < 0.2:
            parts.append(f"## Part {len(parts)}")
        elif roll < 0.22:  # one long paragraph: the tail must be cut anyway
            parts.append(" ".join(prose(rng, 12) for _ in range(40)))
        else:
            parts.append(
                "\n".join(prose(rng, rng.randint(4, 20)) for _ in range(rng.randint(1, 4)))
            )
    return "\n\n".join(parts)


def split(rng: random.Random, text: str, n: int) -> list[str]:
    cuts = sorted(rng.sample(range(1, len(text)), n - 1))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


def big_stream(rng: random.Random, total: int = 25_000):
    reasoning = synthetic_text(rng, 50_000, " ".join(XSS))
    answer = synthetic_text(rng, 20_000, " ".join(XSS))
    n_r = round(total * len(reasoning) / (len(reasoning) + len(answer)))
    return (
        [ReasoningDelta(t) for t in split(rng, reasoning, n_r)]
        + [TextDelta(t) for t in split(rng, answer, total - n_r)],
        reasoning,
        answer,
    )


# -- the big test ------------------------------------------------------------------------------


def test_big_stream_traffic(wire):
    events, reasoning, answer = big_stream(random.Random(42))
    w = make_widget(wire)
    trace = new_trace(wire)
    w.start_run(trace)
    w.set_phase("connecting")
    run = w.view
    start = len(wire.msgs)

    # (c) the first delta is on the wire at once, before the clock moves
    t_first = wire.clock.t
    feed(w, trace, events[:1])
    head = live_markdown(events[0].text, breaks=True)
    first = [t for t, _, s in wire.updates(start) if markdown_of(s) == head]
    assert first == [t_first], "the first delta was not sent at once"
    assert f"IPY_MODEL_{run.pane.model_id}" in wire.state(run.root)["children"]  # pane shown
    assert wire.state(run.pane)["selected_index"] == 0  # and open

    # (e) open and live while thinking, folded to a summary once the answer starts
    n_r = sum(isinstance(e, ReasoningDelta) for e in events)
    feed(w, trace, events[1:n_r], wire.clock, 0.0004, tick_every=100)
    idle(w, wire.clock)
    assert run.pane.selected_index == 0 and run.pane.titles == ("Thinking…",)
    assert wire.state(run.pane)["selected_index"] == 0
    assert run.reasoning.markdown == wire.shown(run.reasoning.box)
    assert run.reasoning.markdown  # live, not hidden
    feed(w, trace, events[n_r : n_r + 3], wire.clock, 0.0004)
    idle(w, wire.clock)
    assert run.pane.selected_index is None
    assert re.fullmatch(r"Thought for \d+\.\d s · ≈?[\d,]+ tokens?", run.pane.titles[0])
    folded = run.pane.titles[0]
    assert wire.state(run.pane)["selected_index"] is None
    assert tuple(wire.state(run.pane)["titles"]) == run.pane.titles
    feed(w, trace, events[n_r + 3 :], wire.clock, 0.0004, tick_every=100)
    for event in (Usage(output_tokens=17_000), Finish("stop")):
        trace.fold(event)
        w.on_event(event)
    trace.finish()
    w.finish(trace)

    # (d) the front end ends with exactly the text, block after block
    assert trace.reasoning == reasoning and trace.answer == answer
    assert wire.shown(run.reasoning.box) == live_markdown(reasoning, breaks=True)
    assert wire.shown(run.answer.box) == live_markdown(answer)
    # (the same label: its token estimate refined from the server's output total)
    time_part = folded.split(" · ")[0]
    assert run.pane.titles[0].startswith(f"{time_part} · ≈") and run.pane.selected_index is None

    # (a) rate, (b) bytes, (f) the tails at about 10 a second, each a single output
    ups = wire.updates(start)
    peak = max_per_window([t for t, _, _ in ups])
    update_bytes = sum(len(json.dumps(s)) for _, _, s in ups)
    open_bytes = sum(len(json.dumps(d)) for _, k, _, d in wire.msgs[start:] if k == "comm_open")
    text_bytes = len((reasoning + answer).encode())
    status_peak = max_per_window([t for t, cid, _ in ups if cid == w.status.model_id])
    text_times = sorted({t for t, _, s in ups if "outputs" in s})
    text_peak = max_per_window(text_times)
    blocks = len(run.reasoning._blocks) + len(run.answer._blocks)
    # the figures for the notes (shown with pytest -s)
    print(
        f"\n[widget] {len(events):,} deltas over {wire.clock.t:.1f} s simulated: "
        f"{len(ups)} updates, peak {peak}/s (text flushes {text_peak}/s, status line peak "
        f"{status_peak}/s), first update {1000 * (first[0] - t_first):.1f} ms after the first "
        f"delta; update bytes {update_bytes:,} = {update_bytes / text_bytes:.2f}x the text "
        f"({text_bytes:,} B); +comm_open {open_bytes:,} B "
        f"({(update_bytes + open_bytes) / text_bytes:.2f}x all told); {blocks} frozen blocks"
    )
    assert peak <= MAX_RATE + 1
    assert text_peak <= 11
    assert status_peak <= 5
    assert update_bytes <= RATIO * text_bytes
    assert update_bytes + open_bytes <= (RATIO + 1) * text_bytes

    # (g) no model markup reaches the front end live: not in what it renders either
    for *_, data in wire.msgs:
        for value in _strings(data):
            assert not UNSAFE.search(value), value[:200]
        if (markdown := markdown_of(data.get("state", {}))) is not None:
            assert not UNSAFE.search(trusted_render(markdown)), markdown[:200]
    assert "<script>alert(1)</script>" in plain(wire.shown(run.answer.box))


def markdown_of(state: dict) -> str | None:
    """The markdown an ``outputs`` update (or state) carries; None for any other."""
    if "outputs" not in state:
        return None
    return "".join(o["data"]["text/markdown"] for o in state["outputs"])


def test_only_the_tail_changes(wire):
    """An Output that froze is never sent again while the run lasts (the front end would
    re-render and re-typeset it), every Output holds a single markdown display, and all of them
    share one Layout."""
    events, _, _ = big_stream(random.Random(7), total=4_000)
    w = make_widget(wire)
    trace = new_trace(wire)
    w.start_run(trace)
    feed(w, trace, events, wire.clock, 0.002, tick_every=5)
    run = w.view
    opened = {cid: i for i, (_, kind, cid, _) in enumerate(wire.msgs) if kind == "comm_open"}
    sends: dict[str, list[int]] = {}
    for i, (_, kind, cid, data) in enumerate(wire.msgs):
        if kind == "comm_msg" and "outputs" in data.get("state", {}):
            assert len(data["state"]["outputs"]) <= 1
            sends.setdefault(cid, []).append(i)
    for text in (run.reasoning, run.answer):
        outs = [b.out.model_id for b in text._blocks] + [text.tail.model_id]
        assert len(outs) > 10
        for out, fresh in itertools.pairwise(outs):  # ``out`` froze when ``fresh`` opened
            assert sends.get(out) and max(sends[out]) < opened[fresh], out
    models = wire.front_end()
    layouts = {models[m.model_id]["layout"] for t in (run.reasoning, run.answer)
               for m in [t.tail, *(b.out for b in t._blocks)]}  # fmt: skip
    assert len(layouts) == 1


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _strings(v)


# -- slow streams: the byte budget -------------------------------------------------------------


def paragraphs(rng: random.Random, size: int, lines: bool = False, code: bool = False) -> str:
    """Prose in paragraphs of 600-1,500 chars (one line each, or lines of ~12 words), with
    some long Python fences when ``code``."""
    parts: list[str] = []
    while sum(map(len, parts)) < size:
        n = rng.randint(600, 1_500)
        if code and rng.random() < 0.4:
            body = "\n".join(
                f"    x{i} = step({i}, 'v', total + {i})  # {i}" for i in range(n // 40)
            )
            parts.append(f"```python\ndef f(total):\n{body}\n    return x0\n```")
            continue
        words: list[str] = []
        while sum(map(len, words)) + len(words) < n:
            words.append(rng.choice(WORDS))
            if rng.random() < 0.08:
                words[-1] += "."
        if lines:
            words = [w + ("\n" if i % 12 == 11 else "") for i, w in enumerate(words)]
        parts.append(" ".join(words).replace("\n ", "\n").capitalize() + ".")
    return "\n\n".join(parts)


MATH_STEPS = r"""Rayleigh: for particles much smaller than the wavelength the scattered
intensity goes as $I \propto \lambda^{-4}$, so compare blue at $\lambda_b = 450\,\mathrm{nm}$
with red at $\lambda_r = 700\,\mathrm{nm}$:

$$
\frac{I_b}{I_r} = \left(\frac{\lambda_r}{\lambda_b}\right)^4
= \left(\frac{700}{450}\right)^4 \approx 5.86
$$

The cross-section of a sphere of radius $a$ and index $n$ is
\[
\sigma_s = \frac{8\pi}{3} k^4 a^6 \left|\frac{n^2 - 1}{n^2 + 2}\right|^2,
\qquad k = \frac{2\pi}{\lambda}
\]
and along a path at zenith angle $\theta$ the optical depth is \(\tau = \tau_0 \sec\theta\), so
$T = e^{-\tau}$ drops fast near the horizon."""
"""A stretch of math-heavy reasoning: 10 math spans, inline and display, in all four spellings."""
MATH_ANSWER = r"""## Why the sky is blue

Sunlight is scattered by air molecules much smaller than its wavelength (Rayleigh scattering),
and the scattered intensity goes as

$$I(\lambda) \propto \frac{1}{\lambda^4}$$

so blue light ($\lambda \approx 450\,\mathrm{nm}$) is scattered about
$\left(700/450\right)^4 \approx 5.9$ times more than red ($\lambda \approx 700\,\mathrm{nm}$).

| colour | $\lambda$ (nm) | scattering vs red |
|---|---|---|
| violet | 400 | $9.4\times$ |
| blue | 450 | $5.9\times$ |
| green | 530 | $3.0\times$ |
| red | 700 | $1.0\times$ |

The sky is not violet: the Sun emits less violet, the eye is less sensitive to it, and the
cross-section
\[
\sigma_s = \frac{8\pi}{3} k^4 a^6 \left|\frac{n^2 - 1}{n^2 + 2}\right|^2
\]
depends on the refractive index \(n\) as well as on $k = 2\pi/\lambda$.

```python
for name, nm in [("violet", 400), ("blue", 450), ("green", 530), ("red", 700)]:
    print(f"{name:>6}: {(700 / nm) ** 4:4.1f}x")
```

At sunset the path through the air grows as $\sec\theta$, the optical depth
$\tau = \tau_0 \sec\theta$ rises, and the transmitted light $T = e^{-\tau}$ loses its blue:
the Sun looks red, and at $\theta = 90^\circ$ it is weakest."""
"""A math-heavy answer: 16 math spans (inline and display), a table and a code block."""


def math_heavy(seed: int, short: bool = False) -> tuple[str, str]:
    """A math-heavy run the size of a prose one (8 KB of reasoning, 4 KB of answer: 14 KB in
    all), or with less prose around the same math (``short``: 11 KB, where a cell's fixed
    bytes weigh more): prose reasoning in lines, then :data:`MATH_STEPS`; :data:`MATH_ANSWER`,
    then its explanation."""
    reasoning = paragraphs(random.Random(seed), 7_000 if short else 8_000, lines=True)
    explanation = paragraphs(random.Random(seed + 1), 2_000 if short else 2_800)
    return f"{reasoning}\n\n{MATH_STEPS}", f"{MATH_ANSWER}\n\n{explanation}"


@dataclass
class SlowRun:
    text: str
    seconds: float
    updates: list[tuple[float, str, dict]]
    progress: list[float]  # fake times at which more text became visible
    widget: object

    sent: int  # bytes: see sent_bytes

    @property
    def ratio(self) -> float:
        return self.sent / len(self.text.encode())

    @property
    def max_gap(self) -> float:
        times = [0.0, *self.progress, self.seconds]
        return max(b - a for a, b in itertools.pairwise(times))


def slow_run(wire, rate: float, text: str, kind=TextDelta, size: int = 4) -> SlowRun:
    """Stream ``text`` in deltas of ``size`` chars, ``rate`` a second, ticking after each."""
    w = make_widget(wire)
    trace = new_trace(wire)
    w.start_run(trace)
    start = len(wire.msgs)
    live = w.view.answer if kind is TextDelta else w.view.reasoning
    progress, shown = [], 0
    for i in range(0, len(text), size):
        event = kind(text[i : i + size])
        trace.fold(event)
        w.on_event(event)
        if (now := len(live.markdown)) > shown:
            progress.append(wire.clock.t)
            shown = now
        wire.clock.t += 1 / rate
        w.tick()
    seconds = wire.clock.t
    trace.finish()
    w.finish(trace)
    assert wire.shown(live.box) == live_markdown(text, breaks=kind is ReasoningDelta)
    return SlowRun(text, seconds, wire.updates(start), progress, w, sent_bytes(wire, start))


def report(name: str, run: SlowRun) -> str:
    n = len(run.updates)
    return (
        f"\n[widget] {name}: {len(run.text):,} chars over {run.seconds:.0f} s: {n} updates "
        f"({n / run.seconds:.1f}/s), text visible anew {len(run.progress) / run.seconds:.1f}/s "
        f"(longest wait {run.max_gap:.2f} s), update bytes {run.ratio:.2f}x the text"
    )


@pytest.mark.parametrize("kind", [TextDelta, ReasoningDelta])
def test_slow_stream_stays_within_the_byte_budget(wire, kind):
    """2,000 deltas of 4 chars at 40 a second, paragraphs of 600-1,500 chars: each update
    resends the live tail, so without a byte budget this costs 14-44x the text. Within 5x it
    shows new text more than twice a second (it was 3 times within the 10x the HTML view
    had)."""
    text = paragraphs(random.Random(5), 8_000, lines=kind is ReasoningDelta)[:8_000]
    run = slow_run(wire, 40, text, kind)
    print(report(f"slow {kind.__name__} (2,000 deltas @40/s)", run))
    assert run.sent <= budget(text, run.seconds)
    assert max_per_window([t for t, _, _ in run.updates]) <= MAX_RATE + 1
    assert run.progress[0] == 0.0  # the first token at once
    assert run.max_gap <= 1.6  # and no long freezes: new text at least every 1.6 s
    assert len(run.progress) / run.seconds >= 2  # twice a second or more on average


MAX_WAIT = 2.5
"""Longest wait between visible text changes at any rate: a slow model never looks frozen."""


@pytest.mark.parametrize("rate", [5, 10, 40, 200, 5_000])
@pytest.mark.parametrize("content", ["prose", "lines", "code"])
def test_any_rate_stays_within_the_byte_budget(wire, rate, content):
    """Bytes within 5x the text (and 100 B/s), the rate cap, the first token at once, and the
    text moving every ``MAX_WAIT`` s at any rate: slow streams send short tails, less often."""
    text = paragraphs(random.Random(rate), 4_000, lines=content == "lines", code=content == "code")
    run = slow_run(wire, rate, text, ReasoningDelta if content == "lines" else TextDelta)
    print(report(f"{content} @{rate}/s", run))
    assert run.sent <= budget(text, run.seconds)
    assert max_per_window([t for t, _, _ in run.updates]) <= MAX_RATE + 1
    assert run.progress[0] == 0.0  # the first token at once
    assert run.max_gap <= MAX_WAIT


def test_short_answer_streams_token_by_token(wire):
    """The slack lets a short answer go token by token, also after a long silent start (during
    which the page counts the seconds: no message)."""
    w = make_widget(wire)
    trace = new_trace(wire)
    w.start_run(trace)
    w.set_phase("connecting")
    idle(w, wire.clock, seconds=60, step=0.1)  # a slow start
    status = [s["value"] for _, cid, s in wire.updates() if cid == w.status.model_id]
    assert len(status) <= 2 and 'class="reasoning-nb-clock"' in status[-1]
    # 5 tokens a second: slower than the pacing, so only the byte budget could hold one back
    seen = []
    for i in range(30):
        feed(w, trace, [TextDelta(f"word{i} ")], wire.clock, 0.2, tick_every=1)
        seen.append(plain(wire.shown(w.view.answer.box)))
    assert seen == [" ".join(f"word{k}" for k in range(i + 1)) for i in range(30)]


def test_the_clock_counts_in_the_page(wire):
    """While a run is live, the status line's time is a counter the page runs from the elapsed
    time the line was rendered at: it moves on while the text or the kernel is busy, and no
    message is sent for it. Once done, the line holds the final time as text."""
    from reasoning_nb.notebook.style import STYLE

    w = make_widget(wire)
    trace = new_trace(wire)
    w.start_run(trace)
    wire.clock.t += 3.25
    feed(w, trace, [ReasoningDelta("step one")])
    assert re.search(
        r'thinking… · <span class="reasoning-nb-clock" style="animation-delay:-3\.25s">'
        r"<span>3\.2 s</span></span>",
        w.status.value,
    ), w.status.value
    assert ".reasoning-nb-clock::after{content:counter(rn-s) '.' counter(rn-d) ' s'}" in STYLE
    feed(w, trace, [TextDelta("The answer " * 100)], wire.clock, 0.05)
    for _ in range(60):  # 30 s of answering at 2 tokens a second
        feed(w, trace, [TextDelta("and more. ")], wire.clock, 0.5, tick_every=1)
    clocks = [
        float(m.group(1))
        for _, cid, s in wire.updates()
        if cid == w.status.model_id and (m := re.search(r"animation-delay:-([\d.]+)s", s["value"]))
    ]
    assert clocks == sorted(clocks) and clocks[-1] > 20  # the figures keep coming, rarely
    assert max(b - a for a, b in itertools.pairwise(clocks)) < 15
    trace.finish()
    w.finish(trace)
    assert "reasoning-nb-clock" not in w.status.value


def test_meter_counts_what_goes_on_the_wire(wire):
    """The byte budget charges what the kernel really sends: every update, to the byte, and
    the text of Outputs opened holding it (joined blocks)."""
    w = make_widget(wire)
    start = len(wire.msgs)
    for preset in ("low", "high"):
        trace = new_trace(wire, preset)
        w.start_run(trace)
        text = paragraphs(random.Random(1), 3_000)
        events = [
            ReasoningDelta("hm " * 200),
            *(TextDelta(text[i : i + 5]) for i in range(0, 3_000, 5)),
        ]
        feed(w, trace, events, wire.clock, 0.01, tick_every=1)
        trace.finish()
        w.finish(trace)
    w.selector.set_state({"index": 0})  # as the front end does: no echo
    w.stop_button.click()
    ups = wire.updates(start)
    assert w.meter.msgs == len(ups) and w.view.number == 1
    assert w.meter.bytes == sum(wire_bytes(s) for *_, s in ups)
    assert w.meter.bytes + w.meter.opened_bytes == sent_bytes(wire, start)
    assert w.meter.opened_bytes  # (blocks were joined)
    assert w.pacer.spent == sent_bytes(wire, start)  # all of it charged


# -- behaviour ---------------------------------------------------------------------------------


def test_reclassify_moves_the_answer_into_the_pane(wire):
    w = make_widget(wire)
    trace = new_trace(wire)
    w.start_run(trace)
    feed(w, trace, [TextDelta("Let me think about **this**.\n\nStep one")], wire.clock, 1.0)
    w.tick()  # (a pause: the tail shows the word it held back)
    assert "Step one" in wire.shown(w.view.answer.box)
    feed(w, trace, [Reclassify(), TextDelta("The answer is 42.")], wire.clock, 1.0)
    w.tick()
    assert wire.shown(w.view.answer.box) == "The answer is 42."
    assert "Step one" in wire.shown(w.view.reasoning.box)
    trace.finish()
    w.finish(trace)
    assert wire.shown(w.view.reasoning.box) == live_markdown(trace.reasoning, breaks=True)
    assert "Step one" in trace.reasoning and trace.answer == "The answer is 42."


def test_hide_reasoning_sends_nothing_live_but_fills_at_finish(wire):
    w = make_widget(wire, hide_reasoning=True)
    trace = new_trace(wire)
    w.start_run(trace)
    feed(w, trace, [ReasoningDelta(f"secret step {i}\n\n") for i in range(50)], wire.clock, 0.1)
    assert not any("secret" in json.dumps(s) for _, _, s in wire.updates())
    assert w.view.pane.selected_index is None
    feed(w, trace, [TextDelta("Done.")], wire.clock, 0.1)
    trace.finish()
    w.finish(trace)
    assert wire.shown(w.view.reasoning.box) == live_markdown(trace.reasoning, breaks=True)
    assert w.view.pane.selected_index is None and w.view.pane.titles[0].startswith("Thought")


def test_fold_on_answer_off_keeps_the_pane_open(wire):
    w = make_widget(wire, fold_on_answer=False)
    trace = new_trace(wire)
    w.start_run(trace)
    feed(w, trace, [ReasoningDelta("step"), TextDelta("answer")], wire.clock, 1.0)
    w.tick()
    assert w.view.pane.selected_index == 0
    trace.finish()
    w.finish(trace)
    assert w.view.pane.selected_index == 0 and w.view.pane.titles[0].startswith("Thought for")


def test_no_reasoning_no_pane(wire):
    w = make_widget(wire)
    trace = new_trace(wire)
    w.start_run(trace)
    feed(w, trace, [TextDelta("just an answer")], wire.clock, 1.0)
    trace.finish()
    w.finish(trace)
    assert w.view.pane not in w.view.root.children
    assert wire.shown(w.body) == "just an answer"
    assert "done" in w.status.value and "tok/s" in w.status.value


def test_header_status_and_warnings_are_escaped(wire):
    w = make_widget(wire, model="<b>m</b>")
    trace = Trace(model="<b>m</b>", preset="low", clock=wire.clock).start()
    w.start_run(trace)
    feed(w, trace, [Notice("<img src=x onerror=alert(1)> clamped"), ReasoningDelta("hm")])
    wire.clock.t += 1
    w.tick()
    assert "&lt;b&gt;m&lt;/b&gt;" in w.model_label.value and "<b>" not in w.model_label.value
    assert "⚠ &lt;img" in w.status.value and "thinking" in w.status.value
    trace.finish("error", error="<script>x</script> boom")
    w.finish(trace)
    assert w.status.value.startswith("error · ")  # the error itself has a line of its own
    assert wire.state(w.view.error)["value"] == "✖ &lt;script&gt;x&lt;/script&gt; boom"
    assert f"IPY_MODEL_{w.view.error.model_id}" in wire.state(w.view.root)["children"]
    for _, _, data in wire.updates():
        assert not any(UNSAFE.search(v) for v in _strings(data))


def test_stop_and_preset_callbacks(wire):
    calls = []
    w = make_widget(wire, actions=Actions(stop=lambda: calls.append("stop"), rerun=calls.append))
    w.stop_button.click()  # disabled before a run: no call
    trace = new_trace(wire, preset="high")
    w.start_run(trace)  # follows the run's preset without calling back
    assert w.dropdown.value == "high" and not w.stop_button.disabled and calls == []
    w.stop_button.click()
    assert calls == ["stop"] and w.stop_button.disabled
    w.dropdown.value = "medium"
    assert calls == ["stop", "medium"]
    stop = f"IPY_MODEL_{w.stop_button.model_id}"  # (its id, while it has one)
    trace.finish("cancelled")
    w.finish(trace)
    assert w.stop_button.disabled and "stopped" in w.status.value  # (disabled: hidden)
    # ...and closed: a saved notebook keeps no Stop model; the next run has a new one
    assert w.stop_button.comm is None and stop not in wire.state(w.header)["children"]
    w.start_run(new_trace(wire))
    assert not w.stop_button.disabled and w.stop_button.comm is not None
    assert wire.state(w.header)["children"][2] == f"IPY_MODEL_{w.stop_button.model_id}"


def test_status_line_once_done_and_stop_only_while_running(wire):
    from reasoning_nb.notebook.style import STYLE

    """While thinking the status line carries the reasoning figures; once the pane's title sums
    them up, it does not repeat them: ``done · 4.0 s · ≈1 tok/s``. Stop shows only mid-run (the
    stylesheet hides it disabled: no message of its own); a run faster than 0.05 s reads
    ``<0.1 s``, not ``0.0 s``; the stylesheet is no state (the page asks Pin for it)."""
    w = make_widget(wire)
    assert w.stop_button.disabled and ".jupyter-button:disabled{display:none}" in STYLE
    trace = new_trace(wire)
    w.start_run(trace)
    assert not w.stop_button.disabled
    feed(w, trace, [ReasoningDelta("hmm " * 20)], wire.clock, 2.0)
    w.tick()
    first, _subject = w.status.value.split("<br>")  # (the second line: the live subject)
    assert re.fullmatch(r"thinking… · .+ s · reasoning ≈\d+ tokens", re.sub(r"<[^>]*>", "", first))
    feed(w, trace, [TextDelta("The answer.")], wire.clock, 2.0)
    trace.finish()
    w.finish(trace)
    assert re.fullmatch(r"done · \d\.\d s · ≈\d+ tok/s", w.status.value), w.status.value
    assert w.view.pane.titles[0].startswith("Thought for 2.0 s · ")
    assert w.stop_button.disabled
    fast = new_trace(wire)
    w.start_run(fast)
    feed(w, fast, [ReasoningDelta("a"), TextDelta("b")], wire.clock, 0.01)
    fast.finish()
    w.finish(fast)
    assert w.view.pane.titles[0].startswith("Thought for <0.1 s · ")
    assert w.selector.options[1][0] == "Run 2 · low · <0.1 s"
    assert wire.state(w.action_row.pin)["part"] == "pin"  # (the page asks it for the stylesheet)
    assert wire.state(w.action_row.pin)["offered"]  # under a run that ended


def test_history_selector_after_two_runs(wire):
    w = make_widget(wire)
    for preset, text in (("low", "First answer."), ("high", "Second answer.")):
        trace = new_trace(wire, preset)
        w.start_run(trace)
        feed(w, trace, [ReasoningDelta("hmm"), TextDelta(text)], wire.clock, 0.5)
        trace.finish()
        w.finish(trace)
        if preset == "low":  # one run: no selector (not even a hidden one: it would be saved)
            assert w.selector is None and len(wire.state(w.root)["children"]) == 3
    assert [t.preset for t in w.runs] == ["low", "high"]
    assert wire.state(w.root)["children"][1] == f"IPY_MODEL_{w.selector.model_id}"
    assert [label for label, _ in w.selector.options] == [
        "Run 1 · low · 1.0 s",
        "Run 2 · high · 1.0 s",
    ]
    first_root = w.view.root
    assert w.dropdown.value == "high"
    w.selector.value = 0  # the user picks run 1
    assert w.view.number == 1 and w.view.root is not first_root
    assert w.dropdown.options[wire.state(w.dropdown)["index"]] == "low"  # its preset
    assert len(w.runs) == 2  # ...shown, not run again
    assert wire.state(w.body)["children"] == [f"IPY_MODEL_{w.view.root.model_id}"]
    assert wire.shown(w.view.answer.box) == "First answer."
    assert "Second" not in wire.shown(w.body)
    assert "done" in w.status.value


def test_a_finished_run_off_screen_keeps_no_widgets(wire):
    """After a re-run the first run's widgets are closed (a saved notebook would keep its text
    once more: its trace has it); picked again, it is shown whole, and the run it replaces is
    closed in turn. The layout they share stays."""
    from ipywidgets.widgets.widget import _instances

    w = make_widget(wire)
    for preset, text in (("low", "First answer."), ("high", "Second answer.")):
        trace = new_trace(wire, preset)
        w.start_run(trace)
        feed(w, trace, [ReasoningDelta(f"thinking {preset}"), TextDelta(text)], wire.clock, 0.5)
        trace.finish()
        w.finish(trace)
        if preset == "low":
            first, open_after_one = w.view, len(_instances)
    second = w.view
    assert first.answer.tail.comm is None and first.root.comm is None
    assert len(_instances) - open_after_one == 2  # (the run selector and its style)
    assert w.layout.comm is not None and second.answer.tail.comm is not None
    w.selector.value = 0  # the user picks run 1: made again, whole
    assert w.view is first and first.root.comm is not None
    assert wire.shown(first.answer.box) == "First answer."
    assert wire.shown(first.reasoning.box) == "thinking low"
    assert wire.state(w.body)["children"] == [f"IPY_MODEL_{first.root.model_id}"]
    assert second.root.comm is None and w.layout.comm is not None
    w.selector.value = 1
    assert wire.shown(w.view.answer.box) == "Second answer." and first.root.comm is None


def test_a_run_the_static_twin_shows_keeps_no_text_in_the_widget(wire):
    """As the magic drives it: the run ends with no final render (``render=False``), its static
    twin is shown, then ``hand_over`` empties the body and closes the run's widgets, so a saved
    notebook holds its text once (the twin's HTML). An earlier run picked is made again whole
    (the twin shows the newest); picking the newest again empties the body once more."""
    w = make_widget(wire)
    views = []
    for preset, text in (("low", "First answer."), ("high", "Second answer.")):
        trace = new_trace(wire, preset)
        w.start_run(trace)
        feed(w, trace, [ReasoningDelta(f"thinking {preset}"), TextDelta(text)], wire.clock, 0.5)
        row = w.action_row
        assert row.box.children == (row.pin,) and not row.pin.offered  # (idle: hidden)
        trace.finish()
        mark = len(wire.msgs)
        w.finish(trace, render=False)
        assert not [u for _, cid, u in wire.updates(mark) if "outputs" in u]  # no final render
        assert wire.state(w.body)["children"] == [f"IPY_MODEL_{w.view.root.model_id}"]
        w.hand_over(trace)
        views.append(w.view)
        assert wire.state(w.body)["children"] == [] and w.view.answer.tail.comm is None
        assert w.view.root.comm is None and w.view.trace is trace
        assert "done" in w.status.value and w.action_row.pin.offered
    first, second = views
    from reasoning_nb.notebook import style

    assert f".{style.TEXT_CLASS})" in style.LIVE_PAIRING  # (the text it pairs by)
    assert style.LIVE_PAIRING in style.STYLE and style.LIVE_PAIRING not in style.PAIRING_STYLE
    w.selector.value = 0  # the user picks run 1: made again, whole, in the widget
    assert w.view is first and wire.shown(first.answer.box) == "First answer."
    assert wire.state(w.body)["children"] == [f"IPY_MODEL_{first.root.model_id}"]
    w.selector.value = 1  # the twin's run: the body empties, run 1 is closed again
    assert w.view is second and wire.state(w.body)["children"] == []
    assert first.root.comm is None and second.root.comm is None


def test_rerun_before_finish_keeps_both_runs(wire):
    w = make_widget(wire)
    first = new_trace(wire)
    w.start_run(first)
    feed(w, first, [TextDelta("partial")])
    second = new_trace(wire, "high")
    w.start_run(second)  # the magic re-runs before the first run's finish() arrives
    first.finish("cancelled")
    w.finish(first)
    assert w.view.trace is second and w.view.phase == "connecting"
    feed(w, second, [TextDelta("full answer")], wire.clock, 1.0)
    second.finish()
    w.finish(second)
    assert [t.status for t in w.runs] == ["cancelled", "complete"]


def test_the_widget_names_the_model_that_answered(wire):
    """A cell without --model shows "(default model)" only until the run resolved it."""
    w = make_widget(wire, model="(default model)")
    trace = Trace(model="", preset="low", clock=wire.clock).start()
    w.start_run(trace)
    assert "(default model)" in w.model_label.value
    trace.model = "ollama:qwen3:8b"  # (Run resolves the default before the first event)
    feed(w, trace, [ReasoningDelta("hm")])
    assert (
        wire.state(w.model_label)["value"]
        == '<span class="reasoning-nb-model">ollama:qwen3:8b</span>'
    )
    trace.finish()
    w.finish(trace)
    other = Trace(model="llamacpp:m", preset="high", clock=wire.clock).start()
    w.start_run(other)
    feed(w, other, [TextDelta("ok")])
    other.finish()
    w.finish(other)
    assert "llamacpp:m" in wire.state(w.model_label)["value"]
    w.selector.value = 0  # the first run on screen: its model
    assert "ollama:qwen3:8b" in wire.state(w.model_label)["value"]


def test_enter_in_the_hint_continues(wire):
    calls = []
    w = make_widget(wire, actions=Actions(continue_run=lambda *a: calls.append(a)))
    trace = new_trace(wire)
    w.start_run(trace)
    feed(w, trace, [ReasoningDelta("thinking")])
    trace.finish("cancelled")
    w.finish(trace)
    w.action_row.hint.value = "try the ocean"
    w.action_row.hint._handle_custom_msg({"event": "submit"}, [])  # what the page sends on Enter
    assert calls == [(trace, "try the ocean", 1)] and w.action_row.hint.value == ""


def test_the_pane_title_is_a_button(wire):
    """The title button opens and closes the pane (a button: the keyboard reaches it) and
    follows the pane's title; the Accordion keeps the same state for a page with no kernel."""
    w = make_widget(wire)
    trace = new_trace(wire)
    w.start_run(trace)
    feed(w, trace, [ReasoningDelta("step one"), TextDelta("The answer.")], wire.clock, 1.0)
    idle(w, wire.clock)
    run = w.view
    toggle = wire.state(run.toggle)
    assert toggle["description"] == run.pane.titles[0] and toggle["value"] is False
    assert f"IPY_MODEL_{run.toggle.model_id}" in wire.state(run.root)["children"]
    run.toggle.set_state({"value": True})  # the reader presses it
    assert (
        wire.state(run.pane)["selected_index"] == 0
        and wire.state(run.toggle)["icon"] == "caret-down"
    )
    run.toggle.set_state({"value": False})
    assert wire.state(run.pane)["selected_index"] is None


# -- block splitting ---------------------------------------------------------------------------


def test_find_cut_at_blank_lines_only_outside_fences():
    para = "word " * 100 + "\n\n"
    assert find_cut(para + "tail") == (len(para), None, False)
    assert find_cut("no blank line yet\nstill the same block") == (0, None, False)
    fenced = "```\n" + "x = 1\n\n" * 80 + "y"
    cut, fence, _ = find_cut(fenced, tail_limit=10_000)
    assert cut == 0 and fence is None  # blank lines inside an open fence are no boundary
    closed = "```\n" + "x = 1\n\n" * 80 + "```\nafter"
    assert find_cut(closed, tail_limit=10_000)[0] == len(closed) - len("after")


def test_find_cut_forces_long_tails():
    code = "```py\n" + "x = 1\n" * 400
    assert find_cut(code) == (len(code), "```py", True)  # cut inside the fence: it stays open
    line = "word " * 600
    cut, fence, forced = find_cut(line)
    assert 0 < cut <= len(line) and line[cut - 1] == " " and fence is None and forced
    assert len(line) - find_cut(line)[0] <= TAIL_LIMIT


LONG_CODE = (
    "```python\n" + "".join(f"x{i} = {i}\n\n" for i in range(300)) + "```\n\nAfter the code."
)
TEXTS = {
    "loose list": "- one\n\n- two\n\n- three\n\nEnd.",
    "long fence": LONG_CODE,
    "huge line": "word " * 700 + "\n\nnext paragraph",
    "link reference": "See [the docs].\n\nMore text.\n\n[the docs]: https://example.org",
    "tildes in backticks": "~~~\n```\n\nstill code\n~~~\n\nout",
    "loose list, long items": f"1. {'word ' * 30}\n\n2. {'word ' * 30}\n\n   more\n\nEnd.",
    "nested loose list": "- a\n\n  - b\n\n  - c\n\n- d\n\nEnd.",
}


@pytest.mark.parametrize("name", list(TEXTS))
@pytest.mark.parametrize("breaks", [False, True])
@pytest.mark.parametrize("limit", [TAIL_LIMIT, 40])
def test_live_text_always_ends_exact(wire, name, breaks, limit):
    """Streamed in pieces, with the tail cut by force past ``limit``: the front end always shows
    what the widgets hold, the tail stays short, and the end is the whole text as inert
    markdown, block after block (the pieces of a forced cut joined)."""
    text = TEXTS[name]
    live = LiveText(breaks=breaks, tail_limit=limit)
    for i in range(0, len(text), 7):
        live.append(text[i : i + 7])
        live.flush()
        assert wire.shown(live.box) == live.markdown
        assert len(live._open) <= limit + 7  # the live tail stays short
    live.finalize(text)
    assert live.markdown == live_markdown(text, breaks=breaks)
    assert wire.shown(live.box) == live.markdown
    assert not any(b.forced for b in live._blocks)


def _shown_after_each_message(wire, box) -> list[str]:
    """The text a reader sees under ``box`` after each message (rendered, tags stripped, spaces
    squashed): what a person could see between two messages."""
    models: dict[str, dict] = {}
    seen = []
    for _, kind, cid, data in wire.msgs:
        if kind == "comm_open":
            models[cid] = dict(data["state"])
        elif kind == "comm_msg" and data.get("method") == "update":
            models[cid].update(data["state"])
            seen.append(plain(shown_markdown(models, box.model_id)))
    return seen


@pytest.mark.parametrize("limit", [TAIL_LIMIT, 150])
def test_freezing_never_shows_text_twice(wire, limit):
    """A block freezes in place (the tail Output becomes it, a fresh tail goes after it):
    played back message by message, the front end only ever shows a prefix of the text, never
    less than before, never a piece twice; the end's joins too, where a chain is on one page."""
    words = "the model weighs each step and checks a small case. "
    items = "".join(f"- item {i}: {words}\n\n" for i in range(4))
    text = "\n\n".join(f"Step {i}: " + words * (i % 9) for i in range(40)) + f"\n\n{items}End."
    live = LiveText(tail_limit=limit)
    for i in range(0, len(text), 11):
        live.append(text[i : i + 11])
        live.flush()
    live.finalize(text)
    final = plain(live_markdown(text))
    seen = [s for s in _shown_after_each_message(wire, live.box) if s]
    assert seen[-1] == final
    for before, now in itertools.pairwise(seen):
        assert final.startswith(now) and len(now) >= len(before), (before[-80:], now[-80:])


def test_long_fence_is_cut_by_force_then_joined(wire):
    """A fence longer than the tail limit goes out in pieces, each closed and opened again (so
    each piece shows as code, run on as one box by the stylesheet); the end joins them."""
    live = LiveText()
    close = LONG_CODE.index("```\n\nAfter")
    for i in range(0, close, 20):
        live.append(LONG_CODE[i : min(i + 20, close)])
        live.flush()
    pieces = [b for b in live._blocks if b.forced]
    assert len(pieces) > 3 and all(b.out.outputs for b in pieces)
    for piece in pieces:
        md = piece.out.outputs[0]["data"]["text/markdown"]
        assert md.startswith("```python\n") and trusted_render(md).count("<pre>") == 1, md
    assert all(CONT_CLASS in b.out._dom_classes for b in live._blocks[1:])
    live.append(LONG_CODE[close:])
    live.flush()
    live.finalize(LONG_CODE)
    assert not live._blocks  # one Output: the tail
    assert wire.shown(live.box) == live_markdown(LONG_CODE)
    assert trusted_render(wire.shown(live.box)).count("<pre>") == 1


def test_find_cut_prefers_a_sentence_end_in_one_long_line():
    line = "Short one. " + "word " * 60 + "End of a sentence. " + "more words " * 5
    cut, fence, forced = find_cut(line, tail_limit=300)
    assert forced and fence is None and line[:cut].endswith("End of a sentence. ")
    no_stop = "word " * 100
    assert no_stop[: find_cut(no_stop, tail_limit=300)[0]].endswith("word ")  # else a space


def test_a_forced_cut_goes_where_the_tail_ends(wire):
    """A paragraph past the limit is cut where the tail ends (no resend of what it shows);
    the fresh tail carries the class that runs the two pieces on as one paragraph."""
    live = LiveText(tail_limit=120)
    line = "Some words go on. " * 20
    for i in range(0, len(line), 9):
        live.append(line[i : i + 9])
        live.flush()
    assert live._blocks and all(b.forced for b in live._blocks)
    assert all(len(b.src) <= 120 + 9 for b in live._blocks)
    assert CONT_CLASS in live.tail._dom_classes
    before = live.meter.bytes
    live.finalize(line)  # one Output again: one resend of the paragraph
    assert not live._blocks and live.markdown == live_markdown(line)
    assert live.meter.bytes - before < 2 * len(line) + 1_000
    assert wire.shown(live.box) == live_markdown(line)


def test_a_loose_list_stays_one_block(wire):
    """The items of a loose list render as one list only together: no cut between them (the
    tail holds a blank line's next line back until it shows whether the list goes on)."""
    paras = [f"Paragraph {i} says something.\n\n" for i in range(4)]
    items = "".join(f"{i}. Step {i} of the plan.\n\n" for i in range(1, 7))
    text = "".join(paras) + items + "After the list.\n\nThe end."
    live = LiveText()
    for i in range(0, len(text), 5):
        live.append(text[i : i + 5])
        live.flush()
    assert [b.src for b in live._blocks] == [*paras, items, "After the list.\n\n"]
    assert trusted_render(live._blocks[4].out.outputs[0]["data"]["text/markdown"]).count("<ol") == 1
    live.finalize(text)
    assert wire.shown(live.box) == live.markdown == live_markdown(text)


def test_finalize_joins_the_blocks_into_one_output(wire):
    """At the end the frozen blocks and the tail become one Output, swapped in with one
    message (a saved notebook keeps one model per text, not one per block); the blocks'
    Outputs and pages are closed."""
    text = "".join(f"Paragraph {i} says something. " * 8 + "\n\n" for i in range(6)) + "Last."
    live = LiveText()
    for i in range(0, len(text), 5):
        live.append(text[i : i + 5])
        live.flush()
    old = [b.out for b in live._blocks] + [live.tail] + list(live.box.children)
    assert len(old) > 8
    msgs = live.meter.msgs
    live.finalize(text)
    assert live.meter.msgs - msgs == 1
    assert not live._blocks and all(w.comm is None for w in old if w not in live.box.children)
    [page] = live.box.children
    assert page.children == (live.tail,) and live.tail not in old
    assert wire.shown(live.box) == live.markdown == live_markdown(text)


@pytest.mark.parametrize("hide", [False, True])
@pytest.mark.parametrize("code", [False, True])
def test_slow_reasoning_and_answer_stay_within_the_byte_budget(wire, hide, code):
    """Reasoning then an answer opening with a loose list, 5 deltas a second: the final render
    (joins, hidden reasoning at the end) stays inside the 5x as well."""
    reasoning = paragraphs(random.Random(3), 2_000, lines=True, code=code)
    answer = "1. One.\n\n2. Two.\n\n" + paragraphs(random.Random(4), 2_000, code=code)
    w = make_widget(wire, hide_reasoning=hide)
    trace = new_trace(wire)
    w.start_run(trace)
    start = len(wire.msgs)
    events = [ReasoningDelta(reasoning[i : i + 4]) for i in range(0, len(reasoning), 4)]
    events += [TextDelta(answer[i : i + 4]) for i in range(0, len(answer), 4)]
    feed(w, trace, events, wire.clock, 0.2, tick_every=1)
    trace.finish()
    w.finish(trace)
    assert wire.shown(w.view.reasoning.box) == live_markdown(reasoning, breaks=True)
    assert wire.shown(w.view.answer.box) == live_markdown(answer)
    assert sent_bytes(wire, start) <= budget(reasoning + answer, wire.clock.t)


def test_an_indented_answer_shows_as_code_live(wire):
    """Only blank lines before the answer are dropped: an indented first line stays a code
    block in the live view, as in the saved trace."""
    w = make_widget(wire)
    trace = new_trace(wire)
    w.start_run(trace)
    feed(w, trace, [TextDelta("\n\n  "), TextDelta("  x = 1\n    y = 2\n")], wire.clock, 0.1)
    idle(w, wire.clock)
    tail = [markdown_of(s) for _, cid, s in wire.updates() if cid == w.view.answer.tail.model_id]
    assert trace.answer.startswith("    x = 1")
    assert "<pre><code>x = 1\ny = 2" in trusted_render(tail[-1])


# -- work per delta (issue 12, item 16) ----------------------------------------------------------

ITEM = "the model weighs each step"
SHAPES = {  # about 40 n chars: n blocks or lines of ~40 chars (n / 10 items of ~420 chars)
    "loose list": lambda n: "".join(f"- item {i}: {ITEM}\n\n" for i in range(n)) + "End.",
    "nested loose list": lambda n: "".join(
        f"- item {i}: {ITEM}\n\n  - sub {i}: {ITEM}\n\n" for i in range(n // 2)
    ),
    "loose list, long items": lambda n: "".join(  # each item cut by force
        f"- item {i}: {(ITEM + ' ') * 15}\n\n" for i in range(n // 10)
    ),
    "tight list": lambda n: "".join(f"- item {i}: {ITEM}\n" for i in range(n)) + "\nEnd.",
    "code fence": lambda n: (
        "```python\n" + "".join(f"x{i} = step({i})  # {ITEM}\n" for i in range(n)) + "```\n\nEnd."
    ),
    "blockquote": lambda n: "".join(f"> line {i}: {ITEM}\n>\n" for i in range(n)) + "\nEnd.",
    "paragraphs": lambda n: "".join(f"Para {i}: {ITEM}.\n\n" for i in range(n)) + "End.",
    "table": lambda n: (  # each piece cut by force opens with the table's head again
        "| n | step |\n|---|---|\n" + "".join(f"| {i} | {ITEM} |\n" for i in range(n)) + "\nEnd."
    ),
    "unclosed math": lambda n: "so \\( x " * (5 * n) + "\n\nEnd.",  # (holds cuts: fences)
}


def live_view_work(wire, text: str, kind=TextDelta) -> int:
    """Stream ``text`` in 4-char deltas, 100 a second (ticking after each), into a fresh widget
    and count the work the live view does: the chars it renders as markdown, the chars it scans
    for block ends, and the Python calls it makes (``sys.setprofile``). Counts, not times: the
    same on a loaded machine."""
    import sys

    from reasoning_nb.notebook import live_text
    from reasoning_nb.views import markdown_blocks

    done = {"chars": 0, "calls": 0}
    render, scan = live_text.live_markdown, markdown_blocks._scan

    def counted_render(src, **kw):
        done["chars"] += len(src)
        return render(src, **kw)

    def counted_scan(src, fence, start=None):
        done["chars"] += len(src) - (start.last_end if start else 0)  # (what it reads)
        return scan(src, fence, start)

    def profile(frame, event, arg):
        if event in ("call", "c_call"):
            done["calls"] += 1

    w = make_widget(wire)
    trace = new_trace(wire)
    w.start_run(trace)
    start = len(wire.msgs)
    live = w.view.answer if kind is TextDelta else w.view.reasoning
    events = [kind(text[i : i + 4]) for i in range(0, len(text), 4)]
    before = sys.getprofile()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(live_text, "live_markdown", counted_render)
        mp.setattr(markdown_blocks, "_scan", counted_scan)
        sys.setprofile(profile)
        try:
            feed(w, trace, events, wire.clock, 0.01, tick_every=1)
        finally:
            sys.setprofile(before)
    trace.finish()
    w.finish(trace)
    final = trace.reasoning if kind is ReasoningDelta else trace.answer
    assert wire.shown(live.box) == live_markdown(final, breaks=kind is ReasoningDelta)
    assert sent_bytes(wire, start) <= budget(text, wire.clock.t)
    return done["chars"] + done["calls"]


@pytest.mark.parametrize("shape", list(SHAPES))
def test_live_view_work_per_delta_does_not_grow_with_the_text(wire, shape):
    """Twice the text costs about twice the work, whatever its shape, within the byte budget.
    A loose list (one block that markdown-it keeps open) cost 25 s of kernel CPU for 1,600
    items against 0.4 s for as many paragraphs: each item rendered the list so far twice and
    the list was joined (resent whole) as each item ended, the byte budget ran out, and then
    the tail was held back at every flush and grew, rescanned for block ends at each delta."""
    small, large = (live_view_work(wire, SHAPES[shape](n)) for n in (200, 400))
    print(f"\n[widget] {shape}: work {small:,} for 200 blocks, {large:,} for 400")
    assert large <= 2.3 * small


def test_live_view_work_in_the_reasoning_pane(wire):
    """The same for the reasoning pane (line breaks kept)."""
    make = SHAPES["loose list"]
    small, large = (live_view_work(wire, make(n), ReasoningDelta) for n in (200, 400))
    assert large <= 2.3 * small


def test_a_chunk_between_screen_updates_costs_a_few_calls(wire):
    """One fold: the runner folds each event into the trace once, and the live view reads the
    trace's changes per screen update. A chunk costs the same few Python calls however long the
    text grew (tiny chunks, 25,000 a second, a tick every 40 ms): it was ~2,000 calls a chunk
    for 5,000 chunks and ~5,800 for 20,000, as the tail was planned again at each one."""
    import sys

    def calls_per_chunk(n: int) -> float:
        w = make_widget(wire)
        trace = new_trace(wire)
        w.start_run(trace)
        half = n // 2
        events = [ReasoningDelta(f" r{i}") for i in range(half)]
        events += [TextDelta(f" a{i}") for i in range(n - half)]
        calls = 0

        def profile(frame, event, arg):
            nonlocal calls
            calls += event in ("call", "c_call")

        for i, event in enumerate(events):
            trace.fold(event)  # (the runner's fold: not the view's work)
            sys.setprofile(profile)
            w.on_event(event)
            if i % 1_000 == 999:
                w.tick()
            sys.setprofile(None)
            wire.clock.t += 0.00004
        trace.finish()
        w.finish(trace)
        assert wire.shown(w.view.answer.box) == live_markdown(trace.answer)
        return calls / n

    small, large = calls_per_chunk(5_000), calls_per_chunk(20_000)
    print(f"\n[widget] calls a chunk: {small:.1f} for 5,000 chunks, {large:.1f} for 20,000")
    assert large <= 40 and large <= 1.1 * small
