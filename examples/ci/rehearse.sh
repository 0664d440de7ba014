#!/usr/bin/env bash
# A rehearsal of the CI examples on one machine, against qtail's sandbox:
# a copy of examples/multi-region laid out as a platform team's repository
# (regions/platform, regions/us-east-1, regions/eu-west-3, modules/, and
# ci/qtail-ci.sh), which has nothing of qtail but its release archives.
# Every step that the workflows of examples/ci run is run here, in their
# order, through the same ci/qtail-ci.sh; `gh` is a stand-in that serves
# the release from DIST and keeps the pull request's comments in files.
#
#   examples/ci/rehearse.sh DIST WORK
#
# DIST holds terraform-provider-qtail_VERSION_{linux_amd64,darwin_arm64,
# darwin_amd64}.zip and their SHA256SUMS (make release-snapshot's dist/).
# The sandbox's exports must be in the environment (make sandbox writes
# them). go test ./internal/exampletest/ -run TestCIRehearsal runs it.
set -euo pipefail
[ $# -eq 2 ] || {
  echo "usage: $0 DIST WORK" >&2
  exit 2
}
here=$(cd "$(dirname "$0")" && pwd)
examples=$(cd "$here/.." && pwd)
dist=$(cd "$1" && pwd)
work=$2
: "${QOVERY_API_URL:?load the exports of the sandbox first}" "${TF_VAR_organization_id:?}"
: "${QTAIL_SANDBOX_ENVIRONMENT_ID_US_EAST_1:?}" "${QTAIL_SANDBOX_ENVIRONMENT_ID_EU_WEST_3:?}"

shopt -s nullglob
sums=("$dist"/terraform-provider-qtail_*_SHA256SUMS)
shopt -u nullglob
[ ${#sums[@]} -eq 1 ] || {
  echo "want one SHA256SUMS in $dist" >&2
  exit 1
}
version=$(basename "${sums[0]}" | sed -e 's/^terraform-provider-qtail_//' -e 's/_SHA256SUMS$//')

rm -rf "$work"
mkdir -p "$work/repo/regions" "$work/bin" "$work/github" "$work/releases"
repo="$work/repo"
cp -R "$examples/multi-region/." "$repo/regions/"
cp -R "$examples/modules" "$repo/modules"
mkdir -p "$repo/ci"
cp "$here/qtail-ci.sh" "$repo/ci/qtail-ci.sh"
ln -s "$dist" "$work/releases/v$version"

# The variables each root takes from a committed terraform.tfvars (IDs, not
# secrets); the region roots read `tailnet` from the platform root.
echo "organization_id = \"$TF_VAR_organization_id\"" >"$repo/regions/platform/terraform.tfvars"
for region in us-east-1 eu-west-3; do
  key=$(echo "$region" | tr 'a-z-' 'A-Z_')
  env_var="QTAIL_SANDBOX_ENVIRONMENT_ID_$key" app_var="QTAIL_SANDBOX_APPLICATION_ID_${key}_BILLING_API"
  printf 'environment_id             = "%s"\nbilling_api_application_id = "%s"\n' "${!env_var}" "${!app_var}" \
    >"$repo/regions/$region/terraform.tfvars"
done
# Nothing but the committed files and the job's environment.
for v in $(compgen -e); do
  case $v in TF_VAR_* | TF_CLI_CONFIG_FILE | TF_PLUGIN_CACHE_DIR | QTAIL_HOME | QTAIL) unset "$v" ;; esac
done

# The stand-in for the GitHub CLI: gh release download from DIST, and gh api
# on the comments of pull requests, kept in $work/github.
cat >"$work/bin/gh" <<'GH'
#!/usr/bin/env bash
set -euo pipefail
echo "gh $*" >>"$GH_FAKE/calls.log"
if [ "$1 $2" = "release download" ]; then
  tag=$3
  shift 3
  dir=. patterns=()
  while [ $# -gt 0 ]; do
    case $1 in
      --dir) dir=$2; shift 2 ;;
      --pattern) patterns+=("$2"); shift 2 ;;
      --repo) shift 2 ;;
      --clobber) shift ;;
      *) echo "gh stand-in: unknown flag $1" >&2; exit 2 ;;
    esac
  done
  [ -d "$GH_FAKE_RELEASES/$tag" ] || { echo "release not found" >&2; exit 1; }
  n=0
  for p in "${patterns[@]}"; do
    for f in "$GH_FAKE_RELEASES/$tag"/$p; do
      [ -f "$f" ] || continue
      cp "$f" "$dir/"
      n=$((n + 1))
    done
  done
  [ "$n" -gt 0 ] || { echo "no assets match the selected patterns" >&2; exit 1; }
  exit 0
fi
[ "$1" = api ] || { echo "gh stand-in: gh $1 is not rehearsed" >&2; exit 2; }
shift
method=GET path="" body=""
while [ $# -gt 0 ]; do
  case $1 in
    -X) method=$2; shift 2 ;;
    -F) body=${2#body=@}; shift 2 ;;
    --jq) shift 2 ;;
    --paginate) shift ;;
    *) path=$1; shift ;;
  esac
