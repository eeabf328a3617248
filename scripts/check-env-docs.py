#!/usr/bin/env python3
"""Fails when an environment variable the sources read is missing from docs/reference-environment.md.

The variables are the quoted `HAUL_*`, `AWS_*`, `PG*` and `DATABASE_URL` names in the Swift
files under Sources/ (environment lookups name them as string literals); the page must name
each in backquotes. bin/test runs this.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "reference-environment.md"
NAME = re.compile(r'"((?:HAUL|AWS)_[A-Z0-9_]+|PG[A-Z]+|DATABASE_URL)"')


def main():
    read = {}
    for path in sorted((ROOT / "Sources").rglob("*.swift")):
        for name in NAME.findall(path.read_text(encoding="utf-8")):
            read.setdefault(name, path.relative_to(ROOT).as_posix())
    page = PAGE.read_text(encoding="utf-8")
    missing = [f"{name} (read in {where})" for name, where in sorted(read.items()) if f"`{name}`" not in page]
    if missing:
        print(f"{PAGE.relative_to(ROOT)} does not list: " + ", ".join(missing) + "; add a row for each", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
