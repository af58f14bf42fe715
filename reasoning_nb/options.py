"""The options of a run, declared once: ``think()`` and ``astream()`` take them as keywords,
``Run`` as a ``RunOptions``, and the ``%%think`` magic, ``python -m reasoning_nb`` and the flag
table of docs/notebook.md as flags generated from the fields with a ``Flag``.
"""

from __future__ import annotations

import functools
import inspect
import math
import types
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any, get_args, get_type_hints

from .core import presets
from .core.presets import PRESETS
from .core.schema import PACES
from .errors import ConfigError
from .providers import catalog
from .providers.address import normalise
from .providers.transport import HOSTED_WAIT, LOCAL_WAIT

MAX_CHARS = 10_000_000
"""The default ``max_chars``: far beyond any model's output limit (about 2.5M tokens)."""


@dataclass(frozen=True)
class Flag:
    """How a command line spells one setting. ``help`` marks code with backticks, which the
    docs' table keeps and a terminal's help drops."""

    names: tuple[str, ...]
    help: str
    kind: type = str
    """``bool`` is a switch; ``int`` and ``float`` are read as numbers."""
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    dest: str | None = None
    """The option it sets; a flag of an option that is not given reads as None, so what the
    session, the configuration or ``RunOptions`` says applies."""

    def spec(self) -> dict[str, Any]:
        """The keywords of ``argparse``'s ``add_argument`` (and IPython's ``argument``)."""
        spec: dict[str, Any] = {"help": self.help.replace("`", "")}
        if self.kind is bool:
            spec["action"] = "store_true"
        elif self.kind is not str:
            spec["type"] = self.kind
        if self.choices:
            spec["choices"] = self.choices
        if self.metavar:
            spec["metavar"] = self.metavar
        elif self.kind is not bool and not self.choices:  # --budget BUDGET, not BUDGET_TOKENS
            spec["metavar"] = self.names[-1].lstrip("-").upper().replace("-", "_")
        if self.dest:
            spec.update(dest=self.dest, default=None)
        return spec

    def row(self) -> str:
        """Its row in the flag table of docs/notebook.md."""
        spelled = sorted(self.names, key=lambda name: not name.startswith("--"))
        if self.metavar:
            spelled[0] += f" {self.metavar}"
        return "| " + ", ".join(f"`{name}`" for name in spelled) + f" | {self.help} |"


def _option(default: Any, *names: str, help: str = "", **flag: Any) -> Any:
    """A field of ``RunOptions``; with ``names``, a flag too (its kind is the field's type)."""
    return field(default=default, metadata={"flag": Flag(names, help, **flag) if names else None})


@dataclass(frozen=True)
class RunOptions:
    """Everything a run can be asked besides its prompt; checked when made (a ``ConfigError``
    before any I/O), with the preset and budget normalised."""

    model: str | None = _option(
        None, "-m", "--model", help="`PROVIDER:MODEL`, e.g. `ollama:qwen3` or `llamacpp:default`"
    )
    preset: str = _option(
        "auto",
        "-p",
        "--preset",
        choices=PRESETS,
        help=f"reasoning effort: {', '.join(f'`{p}`' for p in PRESETS)} (default `auto`)",
    )
    budget_tokens: int | None = _option(
        None, "--budget", help="reasoning token budget; wins over the preset"
    )
    system: str | None = _option(None, "--system", help="system prompt")
    base_url: str | None = _option(
        None, "--base-url", help="server address, e.g. `http://127.0.0.1:8080/v1`"
    )
    api_key: str | None = field(default=None, repr=False)
    api_key_env: str | None = _option(
        None,
        "--api-key-env",
        metavar="NAME",
        help="send the key in the environment variable `NAME` (needed for a provider's key to go "
        "to a `--base-url` that is not the provider's own)",
    )
    max_tokens: int | None = _option(None, "--max-tokens", help="limit on generated tokens")
    temperature: float | None = _option(None, "--temperature", help="sampling temperature")
    timeout: float | None = _option(
        None,
        "--timeout",
        help=f"seconds to wait for the first byte and between bytes (default {LOCAL_WAIT:g} for "
        f"a local server, {HOSTED_WAIT:g} for a hosted API)",
    )
    max_chars: int | None = _option(
        MAX_CHARS,
        "--max-chars",
        help="end a run whose reasoning and answer pass this many characters (`truncated`, "
        f"with a warning; default {MAX_CHARS:,})",
    )
    cache: bool = _option(
        False, "--cache", help="replay an identical earlier run instead of calling the model"
    )
    refresh: bool = _option(
        False, "--refresh", help="call the model even if a replay exists, and replace it"
    )
    pace: str = _option(
        "instant",
        "--pace",
        choices=PACES,
        metavar="MODE",
        help="a replay arrives at once (`instant`, the default) or at the `recorded` speed",
    )
    log: bool | None = None
    """Add the run to the log table; None: ``REASONING_NB_LOG`` decides."""
    stop_on_loop: bool = False
    """End a run whose reasoning repeats itself (it is always shown as a warning)."""

    def __post_init__(self) -> None:
        if self.system is not None and not isinstance(self.system, str):
            raise ConfigError("The system prompt must be a string.")
        check_sendable("system", self.system)
        check_sendable("model", self.model)
        preset, budget = presets.check(self.preset, self.budget_tokens)
        check_number("max_tokens", self.max_tokens, int, minimum=1)
        check_number("temperature", self.temperature, (int, float), minimum=0, finite=True)
        check_number("timeout", self.timeout, (int, float), minimum=0, exclusive=True)
        check_number("max_chars", self.max_chars, int, minimum=1)
        # bad ids and addresses fail here, before any I/O
        info = catalog.parse_model(self.model).provider if self.model is not None else None
        if self.base_url is not None:
            normalise(self.base_url, info)
        key_env = self.api_key_env
        if key_env is not None and not (isinstance(key_env, str) and key_env.strip()):
            raise ConfigError(f"api_key_env must name an environment variable, not {key_env!r}.")
        if self.api_key and key_env:
            raise ConfigError("Pass api_key= or api_key_env=, not both: one key is sent.")
        if self.pace not in PACES:
            raise ConfigError(f"pace must be 'instant' or 'recorded', not {self.pace!r}.")
        normalised = {"preset": preset, "budget_tokens": budget, "cache": bool(self.cache)}
        normalised |= {"refresh": bool(self.refresh), "stop_on_loop": bool(self.stop_on_loop)}
        for name, value in normalised.items():
            object.__setattr__(self, name, value)  # frozen: set once, here


