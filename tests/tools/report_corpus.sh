#!/usr/bin/env bash
# The report's JSON on every log under tests/data, one file per log, for a before/after diff of
# a change that must not change behaviour (issue 31):
#   tests/tools/report_corpus.sh BINARY OUTDIR
#   diff -r BEFORE AFTER
# Each output holds the exit status, the JSON on stdout and the messages on stderr: a log that
# the report refuses must be refused the same way. Documentation and scripts in tests/data (.md,
# .py, .txt) are not logs and are skipped.
set -euo pipefail
binary="$1"
out="$2"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mkdir -p "$out"
cd "$root"
find tests/data -type f ! -name '*.md' ! -name '*.py' ! -name '*.txt' ! -name 'LICENSE*' | sort |
while read -r log; do
  name="$(printf '%s' "$log" | tr '/' '_')"
  status=0
  "$binary" report --json "$log" >"$out/$name.json" 2>"$out/$name.err" || status=$?
  echo "$status" >"$out/$name.status"
done
# Several logs read together (merged by time): the canonical set in one report.
status=0
"$binary" report --json tests/data/canonical/*.ndjson >"$out/canonical-merged.json" \
  2>"$out/canonical-merged.err" || status=$?
echo "$status" >"$out/canonical-merged.status"
echo "$(find "$out" -name '*.json' | wc -l) logs reported into $out"
