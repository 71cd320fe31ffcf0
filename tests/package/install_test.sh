#!/usr/bin/env bash
# Installs the package with apt into a clean Debian 12 root and runs the installed binary there,
# headless: what an operator gets from `apt install ./throttlescope_*.deb` on a fresh system.
#
#   install_test.sh PACKAGE.deb SAMPLE.ndjson
#
# The clean root is made once with `debootstrap --variant=minbase bookworm` and kept as a
# tarball in $THROTTLESCOPE_TEST_CACHE (default /var/cache/throttlescope-tests, outside the
# source tree); each run unpacks a fresh copy. The packages apt downloads are kept there too,
# so a rerun downloads nothing. Needs root (debootstrap, chroot, mount) and a Debian mirror
# ($THROTTLESCOPE_TEST_MIRROR, default http://deb.debian.org/debian): without one it fails,
# saying so. Leave the package tests out with `ctest -LE package`.
set -euo pipefail

deb="$(realpath "$1")"
sample="$(realpath "$2")"
cache="${THROTTLESCOPE_TEST_CACHE:-/var/cache/throttlescope-tests}"
mirror="${THROTTLESCOPE_TEST_MIRROR:-http://deb.debian.org/debian}"
suite=bookworm
pristine="$cache/$suite-minbase.tar"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
step() { echo "== $* ($(date +%T))"; }

[ "$(id -u)" -eq 0 ] || fail "the install test needs root (debootstrap, chroot, mount); run it as root, or leave the package tests out: ctest -LE package"
for tool in debootstrap chroot mount umount tar flock; do
  command -v "$tool" >/dev/null || fail "$tool not found (bash installer/setup.sh deps installs what the tests need)"
done
[ -f "$deb" ] || fail "no package at $deb"

mkdir -p "$cache/archives" "$cache/debootstrap"
# One run at a time per cache: the pristine root and apt's downloads are shared.
exec 9>"$cache/lock"
flock 9

# The root lives in memory (a tmpfs of its own): unpacking, installing and throwing it away
# take seconds instead of a disk's minutes.
run="$(mktemp -d /var/tmp/throttlescope-install.XXXXXX)"
root="$run/root"
cleanup() {
  # Unmount before deleting, and never delete across a mount point.
  if mountpoint -q "$root/proc" 2>/dev/null; then umount "$root/proc" || umount -l "$root/proc"; fi
  if mountpoint -q "$run" 2>/dev/null; then umount "$run" || umount -l "$run"; fi
  rm -rf --one-file-system "$run"
}
trap cleanup EXIT
mount -t tmpfs -o size=3g,mode=0755 throttlescope-install "$run" ||
  fail "could not mount a tmpfs for the clean root at $run"

in_root() {
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive "$@"
}

if [ ! -s "$pristine" ]; then
  step "making a clean Debian 12 root: debootstrap --variant=minbase $suite from $mirror (once; cached in $pristine)"
  mkdir -p "$root"
  if ! debootstrap --variant=minbase --cache-dir="$cache/debootstrap" "$suite" "$root" "$mirror" \
      >"$run/debootstrap.log" 2>&1; then
    tail -n 15 "$run/debootstrap.log" >&2
    fail "debootstrap could not make a Debian 12 root from $mirror (is the mirror reachable? set THROTTLESCOPE_TEST_MIRROR to another one). The package install test needs a Debian mirror; it is not skipped."
  fi
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  mount -t proc proc "$root/proc"
  in_root apt-get update -q >"$run/update.log" 2>&1 || { cat "$run/update.log" >&2; fail "apt-get update failed in the new root ($mirror)"; }
  in_root apt-get clean
  umount "$root/proc"
  tar -C "$root" -cf "$pristine.tmp" .
  mv "$pristine.tmp" "$pristine"
  rm -rf --one-file-system "$root"
fi

step "unpacking a fresh copy of the clean root"
mkdir -p "$root"
tar -C "$root" -xf "$pristine"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
# apt's downloads from earlier runs.
cp -a "$cache/archives/." "$root/var/cache/apt/archives/"
cp "$deb" "$root/tmp/"
cp "$sample" "$root/tmp/sample.ndjson"
package="/tmp/$(basename "$deb")"

step "apt-get install $package (its Depends from the mirror)"
# --force-unsafe-io: dpkg skips its fsyncs, a root thrown away after the test needs none.
install() {
  in_root apt-get install -y -q --no-install-recommends -o Dpkg::Options::=--force-unsafe-io \
    "$package" >"$run/install.log" 2>&1
}
if ! install; then
  # The cached package lists may name versions the mirror has replaced since.
  in_root apt-get update -q >>"$run/install.log" 2>&1 || true
  install || { tail -n 30 "$run/install.log" >&2; fail "apt-get could not install the package into the clean root"; }
