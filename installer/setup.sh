#!/usr/bin/env bash
# Throttlescope set-up, build, test and launch, for Debian 12 (run as root, or with sudo).
# Idempotent: installs only the packages that are missing, reuses the build directory.
#
#   installer/setup.sh demo   install what is missing, build, launch the dashboard on the demo
#   installer/setup.sh test   install what is missing, build, run the whole test suite
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
  test) install_deps; build; run_tests ;;
  demo) install_deps; build; launch_demo ;;
  release) install_deps; build_release ;;
  *) echo "usage: $0 demo|test|build|release|deps" >&2; exit 2 ;;
esac
