#!/usr/bin/env bash
# The shell steps of qtail's CI examples, one subcommand per step. Copy this
# file to ci/qtail-ci.sh of the repository that holds the roots; the
# workflows of examples/ci/github and examples/ci/atlantis call it, and
# examples/ci/rehearse.sh runs every step against qtail's sandbox.
#
#   qtail-ci.sh fetch VERSION DIST       download the release archives of VERSION and their SHA256SUMS into DIST
#   qtail-ci.sh mirror DIST              check the archives against SHA256SUMS, lay them out as a filesystem
#                                        mirror in $QTAIL_HOME/mirror and write $QTAIL_HOME/terraformrc
#   qtail-ci.sh lock ROOT...             write each root's .terraform.lock.hcl for linux_amd64, darwin_arm64 and
#                                        darwin_amd64 (run by a person, who commits the lock files)
#   qtail-ci.sh plan ROOT PLAN.json      terraform init with the lock file, plan, and the plan as JSON
#   qtail-ci.sh tailnet ROOT             print the platform root's output tailnet, for ROOT's TF_VAR_tailnet
#   qtail-ci.sh binary ROOT              print the path of the provider binary that terraform init installed
#   qtail-ci.sh review REPORT PLAN.json... review the plans together (the code goes to $GITHUB_OUTPUT)
#   qtail-ci.sh comment PR REPORT        post REPORT as the pull request's review comment, or update it
#   qtail-ci.sh verdict CODE             fail when the review's code is 1 (Tailscale refuses the policy)
#   qtail-ci.sh fork-notice REPORT       the comment for a pull request from a fork, which is not planned
#   qtail-ci.sh drift ROOT REPORT        plan -detailed-exitcode; on drift, review it and fail
#   qtail-ci.sh atlantis-project         Atlantis, in a project's plan: review this project's plan
#   qtail-ci.sh atlantis-review          Atlantis, after a plan: review every project's plan, one comment
#
# Settings (environment):
#   QTAIL_HOME           where the mirror and the CLI configuration go (default $RUNNER_TEMP/qtail);
#                        once $QTAIL_HOME/terraformrc exists, every terraform run of this script uses it
#   QTAIL_PLATFORM_ROOT  the root whose output `tailnet` the other roots read as TF_VAR_tailnet
#                        (default regions/platform next to this script's folder ci/)
#   QTAIL_RELEASE_REPO   where the release archives are published (default qtail/terraform-provider-qtail)
#   QTAIL                the review command; default: the provider binary installed in the platform root
#
# Once qtail is on the Terraform Registry, drop the fetch and mirror steps:
# terraform init then downloads the provider from the Registry, and the lock
# files made from the mirror stay valid (the Registry serves the same zips).
#
# No pipe into a reader that stops early (grep -q, head): under pipefail the
# writer would die of SIGPIPE at random. Outputs are captured, then matched.
set -euo pipefail

marker='<!-- qtail-review -->'
home=${QTAIL_HOME:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}/qtail}
mirror="$home/mirror"
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
platform_root=${QTAIL_PLATFORM_ROOT:-$script_dir/../regions/platform}
address=registry.terraform.io/qtail/qtail

die() {
  echo "error: $*" >&2
  exit 1
}

# The CLI configuration that `mirror` wrote, for every terraform run below.
if [ -z "${TF_CLI_CONFIG_FILE:-}" ] && [ -f "$home/terraformrc" ]; then
  export TF_CLI_CONFIG_FILE="$home/terraformrc"
fi
export TF_IN_AUTOMATION=1 TF_INPUT=0

