#!/usr/bin/env bash
# make demo: start the sandbox, apply an example with the provider built from
# this tree, show what was built, check that a second plan is empty, then
# change something by hand in the sandbox's consoles and show the plan that
# repairs it, apply it, and check again that the plan is empty.
#
#   scripts/demo.sh [quickstart|homelab|review|multi-region|container]
#
# quickstart (make demo): one application exposed, its grant and policy
# tests; the hand edit detaches its annotations group in Qovery.
# homelab (make demo-homelab): an operator and a connector that is a subnet
# router for six routes and an exit node, with the status of each route, and
# the highly available API server proxy (a kube-apiserver ProxyGroup); the
# hand edit revokes a route in the Tailscale admin console.
# review (make demo-review): after the quickstart's apply, a plan that opens
# port 9443 of billing-api to group:platform-ops, reviewed by
# `terraform-provider-qtail review` (access changes, exit code 2), then a
# plan without changes (no access change, exit code 0).
# multi-region (make demo-multi-region): examples/multi-region, the platform
# root then the us-east-1 and eu-west-3 roots at the same time, each region's
# URLs, qtail's fragments of the shared policy grouped by region, a second
# plan of every root, then eu-west-3 retired and the others' plans still
# empty.
# container (make demo-container): the quickstart, and the sandbox's seeded
# container "metrics" (an image-based service) exposed next to billing-api
# with the operator's default proxy tag; the hand edit detaches the
# container's annotations group in Qovery.
set -euo pipefail
mode=${1:-quickstart}
case "$mode" in
  quickstart | homelab) example=$mode ;;
  review | container) example=quickstart ;;
  multi-region) example=multi-region ;;
  *) echo "usage: $0 [quickstart|homelab|review|multi-region|container]" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
