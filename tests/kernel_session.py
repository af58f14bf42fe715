"""A real IPython kernel for tests: run code, collect iopub messages, talk to widgets."""

from __future__ import annotations

import queue
import time
from typing import Any

from jupyter_client.manager import start_new_kernel


class KernelSession:
    def __init__(self, env: dict[str, str] | None = None) -> None:
        """``env``: the kernel's whole environment (default: this process's)."""
        extra = {"env": env} if env is not None else {}
        self.km, self.kc = start_new_kernel(kernel_name="python3", **extra)
        self.comms: dict[str, dict[str, Any]] = {}  # comm_id -> model state at open

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    def run(self, code: str, timeout: float = 60, cell_id: str | None = None) -> list[dict]:
        """Execute and wait for idle; returns this cell's iopub messages."""
        return self.collect(self.execute(code, cell_id), timeout)

    def execute(self, code: str, cell_id: str | None = None) -> str:
        """Send an execute request; ``cell_id`` as JupyterLab sends it (jupyter_client does not)."""
        if cell_id is None:
            return self.kc.execute(code)
        content = {"code": code, "silent": False, "store_history": True,
                   "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}  # fmt: skip
        msg = self.kc.session.msg("execute_request", content, metadata={"cellId": cell_id})
        self.kc.shell_channel.send(msg)
        return msg["header"]["msg_id"]

    def collect(self, msg_id: str, timeout: float = 60, until=None) -> list[dict[str, Any]]:
        """Read iopub until the cell is idle (or ``until(msg)`` is true)."""
        out: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = self.kc.get_iopub_msg(timeout=max(0.05, deadline - time.monotonic()))
            except queue.Empty:
                break
            msg["received"] = time.monotonic()
            self._track(msg)
            if msg["parent_header"].get("msg_id") != msg_id and msg["msg_type"] != "comm_msg":
                continue
            out.append(msg)
            if until is not None and until(msg):
                return out
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return out
        raise TimeoutError(f"cell did not finish in {timeout} s; saw {len(out)} messages")

    def _track(self, msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "comm_open":
            state = msg["content"]["data"].get("state", {})
            self.comms[msg["content"]["comm_id"]] = dict(state)
        elif msg["msg_type"] == "comm_msg":
            data = msg["content"]["data"]
            if data.get("method") == "update" and msg["content"]["comm_id"] in self.comms:
                self.comms[msg["content"]["comm_id"]].update(data.get("state", {}))

    def find(self, model_name: str, **match: Any) -> str:
        """The comm id of the newest widget of that model class whose state matches."""
        for comm_id, state in reversed(list(self.comms.items())):
            if state.get("_model_name") == model_name and all(
                state.get(k) == v for k, v in match.items()
            ):
                return comm_id
        raise KeyError(f"no {model_name} with {match}")

    def send_comm(self, comm_id: str, data: dict[str, Any]) -> None:
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        self.kc.shell_channel.send(msg)

    def click(self, comm_id: str) -> None:
        self.send_comm(comm_id, {"method": "custom", "content": {"event": "click"}})

    def set_state(self, comm_id: str, **state: Any) -> None:
        self.send_comm(comm_id, {"method": "update", "state": state, "buffer_paths": []})

    def value(self, expr: str) -> str:
        """``repr`` of an expression evaluated in the kernel."""
        msgs = self.run(f"print(repr({expr}))")
        return "".join(m["content"]["text"] for m in msgs if m["msg_type"] == "stream").strip()


def updates(msgs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        m
        for m in msgs
        if m["msg_type"] == "comm_msg" and m["content"]["data"].get("method") == "update"
    ]


def max_per_window(times: list[float], window: float = 1.0) -> int:
    times = sorted(times)
    best = j = 0
    for i, t in enumerate(times):
        while times[j] < t - window:
            j += 1
        best = max(best, i - j + 1)
    return best


def saved_trace(msgs: list[dict[str, Any]]) -> dict[str, Any]:
    """The trace of the last output among ``msgs`` that carries one (display or update)."""
    shown = [
        m["content"]["metadata"]["reasoning_nb"]
        for m in msgs
        if m["msg_type"] in ("display_data", "update_display_data")
        and "reasoning_nb" in m["content"].get("metadata", {})
    ]
    return shown[-1]
