#!/usr/bin/env bash
# Throttlescope set-up, build, test and launch, for Debian 12 (run as root, or with sudo).
# Idempotent: installs only the packages that are missing, reuses the build directory.
#
#   installer/setup.sh demo   install what is missing, build, launch the dashboard on the demo
#   installer/setup.sh test   install what is missing, build, lint what changed, run the whole
#                             test suite
#   installer/setup.sh lint   clang-format --dry-run on the changed lines and clang-tidy (preset
#                             tidy) on the C++ files changed since THROTTLESCOPE_LINT_BASE (default: the commit before
#                             HEAD), uncommitted changes included
#   installer/setup.sh build  install what is missing and build only
#   installer/setup.sh release  install what is missing, build the profile-guided release
#                             (build/release: the binary to package and to benchmark)
#   installer/setup.sh deps   install what is missing only
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
preset="${THROTTLESCOPE_PRESET:-dev}"
build_dir="$root/build/$preset"

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  qt6-base-dev qt6-base-dev-tools libqt6sql6-sqlite qt6-svg-dev
  qt6-httpserver-dev qt6-websockets-dev   # Qt6HttpServer's CMake package needs WebSockets too
  libqcustomplot-dev libsimdjson-dev zlib1g-dev libgl-dev libmimalloc-dev libabsl-dev
  jq nginx-light xvfb xauth               # jq: benchmark reference; nginx: limiter ground truth
  clickhouse-server clickhouse-client     # a real log store for the poller's tests (tests/poll)
  python3                                 # the misbehaving stores of tests/poll/hostile_store.py
  clang libclang-rt-14-dev                # libFuzzer harnesses
  clang-format clang-tidy                 # lint: the changed files (installer/setup.sh lint)
  fonts-dejavu-core
  python3-yaml                            # reads whatif --emit resilience4j back (tst_clientsettings)
  # The package (installer/CMakeLists.txt) and its tests (tests/package/): the icon's PNG sizes,
  # CPack's Depends (dpkg-shlibdeps, file), the validators, and the clean Debian 12 root the
  # package is installed into.
  librsvg2-bin file dpkg-dev
  desktop-file-utils appstream shared-mime-info libxml2-utils man-db lintian debootstrap
)

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

install_deps() {
  local missing=()
  for pkg in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
  # The OpenTelemetry JS interop test needs node and npm; a machine may already have them from
  # another source (npm bundled with nodejs), so only Debian's packages are added when absent.
  if ! command -v npm >/dev/null 2>&1; then
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm
  fi
}

build() {
  cd "$root"
  # ccache hits across clones of the repo (CI builds a fresh clone): paths relative to the
  # checkout, and the build directory left out of the hash of -g builds.
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
}

# The profile-guided release build: an instrumented build (preset pgo-train) runs the training
# workload, then the release preset compiles with the profile it wrote. Neither uses ccache.
build_release() {
  cd "$root"
  local profile="$root/build/pgo-profile"
  cmake --preset pgo-train >/dev/null
  cmake --build --preset pgo-train --target throttlescope
  rm -rf "$profile"
  bash "$here/pgo-train.sh" "$root/build/pgo-train/app/throttlescope"
  cmake --preset release >/dev/null
  # Every object again: ninja does not know that a new profile changes them.
  cmake --build --preset release --clean-first
  "$root/build/release/app/throttlescope" --version
}

# What this change wrote in C++: "FILE FIRST:LAST" for each hunk of the diff since
# THROTTLESCOPE_LINT_BASE (default: the commit before HEAD; a merge: all it brings), uncommitted
# changes included, renames followed (a moved file's old lines are not new). Nothing when there
# is no base to compare with (a clone of one commit).
changed_cpp_lines() {
  local base="${THROTTLESCOPE_LINT_BASE:-HEAD~1}"
  if ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
    echo "lint: no $base to compare with; nothing linted" >&2
    return 0
  fi
  git diff -U0 -M --diff-filter=ACMR "$base" -- '*.cpp' '*.h' ':!tests/data' |
    awk '/^\+\+\+ b\// { file = substr($0, 7) }
         /^@@/ { match($0, /\+[0-9]+(,[0-9]+)?/); hunk = substr($0, RSTART + 1, RLENGTH - 1)
                 n = split(hunk, part, ","); count = (n > 1) ? part[2] : 1
                 if (count > 0) print file, part[1] ":" part[1] + count - 1 }'
}

# clang-format on the lines a change wrote (not the whole file: a small change to an old file
# need not reformat it); clang-tidy (.clang-tidy) on the changed product sources, with the tidy
# preset's compile database (clang's own flags); a changed header is checked through the .cpp of
# the same name. Any finding fails.
lint() {
  cd "$root"
  local changes
  changes="$(changed_cpp_lines)"
  if [ -z "$changes" ]; then
    echo "lint: no C++ line changed"
    return 0
  fi
  local files file
  mapfile -t files < <(printf '%s\n' "$changes" | cut -d' ' -f1 | sort -u)
  echo "lint: clang-format on the lines changed in ${#files[@]} file(s)"
  for file in "${files[@]}"; do
    local lines=()
    mapfile -t lines < <(printf '%s\n' "$changes" | awk -v f="$file" '$1 == f { print "--lines=" $2 }')
    clang-format --dry-run --Werror "${lines[@]}" "$file"
  done
  local sources=()
  for file in "${files[@]}"; do
    case "$file" in model/*|app/*|widgets/*) ;; *) continue ;; esac
    file="${file%.h}"; file="${file%.cpp}.cpp"
    if [ -f "$file" ]; then sources+=("$root/$file"); fi
  done
  if [ "${#sources[@]}" -eq 0 ]; then
    echo "lint: no product source to tidy"
    return 0
  fi
  cmake --preset tidy >/dev/null
  # Configured only: no product source includes generated code (moc output), so clang-tidy
  # needs nothing but the compile database.
  echo "lint: clang-tidy on ${#sources[@]} product source(s)"
  printf '%s\n' "${sources[@]}" | sort -u |
    xargs -P 2 -n 2 clang-tidy -p "$root/build/tidy" --quiet
}

run_tests() {
  cd "$root"
  export QT_QPA_PLATFORM=offscreen
  ctest --preset "$preset" --output-on-failure
  # Every parser under libFuzzer for a few seconds (clang + ASan/UBSan build in build/fuzz).
  # THROTTLESCOPE_FUZZ_SECONDS=0 skips it; longer runs: tests/fuzz/run_fuzzers.sh 60
  local fuzz_seconds="${THROTTLESCOPE_FUZZ_SECONDS:-5}"
  if [ "$fuzz_seconds" != "0" ]; then
    bash tests/fuzz/run_fuzzers.sh "$fuzz_seconds"
  fi
}

launch_demo() {
  local app="$build_dir/app/throttlescope"
  if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
    echo "setup: no display found; starting the demo inside a virtual X server (xvfb-run)." >&2
    echo "setup: a screenshot of the running dashboard is written to $root/build/demo.png" >&2
    exec xvfb-run -a -s "-screen 0 1600x1000x24" "$app" --demo --screenshot "$root/build/demo.png" --screenshot-delay 8000
  fi
  exec "$app" --demo
}

case "${1:-}" in
  deps) install_deps ;;
  build) install_deps; build ;;
  test) install_deps; build; lint; run_tests ;;
  lint) install_deps; lint ;;
  demo) install_deps; build; launch_demo ;;
  release) install_deps; build_release ;;
  *) echo "usage: $0 demo|test|build|lint|release|deps" >&2; exit 2 ;;
esac
