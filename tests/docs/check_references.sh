#!/usr/bin/env bash
# The project's documents are its own: every contract the code, the README or the docs cite is
# in docs/ (not in a folder outside the repository), and every docs/ file they name exists.
#   check_references.sh SOURCE_DIR
set -euo pipefail
cd "$1"
failures=0
files="$(git ls-files 2>/dev/null || find . -type f -not -path './build/*' -not -path './.git/*')"
sources="$(printf '%s\n' "$files" | grep -E '\.(cpp|h|md|txt|sh|cmake|1|in)$|CMakeLists\.txt$' |
  grep -v '^tests/docs/')"

# Outside the repository: the shared folder the contracts were first written in.
if outside="$(printf '%s\n' "$sources" | xargs grep -nE 'shared/spec|\.\./shared/' 2>/dev/null)"; then
  printf '%s\n' "$outside" >&2
  echo "FAIL: references to shared/spec: the contracts are in docs/" >&2
  failures=$((failures + 1))
fi

# Every docs/NAME.md named anywhere exists.
for name in $(printf '%s\n' "$sources" | xargs grep -ohE 'docs/[A-Za-z0-9_.-]+\.md' 2>/dev/null | sort -u); do
  if [ ! -f "$name" ]; then
    echo "FAIL: $name is cited but does not exist" >&2
    printf '%s\n' "$sources" | xargs grep -nF "$name" >&2 || true
    failures=$((failures + 1))
  fi
done
[ "$failures" -eq 0 ] || exit 1
echo "PASS: every cited document is in docs/"