sandbox_pid=""
cleanup() {
  if [ -n "$sandbox_pid" ]; then kill "$sandbox_pid" 2>/dev/null || true; wait "$sandbox_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "Starting the sandbox (fake Qovery and Tailscale APIs, simulated cluster)"
go build -o "$work/sandbox" "$root/tools/sandbox"
"$work/sandbox" -addr 127.0.0.1:0 -deploy-time "${QTAIL_DEMO_DEPLOY_TIME:-1s}" >"$work/sandbox.env" 2>"$work/sandbox.log" &
sandbox_pid=$!
for _ in $(seq 1 100); do
  grep -q '^export TF_VAR_organization_id=' "$work/sandbox.env" 2>/dev/null && break
  if ! kill -0 "$sandbox_pid" 2>/dev/null; then cat "$work/sandbox.log" >&2; echo "the sandbox did not start" >&2; exit 1; fi
  sleep 0.1
done
# shellcheck disable=SC1090
source "$work/sandbox.env"
head -n 1 "$work/sandbox.log"
# The single-region examples run in us-east-1; the multi-region roots take
# their region's IDs below.
if [ "$mode" != multi-region ]; then
  export TF_VAR_environment_id=$QTAIL_SANDBOX_ENVIRONMENT_ID_US_EAST_1
  export TF_VAR_application_id=$QTAIL_SANDBOX_APPLICATION_ID_US_EAST_1_BILLING_API
  export TF_VAR_web_application_id=$QTAIL_SANDBOX_APPLICATION_ID_US_EAST_1_WEB
fi
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

if [ "$mode" = multi-region ]; then
  # The roots source the modules by relative path, as in the repository.
  cp -R "$root/examples/multi-region" "$work/multi-region"
  cp -R "$root/examples/modules" "$work/modules"
  mr() { terraform -chdir="$work/multi-region/$1" "${@:2}"; }
  # plan_empty ROOT: fail unless a plan of ROOT has no change.
  plan_empty() {
    set +e
    mr "$1" plan -detailed-exitcode -input=false -compact-warnings >"$work/$1.plan.txt" 2>&1
    local code=$?
    set -e
    printf '  %-10s %s\n' "$1" "$(grep -m 1 -E 'No changes|Plan:' "$work/$1.plan.txt")"
    if [ "$code" -ne 0 ]; then
      cat "$work/$1.plan.txt" >&2
      echo "the plan of $1 is not empty (exit code $code)" >&2
      exit 1
    fi
  }
  # fragments: qtail's fragments of the tailnet policy file, grouped by the
  # region in their names, read through the qtail_policy data source.
  mkdir -p "$work/policy-view"
  cat >"$work/policy-view/main.tf" <<'TF'
terraform {
  required_providers {
    qtail = {
      source  = "qtail/qtail"
      version = "~> 0.1"
    }
  }
}
data "qtail_policy" "this" {}
output "fragments" {
  value = [for f in data.qtail_policy.this.fragments : { kind = f.kind, key = f.key, value = jsondecode(f.value) }]
}
TF
  fragments() {
    terraform -chdir="$work/policy-view" apply -auto-approve -input=false -compact-warnings >/dev/null
    terraform -chdir="$work/policy-view" output -json fragments | python3 -c '
import json, sys
groups = {}
for f in json.load(sys.stdin):
    # Tag owners, the regions' own tags included, are the platform root's.
    region = "platform (tailnet-wide)" if f["kind"] == "tag_owner" else next((r for r in ("us-east-1", "eu-west-3") if r in f["key"]), "platform (tailnet-wide)")
    groups.setdefault(region, []).append(f)
for region in ("platform (tailnet-wide)", "us-east-1", "eu-west-3"):
    print("  %s:" % region)
    for f in groups.get(region, []):
        print("    %-12s %-40s %s" % (f["kind"], f["key"], json.dumps(f["value"], separators=(",", ":"))))
    if not groups.get(region):
        print("    (none)")'
  }
  regions="us-east-1 eu-west-3"

  say "The platform root: Helm repositories, tag owners, allow-all removal, tailnet-wide tests"
  mr platform get >/dev/null
  mr platform apply -auto-approve -input=false -compact-warnings
  TF_VAR_tailnet=$(mr platform output -json tailnet)
  export TF_VAR_tailnet

  say "Both region roots at the same time (two Terraform processes, two states, one policy file)"
  pids=""
  for region in $regions; do
    key=$(echo "$region" | tr 'a-z-' 'A-Z_')
    env_var="QTAIL_SANDBOX_ENVIRONMENT_ID_$key" app_var="QTAIL_SANDBOX_APPLICATION_ID_${key}_BILLING_API"
    (
      export TF_VAR_environment_id=${!env_var} TF_VAR_billing_api_application_id=${!app_var}
      mr "$region" get >/dev/null
      mr "$region" apply -auto-approve -input=false -compact-warnings
    ) >"$work/$region.apply.txt" 2>&1 &
    pids="$pids $!"
  done
  failed=0
  for pid in $pids; do wait "$pid" || failed=1; done
  for region in $regions; do
    echo "  $region: $(grep -E 'Apply complete' "$work/$region.apply.txt" || echo failed)"
  done
  if [ "$failed" -ne 0 ]; then
    for region in $regions; do cat "$work/$region.apply.txt" >&2; done
    exit 1
  fi

  for region in $regions; do
    say "$region: URLs on the tailnet"
    mr "$region" output -json urls | python3 -c '
import json, sys
for svc, urls in json.load(sys.stdin).items():
    for u in urls:
        print("  %-12s %s" % (svc, u))'
  done

  say "qtail's fragments of the shared policy file, by region"
  fragments

  say "A second plan of every root (must be empty)"
  for r in platform $regions; do
    key=$(echo "$r" | tr 'a-z-' 'A-Z_')
    env_var="QTAIL_SANDBOX_ENVIRONMENT_ID_$key" app_var="QTAIL_SANDBOX_APPLICATION_ID_${key}_BILLING_API"
    TF_VAR_environment_id=${!env_var:-} TF_VAR_billing_api_application_id=${!app_var:-} plan_empty "$r"
  done

  say "Retiring eu-west-3: terraform destroy in its root"
  TF_VAR_environment_id=$QTAIL_SANDBOX_ENVIRONMENT_ID_EU_WEST_3 \
    TF_VAR_billing_api_application_id=$QTAIL_SANDBOX_APPLICATION_ID_EU_WEST_3_BILLING_API \
    mr eu-west-3 destroy -auto-approve -input=false -compact-warnings -no-color | grep -E 'Destroy complete'
  fragments
  say "The platform and us-east-1 are untouched (their plans stay empty)"
  plan_empty platform
  TF_VAR_environment_id=$QTAIL_SANDBOX_ENVIRONMENT_ID_US_EAST_1 \
    TF_VAR_billing_api_application_id=$QTAIL_SANDBOX_APPLICATION_ID_US_EAST_1_BILLING_API plan_empty us-east-1

  say "Done: two regions on one tailnet, one state each, applied in parallel"
  exit 0
fi

cp -R "$root/examples/$example" "$work/$example"
if [ "$mode" = container ]; then
  export TF_VAR_container_id="$QTAIL_SANDBOX_CONTAINER_ID_US_EAST_1_METRICS"
  cat >"$work/$example/metrics.tf" <<'TF'
variable "container_id" {
  type        = string
  description = "ID of the Qovery container to expose (metrics in the sandbox)."
}

# A container is exposed as an application is, by container_id.
resource "qtail_exposed_service" "metrics" {
  container_id = var.container_id
  hostname     = "metrics-us-east-1"
  depends_on   = [qtail_operator.us_east_1]
}

output "metrics_url" {
  value = "http://${qtail_exposed_service.metrics.tailnet_fqdn}:${qtail_exposed_service.metrics.ports[0].internal_port}/"
}

output "metrics_group_id" {
  value = qtail_exposed_service.metrics.annotations_group_id
}
TF
fi
tf() { terraform -chdir="$work/$example" "$@"; }

empty_plan() {
  set +e
  tf plan -detailed-exitcode -input=false -compact-warnings >"$work/plan.txt" 2>&1
  local code=$?
  set -e
  grep -E 'No changes|Plan:' "$work/plan.txt" || true
  if [ "$code" -ne 0 ]; then
    cat "$work/plan.txt" >&2
    echo "the plan is not empty (exit code $code)" >&2
    exit 1
  fi
}

say "terraform apply"
tf apply -auto-approve -input=false -compact-warnings

if [ "$example" = quickstart ]; then
  say "The service's tailnet address, and the web application's HTTPS URL"
  tf output -raw billing_url
  echo
  tf output -raw web_url
  echo
  say "The Ingress and the certificate the sandbox tailnet issued for it"
  curl -fsS "$admin/ingresses" | python3 -c '
import json, sys
got = json.load(sys.stdin)
for g in got["ingresses"]:
    print("  Ingress %s/%s -> %s, status hostname %s" % (g["Namespace"], g["Name"], g["Target"], g["StatusHostname"] or "(none)"))
for c in got["certificates"]:
    print("  certificate for %s (device %s)" % (c["Domain"], c["DeviceID"]))'
  if [ "$mode" = container ]; then
    say "The container's tailnet URL"
    tf output -raw metrics_url
    echo
  fi
else
  say "The status of each route of the connector (advertised, approved, granted)"
  tf output routes
  tf output routes_ok
fi

say "Devices on the sandbox tailnet"
curl -fsS -u "$TAILSCALE_API_KEY:" "$TAILSCALE_BASE_URL/api/v2/tailnet/-/devices" | python3 -c '
import json, sys
for d in json.load(sys.stdin)["devices"]:
    print("  %-32s %-44s %s" % (d["hostname"], d["name"], ",".join(d.get("tags") or []) or "user " + d.get("user", "")))'

say "qtail's fragments of the tailnet policy file"
curl -fsS -u "$TAILSCALE_API_KEY:" -H 'Accept: application/hujson' "$TAILSCALE_BASE_URL/api/v2/tailnet/-/acl"

say "terraform plan right after apply (must be empty)"
empty_plan

if [ "$mode" = review ]; then
  # review PLAN_NAME WANT_CODE: plan, save the plan as JSON, review it.
  review() {
    tf plan -input=false -compact-warnings -out="$work/$1.tfplan" >"$work/$1.plan.txt"
    tf show -json "$work/$1.tfplan" >"$work/$1.json"
    set +e
    "$root/terraform-provider-qtail" review -o "$work/$1.md" "$work/$1.json"
    local code=$?
    set -e
    cat "$work/$1.md"
    if [ "$code" -ne "$2" ]; then echo "the review exited with $code, want $2" >&2; exit 1; fi
  }
  expect() {
    if ! grep -qF -- "$2" "$work/$1.md"; then echo "the review of $1 does not say: $2" >&2; exit 1; fi
  }

  say "A pull request opens port 9443 of billing-api to group:platform-ops: its plan, reviewed"
  cat >"$work/$example/review_override.tf" <<'TF'
resource "qtail_grant" "platform_ops_to_billing" {
  ip = concat([for p in qtail_exposed_service.billing.ports : "tcp:${p.internal_port}"], ["tcp:9443"])
}
TF
  review us-east-1 2
  expect us-east-1 "| 9443 | no one | \`group:platform-ops\` | **gained** \`group:platform-ops\` |"
  expect us-east-1 "\`billing-api-us-east-1\` (service"
  expect us-east-1 "policy tests **pass**"

  say "The same configuration without the change: the review says so"
  rm "$work/$example/review_override.tf"
  review unchanged 0
  expect unchanged "**No access change**"

  say "Done: the review names who gains access to what, and exits 2; without a change it exits 0"
  exit 0
fi

console() {
  curl -fsS -X POST "$admin/console" -H 'Content-Type: application/json' -d "$1" >/dev/null
}
if [ "$mode" = container ]; then
  say "A console edit: someone detaches the annotations group from the metrics container in Qovery"
  group=$(tf output -raw metrics_group_id)
  console "{\"action\":\"qovery.detach_group\",\"id\":\"$TF_VAR_container_id\",\"group_id\":\"$group\"}"
  console "{\"action\":\"qovery.deploy\",\"id\":\"$TF_VAR_container_id\"}"
  sleep "${QTAIL_DEMO_DEPLOY_WAIT:-2}"
elif [ "$example" = quickstart ]; then
  say "A console edit: someone detaches the annotations group from billing-api in Qovery"
  group=$(tf output -raw annotations_group_id)
  console "{\"action\":\"qovery.detach_group\",\"id\":\"$TF_VAR_application_id\",\"group_id\":\"$group\"}"
  console "{\"action\":\"qovery.deploy\",\"id\":\"$TF_VAR_application_id\"}"
  sleep "${QTAIL_DEMO_DEPLOY_WAIT:-2}"
else
  say "An admin console edit: someone revokes the route 10.20.0.0/16 of the connector's device"
  console '{"action":"tailscale.set_routes","hostname":"homelab","routes":["10.244.0.0/16","10.10.0.0/16","10.50.0.0/24","10.101.0.0/16","192.168.0.0/24","0.0.0.0/0","::/0"]}'
fi

say "terraform plan shows the repair"
set +e
tf plan -detailed-exitcode -input=false -compact-warnings -out="$work/repair.tfplan"
code=$?
set -e
if [ "$code" -ne 2 ]; then echo "expected a plan with changes (exit code 2), got $code" >&2; exit 1; fi

say "terraform apply (the repair)"
tf apply -input=false -compact-warnings "$work/repair.tfplan"

say "terraform plan after the repair (must be empty)"
empty_plan

if [ "$mode" = container ]; then
  say "Done: the metrics container is at $(tf output -raw metrics_url), next to billing-api at $(tf output -raw billing_url)"
elif [ "$example" = quickstart ]; then
  say "Done: billing-api is at $(tf output -raw billing_url), reachable by group:platform-ops only; the web application at $(tf output -raw web_url), with the tailnet's certificate"
else
  tf output routes_ok
  say "Done: $(tf output -raw connector_device) routes six networks and the internet for group:platform-ops"
  say "The highly available API server proxy: kubectl --server=$(tf output -raw kube_apiserver_url) (two replicas of the kube-apiserver ProxyGroup kubeapi)"
fi
