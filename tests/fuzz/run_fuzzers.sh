#!/usr/bin/env bash
# Builds the libFuzzer harnesses (the `fuzz` configure preset: clang++, ASan + UBSan) and runs
# each one briefly with the real third-party files (and earlier crashes) as seed corpus.
#
#   tests/fuzz/run_fuzzers.sh [seconds per harness, default 20] [harness names...]
#
# A crash leaves its input in build/fuzz/artifacts/<harness>/; copy it to
# tests/data/fuzz-regressions/<format>/ (tst_fuzzregressions reads every file there) and fix.
# A harness fails on a crash and on any sanitizer report in its log, even one the process
# survived (a recoverable UBSan check, a leak report): "runtime error:", "ERROR: AddressSanitizer",
# "LeakSanitizer". Executions per harness are printed (and summed up at the end).
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds="${1:-20}"
shift || true
all=(fuzz_har fuzz_csv fuzz_otlp fuzz_otlpbody fuzz_access fuzz_azurerecords fuzz_resilience fuzz_vcr fuzz_detect fuzz_ndjson fuzz_analysis fuzz_pollanswer fuzz_pollcursor fuzz_httphead fuzz_inflate)
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
        fuzz_ndjson) echo "$seeds/ndjson $regressions/ndjson" ;;
        fuzz_pollanswer) echo "$seeds/pollanswer $seeds/ndjson $regressions/pollanswer" ;;
        fuzz_pollcursor) echo "$seeds/pollcursor $regressions/pollcursor" ;;
        fuzz_httphead) echo "$seeds/httphead $regressions/httphead" ;;
        fuzz_inflate) echo "$seeds/inflate $regressions/inflate" ;;
        fuzz_analysis) echo "$seeds/ndjson $seeds/csv $seeds/access $seeds/resilience $thirdparty/har $regressions/ndjson $regressions/csv" ;;
    esac
}

cmake --preset fuzz >/dev/null
cmake --build build/fuzz -j2 --target "${harnesses[@]}"

# What a sanitizer prints when it finds something, fatal or not.
sanitizer_report='runtime error:|ERROR: AddressSanitizer|LeakSanitizer|ERROR: libFuzzer'

status=0
summary=()
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
    exit_code=0
    # halt_on_error=1: the first report ends the run with its input saved as an artifact.
    ASAN_OPTIONS="halt_on_error=1:detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
    UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}" \
        "$binary" "$corpus" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
        -rss_limit_mb=2048 -artifact_prefix="$artifacts/" -print_final_stats=1 \
        2>"$artifacts/log.txt" || exit_code=$?
    executions=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$artifacts/log.txt" |
        grep -Eo '[0-9]+$' | tail -n 1)
    findings=$(grep -Ec "$sanitizer_report" "$artifacts/log.txt" || true)
    if [[ $exit_code -ne 0 || $findings -ne 0 ]]; then
        echo "!! $harness found a problem (exit $exit_code, $findings sanitizer reports): see $artifacts/ (log.txt)"
        grep -E -m 5 -A 20 "$sanitizer_report" "$artifacts/log.txt" || tail -n 40 "$artifacts/log.txt"
        status=1
    else
        grep -E "cov:" "$artifacts/log.txt" | tail -n 1 || true
    fi
    summary+=("$harness: ${executions:-0} executions, $findings sanitizer reports, exit $exit_code")
done
echo "== summary (${seconds}s per harness)"
printf '%s\n' "${summary[@]}"
exit $status
