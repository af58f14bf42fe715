"""``%%think --compare low,medium,high`` against the slowest of its three runs alone.

    /work/venv/bin/python benchmarks/compare.py [--repeat 3] [--seconds 1.0]

A real IPython kernel (jupyter_client) runs the cells; the test wire server answers each request
with a paced stream whose length follows the preset, as a reasoning model's does: ``low`` takes
``--seconds``, ``medium`` 1.5x, ``high`` 2x. Each round runs the three presets one at a time,
then the compare cell; every figure is the wall time from ``execute`` to the kernel's idle, widget
traffic included. The ratio compare / slowest single is the cost of running side by side
(1.0 = free; three runs in a row would be ~4.5/2 = 2.25). The median of ``--repeat`` rounds
counts. No timing is asserted anywhere.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # wire_server, wire_fixtures, kernel_session
if importlib.util.find_spec("reasoning_nb") is None:  # run from a checkout, not installed
    sys.path.insert(0, str(ROOT))

import wire_fixtures as wf  # noqa: E402
from kernel_session import KernelSession  # noqa: E402
from wire_server import Reply, WireServer  # noqa: E402

CHAT = "/v1/chat/completions"
PRESETS = {"low": 1.0, "medium": 1.5, "high": 2.0}  # stream length, in units of --seconds


def paced_by_preset(seconds: float):
    def hook(rec):
        effort = rec.json.get("reasoning_effort", "low")
        frames = wf.chat_sse(f"step at {effort}. " * 40, f"answer at {effort}", usage=True)
        return Reply.sse(frames, pause=seconds * PRESETS.get(effort, 1.0) / len(frames))

    return hook


def timed(kernel: KernelSession, code: str) -> float:
    t0 = time.monotonic()
    msgs = kernel.run(code, timeout=120)
    errors = [m for m in msgs if m["msg_type"] == "error"]
    if errors:
        raise RuntimeError(errors[0]["content"]["evalue"])
    return time.monotonic() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=1.0)
    args = parser.parse_args()

    with WireServer() as server:
        server.route("POST", CHAT, paced_by_preset(args.seconds))
        kernel = KernelSession()
        try:
            kernel.run("%load_ext reasoning_nb")
            base = f"%%think --model llamacpp:bench --base-url {server.url}"
            timed(kernel, f"{base}\nwarm-up")  # imports, first connection
            singles: dict[str, list[float]] = {p: [] for p in PRESETS}
            compares: list[float] = []
            for _ in range(args.repeat):
                for preset in PRESETS:
                    singles[preset].append(timed(kernel, f"{base} --preset {preset}\nQ"))
                compares.append(timed(kernel, f"{base} --compare {','.join(PRESETS)}\nQ"))
        finally:
            kernel.close()

    medians = {p: statistics.median(t) for p, t in singles.items()}
    slowest = max(medians.values())
    compare = statistics.median(compares)
    for preset, t in medians.items():
        print(f"single {preset:<6} {t:6.2f} s")
    print(f"3-way compare  {compare:6.2f} s")
    print(f"compare / slowest single = {compare / slowest:.2f}x")
    print(f"compare / sum of singles = {compare / sum(medians.values()):.2f}x")


if __name__ == "__main__":
    main()
