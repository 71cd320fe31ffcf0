#!/usr/bin/env bash
# The package tests' steps (tests/package/CMakeLists.txt):
#   package.sh build  BUILD_DIR    cpack -G DEB into BUILD_DIR/package; prints contents and size
#   package.sh lint   BUILD_DIR    lintian: no errors (warnings and notes are printed)
#   package.sh install BUILD_DIR SAMPLE   install_test.sh on the package
set -euo pipefail
step="$1"
build_dir="$(realpath "$2")"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$build_dir/package"

the_deb() {
  local debs=("$out"/*.deb)
  [ -f "${debs[0]}" ] || { echo "FAIL: no package in $out (the package_deb test makes it)" >&2; exit 1; }
  printf '%s\n' "${debs[0]}"
}

case "$step" in
  build)
    rm -rf "$out"
    mkdir -p "$out"
    cpack -G DEB -B "$out" --config "$build_dir/CPackConfig.cmake"
    deb="$(the_deb)"
    dpkg-deb --info "$deb"
    dpkg-deb --contents "$deb"
    echo "package: $(basename "$deb"), $(stat -c %s "$deb") bytes"
    ;;
  lint)
    command -v lintian >/dev/null || { echo "FAIL: lintian not found (bash installer/setup.sh deps installs it)" >&2; exit 1; }
    # Errors fail the test; warnings, notes and pedantic tags are shown for the record.
    lintian --fail-on error --tag-display-limit 0 --display-info --pedantic "$(the_deb)"
    echo "PASS: lintian found no errors"
    ;;
  install)
    exec bash "$here/install_test.sh" "$(the_deb)" "$3"
    ;;
  *)
    echo "usage: $0 build|lint|install BUILD_DIR [SAMPLE]" >&2
    exit 2
    ;;
esac
