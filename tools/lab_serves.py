"""Check that the JupyterLab a command started (its log is the first argument) serves the
notebook named by the second argument, through the server's own contents API.

CI runs it on the README's first command, whose last step starts JupyterLab on the tour.
"""

from __future__ import annotations

import json
import re
import sys
import urllib.request
from pathlib import Path

if __name__ == "__main__":
    log, notebook = Path(sys.argv[1]).read_text(), sys.argv[2]
    found = re.search(r"(http://(?:127\.0\.0\.1|localhost):\d+)/\S*?\?token=(\w+)", log)
    if not found:
        sys.exit("JupyterLab's log names no address with a token.")
    base, token = found.groups()
    root = re.search(r"Serving notebooks from local directory: (.+)", log)
    if not root:
        sys.exit("JupyterLab's log names no folder it serves.")
    served = Path(notebook).resolve().relative_to(Path(root.group(1).strip()).resolve())
    url = f"{base}/api/contents/{served.as_posix()}?token={token}"
    with urllib.request.urlopen(url, timeout=30) as reply:
        model = json.load(reply)
    cells = model["content"]["cells"]
    if model["type"] != "notebook" or not cells:
        sys.exit(f"JupyterLab serves {notebook}, but not as a notebook with cells.")
    print(f"JupyterLab serves {notebook}: {len(cells)} cells, at {base}/lab")
