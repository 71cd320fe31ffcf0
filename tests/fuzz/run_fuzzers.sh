#!/usr/bin/env bash
# Builds the libFuzzer harnesses (the `fuzz` configure preset: clang++, ASan + UBSan) and runs
# each one briefly with the real third-party files (and earlier crashes) as seed corpus.
#
#   tests/fuzz/run_fuzzers.sh [seconds per harness, default 20] [harness names...]
#
# A crash leaves its input in build/fuzz/artifacts/<harness>/; copy it to
# tests/data/fuzz-regressions/<format>/ (tst_fuzzregressions reads every file there) and fix.
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds="${1:-20}"
shift || true
all=(fuzz_har fuzz_csv fuzz_otlp fuzz_otlpbody fuzz_access fuzz_azurerecords fuzz_resilience fuzz_vcr fuzz_detect)
if [[ $# -gt 0 ]]; then harnesses=("$@"); else harnesses=("${all[@]}"); fi

thirdparty=tests/data/thirdparty
regressions=tests/data/fuzz-regressions
seeds=tests/fuzz/seeds

# Seed directories per harness (missing ones are skipped).
seed_dirs() {
    case "$1" in
        fuzz_har) echo "$thirdparty/har $regressions/har" ;;
        fuzz_csv) echo "$seeds/csv $regressions/csv" ;;
        fuzz_otlp | fuzz_otlpbody) echo "$thirdparty/otlp $regressions/otlp" ;;
        fuzz_access) echo "$seeds/access $regressions/access" ;;
        fuzz_azurerecords) echo "$thirdparty/oplogs/otel-contrib_azurelogs_appservice_httplogs.json $thirdparty/servicebus $regressions/azure-records" ;;
        fuzz_resilience) echo "$seeds/resilience $regressions/resilience" ;;
        fuzz_vcr) echo "$thirdparty/fabric $regressions/vcr" ;;
        fuzz_detect) echo "$thirdparty/har $thirdparty/otlp $thirdparty/servicebus $seeds/csv $seeds/access $seeds/resilience" ;;
    esac
}

cmake --preset fuzz >/dev/null
cmake --build build/fuzz -j2 --target "${harnesses[@]}"

status=0
for harness in "${harnesses[@]}"; do
    corpus="build/fuzz/corpus/$harness"
    artifacts="build/fuzz/artifacts/$harness"
    mkdir -p "$corpus" "$artifacts"
    for seed in $(seed_dirs "$harness"); do
        [[ -e "$seed" ]] || continue
        if [[ -d "$seed" ]]; then
            find "$seed" -maxdepth 1 -type f -size -1024k -exec cp -n {} "$corpus/" \;
        else
            cp -n "$seed" "$corpus/"
        fi
    done
    binary=$(find build/fuzz -type f -name "$harness" -perm -u+x | head -n 1)
    echo "== $harness: ${seconds}s, corpus $(ls "$corpus" | wc -l) files"
    if ! "$binary" "$corpus" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
        -rss_limit_mb=2048 -artifact_prefix="$artifacts/" -print_final_stats=1 2>"$artifacts/log.txt"; then
        echo "!! $harness found a problem: see $artifacts/ (log.txt)"
        tail -n 40 "$artifacts/log.txt"
        status=1
    else
        grep -E "stat::number_of_executed_units|cov:" "$artifacts/log.txt" | tail -n 2 || true
    fi
done
exit $status