done
case "$method $path" in
  "GET repos/"*/issues/*/comments)
    # The ids of the comments whose body starts with the review's marker,
    # as the step's --jq filter selects them.
    dir="$GH_FAKE/${path%/comments}"
    for f in "$dir"/*.md; do
      [ -f "$f" ] || continue
      IFS= read -r first <"$f" || true
      [ "$first" != "<!-- qtail-review -->" ] || basename "$f" .md
    done
    ;;
  "POST repos/"*/issues/*/comments)
    dir="$GH_FAKE/${path%/comments}"
    mkdir -p "$dir"
    id=$(( $(cat "$GH_FAKE/next-id" 2>/dev/null || echo 1000) + 1 ))
    echo "$id" >"$GH_FAKE/next-id"
    cp "$body" "$dir/$id.md"
    echo "{\"id\": $id}"
    ;;
  "PATCH repos/"*/issues/comments/*)
    id=${path##*/}
    found=$(find "$GH_FAKE/repos" -name "$id.md")
    [ -n "$found" ] || { echo "comment $id not found" >&2; exit 1; }
    cp "$body" "$found"
    echo "{\"id\": $id}"
    ;;
  *) echo "gh stand-in: $method $path is not rehearsed" >&2; exit 2 ;;
esac
GH
chmod +x "$work/bin/gh"
export PATH="$work/bin:$PATH" GH_FAKE="$work/github" GH_FAKE_RELEASES="$work/releases"
export GITHUB_REPOSITORY=acme/platform TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1
# A plugin cache, as on runners that keep one: .terraform/providers then
# holds symlinks into it, which the binary lookup follows.
export TF_PLUGIN_CACHE_DIR="$work/plugin-cache"
mkdir -p "$TF_PLUGIN_CACHE_DIR"

say() { printf '\n== %s\n' "$*"; }
# job NAME: a fresh runner: its own temporary folder (where the mirror and
# the CLI configuration go), output, summary and environment files.
job() {
  say "job $1"
  export RUNNER_TEMP="$work/jobs/$1"
  rm -rf "$RUNNER_TEMP"
  mkdir -p "$RUNNER_TEMP"
  export GITHUB_OUTPUT="$RUNNER_TEMP/output" GITHUB_STEP_SUMMARY="$RUNNER_TEMP/summary" GITHUB_ENV="$RUNNER_TEMP/env"
  touch "$GITHUB_OUTPUT" "$GITHUB_STEP_SUMMARY" "$GITHUB_ENV"
  unset TF_CLI_CONFIG_FILE
}
# ci STEP ARGS...: one run: step of a workflow, with the environment that
# the steps before it left in GITHUB_ENV.
ci() {
  echo "-- qtail-ci.sh $*"
  echo "$1" >>"$work/steps.log"
  (
    set -a
    # shellcheck disable=SC1090
    . "$GITHUB_ENV"
    set +a
    cd "$repo"
    bash ci/qtail-ci.sh "$@"
  )
}
# output NAME: a value that the last steps wrote to GITHUB_OUTPUT.
output() { sed -n "s/^$1=//p" "$GITHUB_OUTPUT" | tail -n 1; }
fail() {
  echo "rehearsal: $*" >&2
  exit 1
}
roots="platform us-east-1 eu-west-3"

say "Once, by a person: the lock files of every root, for linux_amd64, darwin_arm64 and darwin_amd64, from the release archives"
job lock
ci fetch "$version" dist
ci mirror dist
ci lock regions/platform regions/us-east-1 regions/eu-west-3
for r in $roots; do
  lock=$(cat "$repo/regions/$r/.terraform.lock.hcl")
  hashes=$(grep -c '"h1:' <<<"$lock" || true)
  [ "$hashes" -ge 3 ] || fail "regions/$r/.terraform.lock.hcl holds $hashes h1 hashes, want one per platform:
$lock"
  grep -q "version *= \"$version\"" <<<"$lock" || fail "regions/$r/.terraform.lock.hcl does not lock $version"
done
(cd "$repo" && rm -rf dist regions/*/.terraform)

say "Before the pull request: the platform root applied from main"
job apply-platform
ci fetch "$version" dist
ci mirror dist
(
  . "$GITHUB_ENV"
  export TF_CLI_CONFIG_FILE
  terraform -chdir="$repo/regions/platform" init -input=false -lockfile=readonly >/dev/null
  terraform -chdir="$repo/regions/platform" apply -auto-approve -input=false -compact-warnings -no-color >"$work/apply-platform.txt"
)
(cd "$repo" && rm -rf dist regions/*/.terraform)

