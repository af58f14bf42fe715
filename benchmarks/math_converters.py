r"""Which TeX → MathML converter the exports use: fidelity on the test suite's own math.

    python benchmarks/math_converters.py   (latex2mathml: benchmarks/requirements.txt)

Every math span the package's rules (``views.math_text``) find in the strings of ``tests/`` and
``notebooks/`` is converted by each converter installed. Per converter: spans it refused, spans
whose letters and digits do not all reach the output (content lost), outputs with a link
(``href``), and outputs ``export.mathml.clean`` would not keep (an element off its lists).
Measured on 2026-11-27, 134 spans before the MathML tests added theirs: math-core refused 9
(HTML, regular expressions and markdown the tests feed the math rules on purpose), lost none,
linked none; latex2mathml refused 1 and made a ``javascript:`` link of ``\href``. Side by side
in chromium, latex2mathml also drew ``aligned`` as one line and ``\sec\theta`` as ``secθ``.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from markdown_it import MarkdownIt

from reasoning_nb.export.mathml import _Unsafe, clean
from reasoning_nb.views.math_text import math_plugin

ROOT = Path(__file__).resolve().parents[1]
_MD = MarkdownIt("commonmark").enable(["table", "strikethrough"]).use(math_plugin)


def _strings(path: Path):
    if path.suffix == ".py":
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                yield node.value
    elif path.suffix in (".json", ".ipynb"):
        stack = [json.loads(path.read_text())]
        while stack:
            value = stack.pop()
            if isinstance(value, str):
                yield value
            elif isinstance(value, (list, dict)):
                stack += value.values() if isinstance(value, dict) else value


def _spans(tokens):
    for token in tokens:
        if token.type in ("math_inline", "math_display", "math_block"):
            yield token.content, token.type != "math_inline"
        yield from _spans(token.children or [])


def suite_math() -> list[tuple[str, bool]]:
    found: dict[tuple[str, bool], None] = {}
    for folder in ("tests", "notebooks"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and "golden" not in path.parts:
                for text in _strings(path):
                    if "$" in text or "\\(" in text or "\\[" in text:
                        found.update(dict.fromkeys(_spans(_MD.parse(text))))
    return list(found)


def _letters(tex: str) -> set[str]:
    """What a reader must see: letters and digits outside command and environment names."""
    tex = re.sub(r"\\(?:text|mathrm|operatorname)\{([^}]*)\}", r" \1 ", tex)
    tex = re.sub(r"\\(?:begin|end)\{[a-z*]+\}|\\[A-Za-z]+", " ", tex)
    return set(re.findall(r"[A-Za-z0-9]", tex))


def converters() -> dict:
    found = {}
    try:
        from math_core import LatexToMathML

        mc = LatexToMathML(fancy_error=False)
        found["math-core"] = lambda tex, d: mc.convert_with_local_state(tex, displaystyle=d)
    except ImportError:
        pass
    try:
        from latex2mathml.converter import convert

        found["latex2mathml"] = lambda tex, d: convert(tex, display="block" if d else "inline")
    except ImportError:
        pass
    return found


def main() -> None:
    spans = suite_math()
    print(f"{len(spans)} distinct math spans in tests/ and notebooks/")
    for name, convert in converters().items():
        refused, lost, linked, unsafe = [], [], [], []
        for tex, display in spans:
            try:
                out = convert(tex, display)
            except Exception:
                refused.append(tex)
                continue
            shown = re.sub(r"<[^>]*>", "", out)
            if _letters(tex) - set(shown):
                lost.append(tex)
            if "href=" in out:
                linked.append(tex)
            try:
                clean(out)
            except _Unsafe:
                unsafe.append(tex)
        counts = f"{len(refused)} refused, {len(lost)} lost content, {len(linked)} linked"
        print(f"{name}: {counts}, {len(unsafe)} not kept by clean()")
        for label, texs in (("refused", refused), ("lost", lost), ("linked", linked)):
            for tex in texs:
                print(f"  {label}: {tex[:70]!r}")


if __name__ == "__main__":
    main()
