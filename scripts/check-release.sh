#!/usr/bin/env bash
# Checks what `goreleaser release --snapshot` left in dist/: one zip per
# platform the Terraform Registry serves qtail for, each holding the provider
# binary, and a SHA256SUMS file that lists every zip with its right checksum,
# plus the registry manifest.
set -euo pipefail
dist=${1:-dist}
platforms="linux_amd64 linux_arm64 darwin_amd64 darwin_arm64 windows_amd64 windows_arm64"

# No pipelines into grep -q or head here: under pipefail, a reader that exits
# at its first match kills the writer with SIGPIPE and fails the check at
# random. Outputs are captured whole, then matched.
shopt -s nullglob
sums_files=("$dist"/terraform-provider-qtail_*_SHA256SUMS)
shopt -u nullglob
sums=${sums_files[0]:-}
if [ -z "$sums" ]; then
  echo "error: no terraform-provider-qtail_*_SHA256SUMS in $dist" >&2
  exit 1
fi
version=$(basename "$sums" | sed -e 's/^terraform-provider-qtail_//' -e 's/_SHA256SUMS$//')
echo "version $version"
# A plain version: Terraform's `~> 0.1` never selects a prerelease (0.1.1-rc1)
# or a build with metadata, so a snapshot is 0.1.YYYYMMDDhhmmss.
case $version in
  *-* | *+*)
    echo "error: $version is a prerelease: version = \"~> 0.1\" does not select it; snapshots are MAJOR.MINOR.YYYYMMDDhhmmss" >&2
    exit 1
    ;;
esac

fail=0
for p in $platforms; do
  zip="terraform-provider-qtail_${version}_${p}.zip"
  if [ ! -f "$dist/$zip" ]; then
    echo "error: $zip is missing" >&2
    fail=1
    continue
  fi
  bin="terraform-provider-qtail_v${version}"
  case $p in windows_*) bin="$bin.exe" ;; esac
  listing=$(unzip -l "$dist/$zip")
  if ! grep -q " $bin\$" <<<"$listing"; then
    echo "error: $zip does not hold $bin" >&2
    fail=1
  fi
  want=$(grep " $zip\$" "$sums" | cut -d' ' -f1 || true)
  have=$(sha256sum "$dist/$zip" | cut -d' ' -f1)
  if [ "$want" != "$have" ]; then
    echo "error: $sums does not list $zip with its checksum $have" >&2
    fail=1
  else
    echo "ok $zip $have"
  fi
done
manifest="terraform-provider-qtail_${version}_manifest.json"
if ! grep -q " $manifest\$" "$sums"; then
  echo "error: $sums does not list $manifest" >&2
  fail=1
fi
count=$(ls "$dist"/terraform-provider-qtail_*.zip | wc -l)
if [ "$count" -ne 6 ]; then
  echo "error: $count archives in $dist, want 6" >&2
  fail=1
fi
[ "$fail" -eq 0 ] && echo "release snapshot: 6 archives and $(basename "$sums") are consistent"
exit "$fail"