say "qtail-review.yml, pull request 42: plan (one job per root)"
for r in $roots; do
  job "plan-$r"
  ci fetch "$version" dist
  ci mirror dist
  ci plan "regions/$r" "plans/$r.json"
  mkdir -p "$work/artifacts/plans"
  cp "$repo/plans/$r.json" "$work/artifacts/plans/"
  (cd "$repo" && rm -rf dist plans regions/*/.terraform)
done

say "qtail-review.yml: review"
job review
ci fetch "$version" dist
ci mirror dist
cp -R "$work/artifacts/plans" "$repo/plans"
ci review review.md plans/platform.json plans/us-east-1.json plans/eu-west-3.json
code=$(output code)
[ "$code" = 2 ] || fail "the review of the pull request exited $code, want 2 (access changes)"
cp "$repo/review.md" "$work/artifacts/review.md"
summary=$(cat "$GITHUB_STEP_SUMMARY")
grep -qF "<!-- qtail-review -->" <<<"$summary" || fail "the job summary does not hold the review"
(cd "$repo" && rm -rf dist plans review.md regions/*/.terraform)

say "qtail-review.yml: comment (twice: the second push updates the comment)"
job comment
cp "$work/artifacts/review.md" "$repo/review.md"
ci comment 42 review.md
ci comment 42 review.md
ci verdict "$code"
comments=("$work"/github/repos/acme/platform/issues/42/*.md)
[ ${#comments[@]} -eq 1 ] || fail "pull request 42 has ${#comments[@]} review comments, want 1"
cmp -s "${comments[0]}" "$work/artifacts/review.md" || fail "the comment is not the review"
for want in "eu-west-3-billing-api-platform-ops" "us-east-1-billing-api-platform-ops" "group:platform-ops"; do
  grep -qF "$want" "${comments[0]}" || fail "the review comment does not name $want"
done
rm -f "$repo/review.md"

say "qtail-review-fork.yml: a pull request from a fork (43) gets the notice, and no plan"
job fork
ci fork-notice review.md
ci comment 43 review.md
notice=("$work"/github/repos/acme/platform/issues/43/*.md)
[ ${#notice[@]} -eq 1 ] || fail "pull request 43 has ${#notice[@]} comments, want 1"
grep -qF "comes from a fork" "${notice[0]}" || fail "the fork's comment does not say why it is not reviewed"
rm -f "$repo/review.md"

say "qtail-drift.yml: the platform root is as applied; us-east-1, never applied, has drifted"
for r in platform us-east-1; do
  job "drift-$r"
  ci fetch "$version" dist
  ci mirror dist
  set +e
  ci drift "regions/$r" drift.md
  code=$?
  set -e
  case $r in
    platform) [ "$code" -eq 0 ] || fail "the drift job of the platform root exited $code, want 0" ;;
    *)
      [ "$code" -eq 1 ] || fail "the drift job of $r exited $code, want 1 (drift)"
      grep -qF "us-east-1-billing-api-platform-ops" "$GITHUB_STEP_SUMMARY" || fail "the drift summary does not hold the review"
      ;;
  esac
  (cd "$repo" && rm -rf dist drift.md regions/*/.terraform)
done

say "Atlantis: each project's plan ends with its review; the hook comments on the base repository"
job atlantis
ci fetch "$version" dist
ci mirror dist
for r in platform us-east-1 eu-west-3; do
  (
    . "$GITHUB_ENV"
    export TF_CLI_CONFIG_FILE
    cd "$repo/regions/$r"
    # The steps of the qtail workflow: init, the env step, plan, the run step.
    terraform init -input=false -lockfile=readonly >/dev/null
    echo "-- qtail-ci.sh tailnet ($r)"
    echo tailnet >>"$work/steps.log"
    TF_VAR_tailnet=$(bash "$(cd ../.. && pwd)/ci/qtail-ci.sh" tailnet .)
    export TF_VAR_tailnet
    terraform plan -input=false -lock=false -out=default.tfplan >/dev/null
    echo "-- qtail-ci.sh atlantis-project ($r)"
    echo atlantis-project >>"$work/steps.log"
    PLANFILE="$PWD/default.tfplan" bash "$(cd ../.. && pwd)/ci/qtail-ci.sh" atlantis-project >"$work/atlantis-$r.txt"
  )
done
grep -qF "eu-west-3-billing-api-platform-ops" "$work/atlantis-eu-west-3.txt" || fail "the Atlantis project review does not name the grant"
echo atlantis-review >>"$work/steps.log"
(
  . "$GITHUB_ENV"
  export TF_CLI_CONFIG_FILE
  DIR=$repo PULL_NUM=44 BASE_REPO_OWNER=acme BASE_REPO_NAME=platform HEAD_REPO_OWNER=someone HEAD_REPO_NAME=fork \
    bash "$repo/ci/qtail-ci.sh" atlantis-review
)
base=("$work"/github/repos/acme/platform/issues/44/*.md)
[ ${#base[@]} -eq 1 ] || fail "the Atlantis hook did not comment on the base repository's pull request 44"
[ ! -e "$work/github/repos/someone" ] || fail "the Atlantis hook commented on the fork"

say "Rehearsal passed: qtail $version installed from its release archives, every root planned, reviewed, commented"