sha256() {
  if command -v sha256sum >/dev/null; then
    sha256sum "$1" | cut -d' ' -f1
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

cmd_fetch() {
  [ $# -eq 2 ] || die "usage: qtail-ci.sh fetch VERSION DIST"
  local version=${1#v} dist=$2
  mkdir -p "$dist"
  gh release download "v$version" --repo "${QTAIL_RELEASE_REPO:-qtail/terraform-provider-qtail}" --dir "$dist" --clobber \
    --pattern "terraform-provider-qtail_${version}_*.zip" --pattern "terraform-provider-qtail_${version}_SHA256SUMS"
}

cmd_mirror() {
  [ $# -eq 1 ] || die "usage: qtail-ci.sh mirror DIST"
  local dist=$1 sums zip name want have n=0
  shopt -s nullglob
  local all=("$dist"/terraform-provider-qtail_*_SHA256SUMS)
  local zips=("$dist"/terraform-provider-qtail_*.zip)
  shopt -u nullglob
  [ ${#all[@]} -eq 1 ] || die "want one terraform-provider-qtail_VERSION_SHA256SUMS in $dist, found ${#all[@]}"
  [ ${#zips[@]} -gt 0 ] || die "no terraform-provider-qtail_VERSION_OS_ARCH.zip in $dist"
  sums=${all[0]}
  mkdir -p "$mirror/$address"
  for zip in "${zips[@]}"; do
    name=$(basename "$zip")
    want=$(grep " $name\$" "$sums" | cut -d' ' -f1 || true)
    have=$(sha256 "$zip")
    [ -n "$want" ] || die "$(basename "$sums") does not list $name"
    [ "$want" = "$have" ] || die "$name has the checksum $have, $(basename "$sums") says $want"
    cp "$zip" "$mirror/$address/$name"
    n=$((n + 1))
  done
  # The packed layout, HOSTNAME/NAMESPACE/TYPE/terraform-provider-TYPE_VERSION_OS_ARCH.zip,
  # is what terraform init and terraform providers lock read.
  cat >"$home/terraformrc" <<RC
provider_installation {
  filesystem_mirror {
    path    = "$mirror"
    include = ["$address"]
  }
  direct {
    exclude = ["$address"]
  }
}
RC
  if [ -n "${GITHUB_ENV:-}" ]; then echo "TF_CLI_CONFIG_FILE=$home/terraformrc" >>"$GITHUB_ENV"; fi
  echo "mirror: $n archives of qtail in $mirror; export TF_CLI_CONFIG_FILE=$home/terraformrc"
}

cmd_lock() {
  [ $# -ge 1 ] || die "usage: qtail-ci.sh lock ROOT..."
  local root from=()
  if [ -d "$mirror/$address" ]; then from=(-fs-mirror="$mirror"); fi
  for root in "$@"; do
    # providers lock reads the modules, which terraform get installs.
    terraform -chdir="$root" get >/dev/null
    # ${from[@]+...}: an empty array under set -u in the bash 3 of macOS.
    terraform -chdir="$root" providers lock ${from[@]+"${from[@]}"} \
      -platform=linux_amd64 -platform=darwin_arm64 -platform=darwin_amd64
  done
}

# is_platform ROOT: whether ROOT is the platform root.
is_platform() {
  [ "$(cd "$1" && pwd -P)" = "$(cd "$platform_root" && pwd -P)" ]
}

# tailnet ROOT: the platform root's output `tailnet`, which every other root
# takes as TF_VAR_tailnet; nothing for the platform root itself. Read from
# the platform root's state: apply it first.
cmd_tailnet() {
  [ $# -eq 1 ] || die "usage: qtail-ci.sh tailnet ROOT"
  local tailnet
  if is_platform "$1"; then return 0; fi
  terraform -chdir="$platform_root" init -input=false -lockfile=readonly >/dev/null
  if ! tailnet=$(terraform -chdir="$platform_root" output -json tailnet); then
    die "the platform root $platform_root has no output tailnet in its state: apply it first (the other roots read it)"
  fi
  echo "$tailnet"
}

# prepare ROOT: terraform init with the committed lock file, and the
# platform root's output `tailnet` as TF_VAR_tailnet for the other roots.
# Their other variables come from the terraform.tfvars committed in each
# root (IDs, not secrets) or from TF_VAR_ variables of the job.
prepare() {
  local root=$1
  [ -f "$root/.terraform.lock.hcl" ] || die "$root has no .terraform.lock.hcl: run qtail-ci.sh lock $root and commit it"
  terraform -chdir="$root" init -input=false -lockfile=readonly
  if [ -z "${TF_VAR_tailnet:-}" ] && ! is_platform "$root"; then
    TF_VAR_tailnet=$(cmd_tailnet "$root")
    export TF_VAR_tailnet
  fi
}

cmd_plan() {
  [ $# -eq 2 ] || die "usage: qtail-ci.sh plan ROOT PLAN.json"
  local root=$1 out=$2
  prepare "$root"
  terraform -chdir="$root" plan -input=false -lock=false -out=plan.out
  mkdir -p "$(dirname "$out")"
  terraform -chdir="$root" show -json plan.out >"$out"
}

# binary ROOT: the provider binary under ROOT/.terraform/providers, through
# the symlinks that a plugin cache or an unpacked mirror leaves there.
cmd_binary() {
  [ $# -eq 1 ] || die "usage: qtail-ci.sh binary ROOT"
  local dir="$1/.terraform/providers/$address" bin
  [ -d "$dir" ] || die "no qtail provider in $dir: run terraform init in $1 first"
  bin=$(find -L "$dir" -type f -name 'terraform-provider-qtail_v*' -print -quit)
  [ -n "$bin" ] || die "no terraform-provider-qtail_v* binary under $dir"
  (cd "$(dirname "$bin")" && echo "$PWD/$(basename "$bin")")
}

review_command() {
  if [ -n "${QTAIL:-}" ]; then
    echo "$QTAIL"
    return
  fi
  # The review needs the binary only: no backend, no state.
  terraform -chdir="$platform_root" init -input=false -backend=false -lockfile=readonly >/dev/null
  cmd_binary "$platform_root"
}

cmd_review() {
  [ $# -ge 2 ] || die "usage: qtail-ci.sh review REPORT PLAN.json..."
  local report=$1 qtail code
  shift
  qtail=$(review_command)
  rm -f "$report"
  set +e
  "$qtail" review -o "$report" "$@"
  code=$?
  set -e
  if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "code=$code" >>"$GITHUB_OUTPUT"; fi
  # 0: no access change, 2: access changes; 1: an error, or Tailscale
  # refuses the planned policy (then the report says why).
  if [ "$code" -eq 1 ] && [ ! -s "$report" ]; then die "the review failed and wrote no report"; fi
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat "$report" >>"$GITHUB_STEP_SUMMARY"; fi
  echo "review: exit code $code, report in $report"
}

cmd_comment() {
  [ $# -eq 2 ] || die "usage: qtail-ci.sh comment PR REPORT"
  local pr=$1 report=$2 repo=${QTAIL_COMMENT_REPO:-${GITHUB_REPOSITORY:-}} first ids id
  [ -n "$repo" ] || die "set GITHUB_REPOSITORY (or QTAIL_COMMENT_REPO) to OWNER/REPO of the pull request"
  case $pr in '' | *[!0-9]*) die "the pull request number is $pr" ;; esac
  IFS= read -r first <"$report" || true
  [ "$first" = "$marker" ] || die "$report does not start with $marker"
  ids=$(gh api "repos/$repo/issues/$pr/comments" --paginate \
    --jq ".[] | select(.body | startswith(\"$marker\")) | .id")
  id=${ids%%$'\n'*}
  if [ -n "$id" ]; then
    gh api -X PATCH "repos/$repo/issues/comments/$id" -F body=@"$report" >/dev/null
    echo "comment: updated $id on $repo#$pr"
  else
    gh api -X POST "repos/$repo/issues/$pr/comments" -F body=@"$report" >/dev/null
    echo "comment: posted on $repo#$pr"
  fi
}

cmd_verdict() {
  [ $# -eq 1 ] || die "usage: qtail-ci.sh verdict CODE"
  if [ "$1" = 1 ]; then
    echo "::error::Tailscale refuses the planned policy file; see the review comment"
    exit 1
  fi
}

cmd_fork_notice() {
  [ $# -eq 1 ] || die "usage: qtail-ci.sh fork-notice REPORT"
  cat >"$1" <<EOF
$marker
## qtail plan review

**Not reviewed**: this pull request comes from a fork. GitHub gives the
workflows of a fork's pull request no OIDC identity token and no secrets, so
its roots are not planned against the tailnet and Qovery, and its code never
runs with this repository's credentials. A maintainer who has read the change
can push its branch to this repository: the pull request opened from that
branch is planned and reviewed.
EOF
}

cmd_drift() {
  [ $# -eq 2 ] || die "usage: qtail-ci.sh drift ROOT REPORT"
  local root=$1 report=$2 code
  prepare "$root"
  set +e
  terraform -chdir="$root" plan -input=false -lock=false -detailed-exitcode -out=plan.out
  code=$?
  set -e
  case $code in
    0)
      echo "drift: $root matches its configuration"
      return 0
      ;;
    2) ;;
    *) die "the plan of $root failed (exit code $code)" ;;
  esac
  terraform -chdir="$root" show -json plan.out >"$root/drift.json"
  cmd_review "$report" "$root/drift.json" || true
  echo "::error::$root has drifted from its configuration; the review shows what the next apply changes back"
  exit 1
}

# Atlantis runs a project's custom steps in its folder, with PLANFILE; the
# project's review is the end of its plan comment. Exit code 2 (access
# changes) is not a failure.
cmd_atlantis_project() {
  : "${PLANFILE:?Atlantis sets PLANFILE}"
  local qtail code
  terraform show -json "$PLANFILE" >"$PLANFILE.json"
  qtail=$(cmd_binary .)
  set +e
  "$qtail" review "$PLANFILE.json"
  code=$?
  set -e
  [ "$code" -ne 1 ] || exit 1
}

# Atlantis's post-workflow hook runs at the clone's root (DIR), with the
# base repository's owner and name: the comment goes to the pull request of
# the base repository, even when its head is a fork.
cmd_atlantis_review() {
  : "${DIR:?Atlantis sets DIR}" "${PULL_NUM:?}" "${BASE_REPO_OWNER:?}" "${BASE_REPO_NAME:?}"
  local plans=() p report="$DIR/qtail-review.md"
  while IFS= read -r p; do plans+=("$p"); done < <(find "$DIR" -name '*.tfplan.json' | sort)
  [ ${#plans[@]} -gt 0 ] || return 0
  QTAIL=$(cmd_binary "$(dirname "${plans[0]}")")
  export QTAIL
  cmd_review "$report" "${plans[@]}"
  QTAIL_COMMENT_REPO="$BASE_REPO_OWNER/$BASE_REPO_NAME" cmd_comment "$PULL_NUM" "$report"
}

[ $# -ge 1 ] || die "usage: qtail-ci.sh fetch|mirror|lock|plan|tailnet|binary|review|comment|verdict|fork-notice|drift|atlantis-project|atlantis-review ARGS..."
step=$1
shift
case $step in
  fetch) cmd_fetch "$@" ;;
  mirror) cmd_mirror "$@" ;;
  lock) cmd_lock "$@" ;;
  plan) cmd_plan "$@" ;;
  tailnet) cmd_tailnet "$@" ;;
  binary) cmd_binary "$@" ;;
  review) cmd_review "$@" ;;
  comment) cmd_comment "$@" ;;
  verdict) cmd_verdict "$@" ;;
  fork-notice) cmd_fork_notice "$@" ;;
  drift) cmd_drift "$@" ;;
  atlantis-project) cmd_atlantis_project "$@" ;;
  atlantis-review) cmd_atlantis_review "$@" ;;
  *) die "unknown step $step" ;;
esac
