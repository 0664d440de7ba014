#!/usr/bin/env bash
# Before a release: the version being released (from the tag, without its v)
# must be the tailnet-manifests chart's version, have a section in
# CHANGELOG.md, and be the chart version every example pins.
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
[ "$fail" -eq 0 ] && echo "release $version: chart and changelog agree"
exit "$fail"
