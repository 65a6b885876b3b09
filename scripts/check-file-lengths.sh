#!/usr/bin/env bash
# Fails (exit 1, one line per file) where a source file that is no test
# file has more than 800 lines: the library's src/**/*.rs, the tool's
# cli/src/**/*.rs, the reference crate's reference/src/*.rs and
# python/src/*.rs, test files (tests.rs, a tests/ folder) left out.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=800
long=$(find src cli/src reference/src python/src -name '*.rs' ! -name tests.rs ! -path '*/tests/*' -print0 |
    xargs -0 wc -l | awk -v max="$limit" '$2 != "total" && $1 > max { print $2 ": " $1 " lines" }')
if [ -n "$long" ]; then
    echo "$long" | sed "s/$/ (more than $limit; split it by job)/"
    exit 1
fi
