"""Print the README's command after ``<!-- readme:NAME -->``, so CI runs exactly that."""

from __future__ import annotations

import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"

if __name__ == "__main__":
    name = sys.argv[1]
    found = re.search(rf"<!-- readme:{name} -->\s*```bash\n(.*?)\n\s*```", README.read_text(), re.S)
    if not found:
        sys.exit(f"README.md has no command marked readme:{name}")
    print(found.group(1).strip())
