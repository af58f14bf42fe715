"""A ``%%think`` cell run in the in-process shell (the ``ip`` fixture), as it runs any cell."""

from __future__ import annotations

from IPython.utils.capture import capture_output


def think_cell(ip, line: str, body: str):
    """Run a %%think cell as the shell runs any cell; ``cap.error`` is what it failed with."""
    with capture_output() as cap:
        result = ip.run_cell(f"%%think {line}\n{body}")
    failed = result.error_before_exec or result.error_in_exec
    cap.error = "\n".join(failed._render_traceback_()) if failed else ""
    return cap
