#!/usr/bin/env bash
# Validates what the package tells the desktop, as distributions' own checks do:
#   check_metadata.sh GENERATED_DIR SOURCE_DIR VERSION
# GENERATED_DIR is installer/generated in the build tree (the configured desktop entry,
# AppStream metadata, MIME type, rendered icons, compressed manual page and changelog).
set -euo pipefail
generated="$1"
source_dir="$2"
version="$3"

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
need() {
  command -v "$1" >/dev/null || { echo "FAIL: $1 not found ($2; bash installer/setup.sh deps installs it)" >&2; exit 1; }
}
need desktop-file-validate desktop-file-utils
need appstreamcli appstream
need update-mime-database shared-mime-info
need xmllint libxml2-utils
need man man-db

desktop="$(ls "$generated"/*.desktop)"
metainfo="$(ls "$generated"/*.metainfo.xml)"
mime="$generated/throttlescope.xml"
app_id="$(basename "$desktop" .desktop)"

echo "== desktop-file-validate $(basename "$desktop")"
# Hints and warnings count as failures too: the entry is ours, it can be clean.
output="$(desktop-file-validate "$desktop" 2>&1)" || fail "desktop-file-validate: errors"
[ -z "$output" ] || { printf '%s\n' "$output"; fail "desktop-file-validate reported issues"; }

echo "== appstreamcli validate --no-net --strict $(basename "$metainfo")"
appstreamcli validate --no-net --strict "$metainfo" || fail "appstreamcli validate"
newest_release="$(sed -n 's/.*<release version="\([^"]*\)".*/\1/p' "$metainfo" | head -n 1)"
[ "$newest_release" = "$version" ] ||
  fail "the newest AppStream release is $newest_release, the project's version $version (resources/desktop/throttlescope.metainfo.xml.in)"
grep -q "<launchable type=\"desktop-id\">$app_id.desktop</launchable>" "$metainfo" ||
  fail "the AppStream launchable does not name $app_id.desktop"
for screenshot in $(sed -n 's|.*<image type="source">.*/\([^/<]*\)</image>.*|\1|p' "$metainfo"); do
  [ -f "$source_dir/resources/screenshots/$screenshot" ] ||
    fail "AppStream names screenshot $screenshot, not in resources/screenshots/"
done

echo "== the MIME type: well-formed, accepted by update-mime-database, named by the desktop entry"
xmllint --noout "$mime" || fail "xmllint $mime"
mime_root="$(mktemp -d)"
trap 'rm -rf "$mime_root"' EXIT
mkdir -p "$mime_root/packages"
cp /usr/share/mime/packages/freedesktop.org.xml "$mime" "$mime_root/packages/"
output="$(update-mime-database -V "$mime_root" 2>&1)" || fail "update-mime-database"
if printf '%s\n' "$output" | grep -iE "warning|error|invalid|unknown" >&2; then
  fail "update-mime-database complained about $mime"
fi
mime_type="$(sed -n 's/.*<mime-type type="\([^"]*\)".*/\1/p' "$mime")"
grep -q "^MimeType=.*$mime_type;" "$desktop" || fail "the desktop entry does not open $mime_type"
grep -q "^$mime_type:" "$mime_root/globs2" 2>/dev/null || grep -q "$mime_type" "$mime_root/globs2" ||
  fail "update-mime-database did not register $mime_type"

echo "== the icon: the SVG and every rendered size"
[ -s "$source_dir/resources/icons/throttlescope.svg" ] || fail "no SVG icon"
xmllint --noout "$source_dir/resources/icons/throttlescope.svg" || fail "the SVG icon is not well-formed"
for png in "$generated"/icons/hicolor/*/apps/"$app_id".png; do
  size="$(basename "$(dirname "$(dirname "$png")")")"
  # The PNG header: width and height, big-endian, at bytes 16 and 20.
  actual="$(od -An -tu1 -j16 -N8 "$png" | awk '{printf "%dx%d", $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8}')"
  [ "$actual" = "$size" ] || fail "$png is $actual, its directory says $size"
done
grep -q "^Icon=$app_id$" "$desktop" || fail "the desktop entry's Icon is not $app_id"

echo "== the manual page: no warnings from man/groff"
output="$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$source_dir/docs/throttlescope.1" 2>&1 >/dev/null)" ||
  fail "man could not format docs/throttlescope.1"
[ -z "$output" ] || { printf '%s\n' "$output" >&2; fail "man --warnings on docs/throttlescope.1"; }
grep -q "^\.TH THROTTLESCOPE 1 .*\"throttlescope $version\"" "$source_dir/docs/throttlescope.1" ||
  fail "the manual's .TH line does not name version $version"

echo "== the Debian changelog names the version"
head -n 1 "$source_dir/resources/debian/changelog" | grep -q "^throttlescope ($version) " ||
  fail "resources/debian/changelog does not start with version $version"

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "PASS: desktop entry, AppStream metadata, MIME type, icons, manual page, changelog"
