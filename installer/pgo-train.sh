#!/usr/bin/env bash
# The training run of the profile-guided release build (installer/setup.sh release): runs an
# instrumented throttlescope over the work it does in the field, so the compiler learns which
# branches and calls are hot.
#
#   installer/pgo-train.sh BUILD_DIR/app/throttlescope
#
# The workload is the simulator's scenarios (OneNote migration, Fabric deployment, Service Bus
# producers, the demo: ~215,000 events) through report, import and report --workspace, plus
# the real third-party samples in every format. Deliberately not the benchmark's generated
# file: the profile must describe real use, and the benchmark then measures how well it carries
# over to a log it never saw.
set -euo pipefail

app="${1:?usage: $0 PATH/TO/instrumented/throttlescope}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

logs=()
seed=7
for scenario in onenote-migration fabric-deployment servicebus-producers demo; do
  "$app" simulate --scenario "$scenario" --seed "$seed" --out "$work/$scenario.ndjson" 2>/dev/null
  logs+=("$work/$scenario.ndjson")
  seed=$((seed + 1))
done

# The headless report, as scripts run it (JSON) and as operators read it (text).
for log in "${logs[@]}"; do
  "$app" report --json "$log" >/dev/null
done
"$app" report "${logs[@]}" >/dev/null
# Standard input, the other way logs arrive.
"$app" report --json - <"$work/onenote-migration.ndjson" >/dev/null

# A workspace: import (the SQLite writer), re-import (the ledger), report from it.
"$app" import --workspace "$work/train.db" "${logs[@]}" 2>/dev/null
"$app" import --workspace "$work/train.db" "${logs[@]}" 2>/dev/null
"$app" report --json --workspace "$work/train.db" >/dev/null

# Every other format the importers read: HAR, Azure records, OTLP, operation logs, samples.
mapfile -t samples < <(find "$root/tests/data/thirdparty" "$root/tests/data/canonical" -type f \
  ! -name '*.md' | sort)
for sample in "${samples[@]}"; do
  # Some samples are deliberately malformed: a non-zero exit is part of the workload.
  "$app" report --json "$sample" >/dev/null 2>&1 || true
done

echo "pgo-train: ${#logs[@]} simulated logs and ${#samples[@]} samples run through $app" >&2
