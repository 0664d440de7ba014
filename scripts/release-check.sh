#!/usr/bin/env bash
# Before a release: the version being released (from the tag, without its v)
# must be the tailnet-manifests chart's version, have a section in
# CHANGELOG.md, and be the chart version every example pins (the
# chart_version of each helm_repository block in examples/).
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: release-check.sh VERSION}
chart=$(sed -n 's/^version: *//p' examples/charts/tailnet-manifests/Chart.yaml)
fail=0
if [ "$chart" != "$version" ]; then
  echo "error: examples/charts/tailnet-manifests/Chart.yaml has version $chart, the release is $version" >&2
  fail=1
fi
if ! grep -q "^## $version " CHANGELOG.md && ! grep -q "^## $version\$" CHANGELOG.md; then
  echo "error: CHANGELOG.md has no section \"## $version\"" >&2
  fail=1
fi
# The chart_version of every helm_repository block in examples/ (the
# tailnet-manifests pins; the operator's chart_version is an attribute of
# its own) and the region module's default.
pins=$(find examples -name '*.tf' -not -path '*/.terraform/*' -print0 | xargs -0 awk '
  /^[[:space:]]*#/ { next }
  /helm_repository[[:space:]]*=[[:space:]]*\{/ { inblock = 1; next }
  inblock && /chart_version[[:space:]]*=/ { print FILENAME ": " $0 }
  inblock && /^[[:space:]]*\}/ { inblock = 0 }
  /variable "manifests_chart_version"/ { invar = 1 }
  invar && /default[[:space:]]*=/ { print FILENAME ": " $0; invar = 0 }')
if [ -z "$pins" ]; then
  echo "error: found no tailnet-manifests chart_version in examples/" >&2
  fail=1
fi
while IFS= read -r pin; do
  case "$pin" in
    *"= \"$version\""* | *"= var."*) ;;
    *) echo "error: $pin does not pin the chart at $version" >&2; fail=1 ;;
  esac
done <<<"$pins"
[ "$fail" -eq 0 ] && echo "release $version: chart, changelog and examples agree"
exit "$fail"
