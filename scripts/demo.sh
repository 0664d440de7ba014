#!/usr/bin/env bash
# make demo: start the sandbox, apply examples/quickstart with the provider
# built from this tree, show the result and check that a second plan is empty.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
sandbox_pid=""
cleanup() {
  if [ -n "$sandbox_pid" ]; then kill "$sandbox_pid" 2>/dev/null || true; wait "$sandbox_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "Starting the sandbox"
go build -o "$work/sandbox" "$root/tools/sandbox"
"$work/sandbox" -addr 127.0.0.1:0 -deploy-time "${QTAIL_DEMO_DEPLOY_TIME:-1s}" >"$work/sandbox.env" 2>"$work/sandbox.log" &
sandbox_pid=$!
for _ in $(seq 1 100); do
  grep -q '^export TF_VAR_organization_id=' "$work/sandbox.env" 2>/dev/null && break
  if ! kill -0 "$sandbox_pid" 2>/dev/null; then cat "$work/sandbox.log" >&2; echo "the sandbox did not start" >&2; exit 1; fi
  sleep 0.1
done
# shellcheck disable=SC1090
source <(grep '^export ' "$work/sandbox.env")
head -n 1 "$work/sandbox.env"
admin="${QOVERY_API_URL%/qovery}/_sandbox"

# Terraform uses the provider binary built by `make build` from this tree.
cat >"$work/terraformrc" <<RC
provider_installation {
  dev_overrides {
    "qtail/qtail" = "$root"
  }
  direct {}
}
RC
export TF_CLI_CONFIG_FILE="$work/terraformrc"
export TF_IN_AUTOMATION=1
cp -R "$root/examples/quickstart" "$work/quickstart"
tf() { terraform -chdir="$work/quickstart" "$@"; }

say "terraform apply"
tf apply -auto-approve -input=false -compact-warnings

say "Outputs"
tf output -no-color

say "What the sandbox now holds"
if [ -x "$root/scripts/demo-show.sh" ]; then bash "$root/scripts/demo-show.sh" "$admin" "$work/quickstart"; fi
curl -fsS -H "Authorization: Token $QOVERY_API_TOKEN" "$QOVERY_API_URL/organization/$TF_VAR_organization_id/helmRepository" \
  | python3 -c 'import json,sys; [print("  Qovery Helm repository:", r["name"], r["url"], r["id"]) for r in json.load(sys.stdin)["results"]]'

say "terraform plan (must be empty)"
set +e
tf plan -detailed-exitcode -input=false -compact-warnings >"$work/plan.txt" 2>&1
code=$?
set -e
grep -E 'No changes|Plan:' "$work/plan.txt" || true
if [ "$code" -ne 0 ]; then
  cat "$work/plan.txt" >&2
  echo "the second plan is not empty (exit code $code)" >&2
  exit 1
fi
say "Done: the second plan is empty"