fi
grep -E "^(Need to get|After this operation|[0-9]+ upgraded)" "$run/install.log" || true
# Keep what apt downloaded for the next run.
cp -n "$root"/var/cache/apt/archives/*.deb "$cache/archives/" 2>/dev/null || true

step "running the installed binary"
check() { # description, then the command; fails the test with its output
  local what="$1"
  shift
  local output
  if ! output="$("$@" 2>&1)"; then
    printf '%s\n' "$output" | tail -n 20 >&2
    fail "$what"
  fi
  printf '%s\n' "$output"
}
version="$(check "throttlescope --version" in_root throttlescope --version)"
printf '%s\n' "$version"
expected_version="$(dpkg-deb -f "$deb" Version)"
[ "$(printf '%s\n' "$version" | head -n 1)" = "throttlescope $expected_version" ] ||
  fail "--version does not say throttlescope $expected_version"

report="$(check "report --json on the sample" in_root throttlescope report --json /tmp/sample.ndjson)"
events="$(printf '%s\n' "$report" | sed -n 's/^    "events": \([0-9]*\),$/\1/p')"
[ -n "$events" ] && [ "$events" -gt 0 ] || fail "report --json counted no events: $(printf '%s' "$report" | head -c 300)"
echo "report: $events events"

status=0
in_root throttlescope report --fail-on throttles /tmp/sample.ndjson >/dev/null 2>&1 || status=$?
[ "$status" -eq 3 ] || fail "report --fail-on throttles exited $status, not 3"

# The built-in policies: each installed file is a policy the binary knows by name, and loads
# from the file as well.
policies=0
for file in "$root"/usr/share/throttlescope/policies/*.json; do
  name="$(basename "$file" .json)"
  check "built-in policy $name" in_root throttlescope report --policy "$name" /tmp/sample.ndjson >/dev/null
  check "policy file $name.json" in_root throttlescope report --policy "/usr/share/throttlescope/policies/$name.json" /tmp/sample.ndjson >/dev/null
  policies=$((policies + 1))
done
[ "$policies" -ge 5 ] || fail "only $policies policies in /usr/share/throttlescope/policies"
echo "policies: $policies built in, each found by name and by file"

# A workspace needs Qt's SQLite driver, a plugin no binary links: a Depends of its own.
check "import into a workspace" in_root throttlescope import --workspace /tmp/w.tsws /tmp/sample.ndjson >/dev/null
check "report --workspace" in_root throttlescope report --workspace /tmp/w.tsws --json >/dev/null
echo "workspace: imported and reported"

# The dashboard module's libraries are all installed (dpkg-shlibdeps saw it too).
module="$(in_root dpkg -L throttlescope | grep '/throttlescope-dashboard\.so$')"
missing="$(in_root ldd "$module" | grep 'not found' || true)"
[ -z "$missing" ] || fail "the dashboard module misses libraries: $missing"
# And it runs: the window rendered offscreen (no display in the root), taken after a fixed
# delay rather than when the file is read.
check "the dashboard, offscreen" in_root env QT_QPA_PLATFORM=offscreen timeout 120 \
  throttlescope /tmp/sample.ndjson --screenshot /tmp/shot.png --size 800x600 \
  --screenshot-delay 2000 >/dev/null
[ -s "$root/tmp/shot.png" ] || fail "the dashboard wrote no screenshot"
echo "dashboard: module loads, screenshot written"

for path in usr/share/man/man1/throttlescope.1.gz usr/share/applications/*.desktop \
  usr/share/metainfo/*.metainfo.xml usr/share/mime/packages/throttlescope.xml \
  usr/share/icons/hicolor/scalable/apps/*.svg usr/share/icons/hicolor/48x48/apps/*.png \
  usr/share/doc/throttlescope/README.md usr/share/doc/throttlescope/docs/report-json.md \
  usr/share/doc/throttlescope/copyright usr/share/doc/throttlescope/changelog.gz; do
  compgen -G "$root/$path" >/dev/null || fail "not installed: /$path"
done
echo "files: manual page, desktop entry, AppStream data, MIME type, icons, documentation"
in_root dpkg -s throttlescope | grep -E "^(Version|Installed-Size|Depends):"
step "PASS: the package installs into a clean Debian 12 root and runs there"