def option_flags() -> tuple[Flag, ...]:
    """The flags of the options, in field order, each with the option it sets."""
    hints = get_type_hints(RunOptions)
    return tuple(
        replace(f.metadata["flag"], dest=f.name, kind=_plain(hints[f.name]))
        for f in fields(RunOptions)
        if f.metadata.get("flag")
    )


HIDE_REASONING = Flag(
    ("--hide-reasoning",), "keep the reasoning collapsed and quiet (still saved)", kind=bool
)
"""A flag of the view, not of the run: ``%%think`` and ``python -m reasoning_nb`` both take it."""


def given(args: Any) -> dict[str, Any]:
    """The options a parsed command line set (``argparse.Namespace``), by option name."""
    found = {flag.dest: getattr(args, flag.dest) for flag in option_flags()}
    return {name: value for name, value in found.items() if value is not None}


def _plain(hint: Any) -> type:
    """``int`` for ``int | None``."""
    if isinstance(hint, types.UnionType):
        return next(arg for arg in get_args(hint) if arg is not type(None))
    return hint


def check_number(name, value, kind, *, minimum, exclusive=False, finite=False) -> None:
    """``finite``: infinity is refused too (JSON has no infinity; a timeout may be endless)."""
    if value is None:
        return
    ok = isinstance(value, kind) and not isinstance(value, bool)
    if ok:
        ok = value > minimum if exclusive else value >= minimum
    if ok and finite:
        ok = math.isfinite(value)
    if not ok:
        bound = f"greater than {minimum}" if exclusive else f"at least {minimum}"
        what = "a finite number" if finite else "a number"
        raise ConfigError(f"{name} must be {what} {bound}, not {value!r}.")


def check_sendable(name: str, value: Any) -> None:
    """Text that UTF-8 can carry: a lone surrogate (``"\\ud800"``, from a bad decode or a JSON
    escape) cannot be encoded, and would fail the request as it is built."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ConfigError(
                f"{name} holds a lone surrogate ({value[exc.start]!r} at character "
                f"{exc.start}), which cannot be sent: remove it, or decode the text with "
                "errors='replace'."
            ) from None
    elif isinstance(value, dict):
        for item in value.values():
            check_sendable(name, item)
    elif isinstance(value, list | tuple):
        for item in value:
            check_sendable(name, item)


def keywords(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func(prompt, ..., **options)`` with a signature that lists each option (``help()``,
    Jupyter's ``think?``, an editor's hints) and refuses a keyword that is none of them."""
    signature = inspect.signature(func)
    own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    listed = [
        inspect.Parameter(
            f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=f.type
        )
        for f in fields(RunOptions)
    ]
    full = signature.replace(parameters=[own[0], *listed, *own[1:]])  # prompt, options, own

    @functools.wraps(func)
    def checked(*args: Any, **kwargs: Any) -> Any:
        try:
            full.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{func.__name__}() {exc}") from None
        return func(*args, **kwargs)

    checked.__signature__ = full  # type: ignore[attr-defined]
    return checked
