#!/usr/bin/env bash
# make install-local: builds the provider as VERSION into Terraform's
# implicit local mirror, where `terraform init` finds it without a registry,
# in place of the previous local build, then runs `terraform init -upgrade`
# in each ROOT.
#
#   scripts/install-local.sh VERSION [ROOT...]
#
# VERSION is a fresh plain version at every build (the Makefile's
# BUILD_VERSION, 0.1.YYYYMMDDhhmmss): Terraform keeps the checksums that a
# lock file records for a version, even with -upgrade, so a rebuild under
# the same version could never be installed again. Roots that locked the
# previous build take the new one with `terraform init -upgrade`. The
# previous local builds are removed, so that a root is never left on one
# silently: its plain `terraform init` fails ("the previously-selected
# version ... is no longer available") until -upgrade.
#
# QTAIL_PLUGIN_DIR overrides the mirror (default ~/.terraform.d/plugins).
set -euo pipefail
[ $# -ge 1 ] || {
  echo "usage: $0 VERSION [ROOT...]" >&2
  exit 2
}
version=$1
shift
line=${version%.*}
patch=${version##*.}
case $patch in
  [0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]) ;;
  *)
    echo "error: $version is not a local build's version (LINE.YYYYMMDDhhmmss)" >&2
    exit 2
    ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
base=${QTAIL_PLUGIN_DIR:-$HOME/.terraform.d/plugins}/registry.terraform.io/qtail/qtail
dir="$base/$version/$(go env GOOS)_$(go env GOARCH)"

removed=()
shopt -s nullglob
for d in "$base/$line".*; do
  v=${d##*/}
  p=${v##*.}
  # Only local builds (a 14-digit patch): a release unzipped here stays.
  if [ "$v" != "$version" ] && [ ${#p} -eq 14 ] && [ -z "${p//[0-9]/}" ]; then
    rm -rf "$d"
    removed+=("$v")
  fi
done
shopt -u nullglob

mkdir -p "$dir"
(cd "$root" && go build -trimpath -ldflags "-X main.version=$version" -o "$dir/terraform-provider-qtail_v$version" .)
echo "installed qtail $version in $dir"
if [ ${#removed[@]} -gt 0 ]; then echo "removed the previous local builds: ${removed[*]}"; fi

for r in "$@"; do
  echo "terraform init -upgrade in $r"
  terraform -chdir="$r" init -upgrade -input=false
done
if [ $# -eq 0 ]; then
  cat <<MSG
In every root that uses qtail, run
  terraform init -upgrade
to select $version and record its checksum in the lock file (or run
make install-local ROOTS="DIR ..."). A root that locked an earlier build
fails a plain terraform init with "the previously-selected version ... is no
longer available" until then.
MSG
fi
