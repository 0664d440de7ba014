#!/usr/bin/env bash
# make peer-tests: run the official Tailscale provider's acceptance tests
# (github.com/tailscale/terraform-provider-tailscale) against the sandbox's
# fake tailnet, as a standing check that the fake answers as the real API
# does, and print the result of each test and the totals.
#
#   scripts/peer-tests.sh [TEST ...]
#
# The provider's source comes from the Go module cache (go mod download of
# PEER_PROVIDER_VERSION, default latest) or from PEER_PROVIDER_DIR, a
# checkout or module directory. It is copied outside the repository, into
# PEER_WORK_DIR (default a new temporary directory), and its tests are built
# and run there; nothing of it enters this repository.
#
# Each test runs against a sandbox of its own, started with -seed-peer-tests
# (the device the tests expect, exported as TAILSCALE_TEST_DEVICE_NAME).
# Without arguments the tests that use only endpoints the fake serves run
# (the list "served" below); PEER_TESTS="all", PEER_TESTS="TestA TestB" or
# tests named as arguments run others as well. The tests left aside are
# listed with the reason: endpoints the fake does not serve (and qtail does
# not use), or nothing but upgrade checks, which download an old release of
# the provider (those are reported SKIP when asked for). The upgrade checks
# at the end of the tests that do run are skipped in the copy, for the same
# reason; set PEER_TESTS_UPGRADE_CHECKS=1 to keep them where Terraform can
# download.
#
# Needs Go, Terraform (TF_ACC_TERRAFORM_PATH or terraform on PATH) and, for
# the module cache, access to the Go module proxy.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
module=github.com/tailscale/terraform-provider-tailscale
version=${PEER_PROVIDER_VERSION:-latest}

# The tests that use only endpoints the fake serves, by area.
served=(
  "policy file:TestAccACL"
  "policy file:TestAccACL_resetOnDestroy"
  "policy file:TestAccTailscaleACL"
  "devices:TestAccTailscaleDevices"
  "device tags:TestAccTailscaleDeviceTags"
  "device tags:TestAccTailscaleDeviceTags_UsesNodeID"
  "subnet routes:TestAccTailscaleDeviceSubnetRoutes"
  "subnet routes:TestAccTailscaleDeviceSubnetRoutes_WithNodeID"
  "subnet routes:TestAccTailscaleDeviceSubnetRoutes_LegacyIDToNodeID"
  "tailnet keys:TestAccTailscaleTailnetKey"
  "oauth clients:TestAccTailscaleOAuthClient"
  "oauth clients:TestAccTailscale_OAuthClient_OptionalFields"
  "services:TestAccTailscaleService"
  "services:TestAccTailscaleDataSourceService"
)

# The tests left aside and why. qtail uses none of these endpoints.
left_aside=(
  "TestAccTailscale4via6_UpgradeToPluginFramework:only an upgrade check, which downloads the provider 0.28.0"
  "TestAccTailscaleACL_UpgradeToPluginFramework:only an upgrade check, which downloads the provider 0.28.0"
  "TestAccTailscaleDNSPreferences_UpgradeToPluginFramework:only an upgrade check (downloads the provider 0.28.0); GET/POST /tailnet/{tailnet}/dns/preferences unserved"
  "TestAccTailscaleDNSSplitNameServers_UpgradeToPluginFramework:only an upgrade check (downloads the provider 0.28.0); /tailnet/{tailnet}/dns/split-dns unserved"
  "TestAccTailscaleAWSExternalID:POST /tailnet/{tailnet}/aws-external-id unserved"
  "TestAccTailscaleAWSExternalID_UpgradeToPluginFramework:only an upgrade check (downloads the provider 0.28.0); /tailnet/{tailnet}/aws-external-id unserved"
  "TestAccTailscaleUsers:GET /tailnet/{tailnet}/users unserved"
  "TestAccTailscaleContacts:GET/PATCH /tailnet/{tailnet}/contacts unserved"
  "TestAccTailscaleDeviceAuthorization:POST /device/{id}/authorized unserved"
  "TestAccTailscaleDeviceAuthorization_UsesNodeID:POST /device/{id}/authorized unserved"
  "TestAccTailscaleDeviceKey:POST /device/{id}/key unserved"
  "TestAccTailscaleDeviceKey_UsesNodeID:POST /device/{id}/key unserved"
  "TestAccTailscaleDNSConfiguration:GET/POST /tailnet/{tailnet}/dns/configuration unserved"
  "TestAccTailscaleDNSNameservers:GET/POST /tailnet/{tailnet}/dns/nameservers unserved"
  "TestAccTailscaleDNSPreferences:GET/POST /tailnet/{tailnet}/dns/preferences unserved"
  "TestAccTailscaleDNSSearchPaths:GET/POST /tailnet/{tailnet}/dns/searchpaths unserved"
  "TestAccTailscaleDNSSplitNameservers:GET/PATCH /tailnet/{tailnet}/dns/split-dns unserved"
  "TestAccTailscaleFederatedIdentity:POST /tailnet/{tailnet}/keys with keyType federated and PUT /tailnet/{tailnet}/keys/{id} unserved"
  "TestAccTailscaleFederatedIdentity_UpgradeToPluginFramework:only an upgrade check (downloads the provider 0.28.0); federated identity creation unserved"
  "TestAccTailscaleLogstreamConfiguration:/tailnet/{tailnet}/logging/{type}/stream unserved"
  "TestAccTailscalePostureIntegration:/tailnet/{tailnet}/posture/integrations unserved"
  "TestAccTailscalePostureIntegrationOptionalFields:/tailnet/{tailnet}/posture/integrations unserved"
  "TestAccTailscalePostureIntegrationMigration:only an upgrade check (downloads the provider 0.28.0); /tailnet/{tailnet}/posture/integrations unserved"
  "TestAccTailscaleTailnetSettings:GET/PATCH /tailnet/{tailnet}/settings unserved"
  "TestAccTailscaleWebhook:/tailnet/{tailnet}/webhooks unserved"
  "TestAccTailscaleWebhookOptionalFields:/tailnet/{tailnet}/webhooks unserved"
)

terraform_path=${TF_ACC_TERRAFORM_PATH:-$(command -v terraform || true)}
if [ -z "$terraform_path" ]; then
  echo "error: terraform was not found (set TF_ACC_TERRAFORM_PATH or put it on PATH)" >&2
  exit 1
fi

# A temporary work directory is removed when every test passed; one given
# in PEER_WORK_DIR is kept.
own_work=""
if [ -z "${PEER_WORK_DIR:-}" ]; then own_work=1; fi
work=$(realpath -m "${PEER_WORK_DIR:-$(mktemp -d)}")
case "$work/" in
  "$root"/*) echo "error: PEER_WORK_DIR must be outside the repository ($root)" >&2; exit 2 ;;
esac
mkdir -p "$work"

# The provider's source.
src=${PEER_PROVIDER_DIR:-}
if [ -z "$src" ]; then
  mkdir -p "$work/dl"
  if [ ! -f "$work/dl/go.mod" ]; then (cd "$work/dl" && go mod init peer-tests >/dev/null 2>&1); fi
  set +e
  info=$(cd "$work/dl" && GOFLAGS=-mod=mod go mod download -json "$module@$version")
  set -e
  src=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"$info")
  if [ -z "$src" ]; then
    echo "error: could not download $module@$version through the Go module proxy:" >&2
    echo "$info" >&2
    echo "set PEER_PROVIDER_DIR to a copy of its source (a git checkout or a module directory)" >&2
    exit 1
  fi
  peer_version=$(sed -n 's/^[[:space:]]*"Version": "\(.*\)",\{0,1\}$/\1/p' <<<"$info")
else
  src=$(cd "$src" && pwd)
  peer_version="from $src"
fi
if [ ! -f "$src/go.mod" ] || [ ! -d "$src/tailscale" ]; then
  echo "error: $src is not the source of $module" >&2
  exit 1
fi

echo "== $module ($peer_version), copied to $work/src"
rm -rf "$work/src"
mkdir -p "$work/src" "$work/logs"
cp -R "$src/." "$work/src"
chmod -R u+w "$work/src"

# The upgrade checks apply with the provider 0.28.0 from the registry: skip
# them in the copy, and note which tests lose theirs.
helpers="$work/src/tailscale/provider_test.go"
awk '
  /^func check(Resource|DataSource)IsUnchangedInPluginFramework\(/ {
    print
    print "\tif os.Getenv(\"PEER_TESTS_UPGRADE_CHECKS\") == \"\" {"
    print "\t\tt.Log(\"peer-tests: upgrade check left aside (it downloads the provider 0.28.0)\")"
    print "\t\treturn"
    print "\t}"
    n++
    next
  }
  { print }
  END { if (n != 2) exit 1 }
' "$helpers" >"$helpers.new" || { echo "error: the upgrade checks were not found in $helpers" >&2; exit 1; }
mv "$helpers.new" "$helpers"
upgrade_checked=$(awk '
  /^func Test/ { name = $2; sub(/\(.*/, "", name) }
  /IsUnchangedInPluginFramework\(t,/ && name != "" { seen[name] = 1 }
  END { for (n in seen) print n }
' "$work/src"/tailscale/*_test.go | sort)
all_tests=$(sed -n 's/^func \(TestAcc[A-Za-z0-9_]*\)(t \*testing.T).*/\1/p' "$work/src"/tailscale/*_test.go | sort)

echo "== building the sandbox and the provider's tests"
go build -o "$work/sandbox" "$root/tools/sandbox"
(cd "$work/src" && go test -c -o "$work/peer.test" ./tailscale)

# The tests to run.
declare -A area reason
for e in "${served[@]}"; do area[${e#*:}]=${e%%:*}; done
for e in "${left_aside[@]}"; do reason[${e%%:*}]=${e#*:}; done
tests=()
if [ $# -gt 0 ]; then
  tests=("$@")
elif [ "${PEER_TESTS:-}" = all ]; then
  read -r -a tests <<<"$(tr '\n' ' ' <<<"$all_tests")"
elif [ -n "${PEER_TESTS:-}" ]; then
  read -r -a tests <<<"$PEER_TESTS"
else
  for e in "${served[@]}"; do tests+=("${e#*:}"); done
fi
for t in $all_tests; do
  if [ -z "${area[$t]:-}" ] && [ -z "${reason[$t]:-}" ]; then
    echo "note: $t is new in this release and in neither list of this script" >&2
  fi
done

sandbox_pid=""
stop_sandbox() {
  if [ -n "$sandbox_pid" ]; then
    kill "$sandbox_pid" 2>/dev/null || true
    wait "$sandbox_pid" 2>/dev/null || true
    sandbox_pid=""
  fi
}
trap stop_sandbox EXIT

# start_sandbox TEST: a fresh sandbox for TEST, its exports in the
# environment. Each sandbox writes its own file, so that a previous one's
# exports are never read.
start_sandbox() {
  local env="$work/logs/$1.sandbox.env"
  rm -f "$env"
  "$work/sandbox" -addr 127.0.0.1:0 -seed-peer-tests -deploy-time 100ms -env-file "$env" >/dev/null 2>"$work/logs/$1.sandbox.log" &
  sandbox_pid=$!
  local started=""
  for _ in $(seq 1 100); do
    if grep '^export TAILSCALE_TEST_DEVICE_NAME=' "$env" >/dev/null 2>&1; then started=1; break; fi
    if ! kill -0 "$sandbox_pid" 2>/dev/null; then break; fi
    sleep 0.1
  done
  if [ -z "$started" ]; then
    cat "$work/logs/$1.sandbox.log" >&2
    echo "error: the sandbox did not start" >&2
    exit 1
  fi
  # shellcheck disable=SC1090
  source <(grep -E '^export (TAILSCALE_[A-Z_]*)=' "$env")
}

# An empty CLI configuration: no provider installation settings of the
# user's apply to the tests.
: >"$work/terraformrc"

echo "== running ${#tests[@]} tests, each against a fresh sandbox (logs in $work/logs)"
passed=0
failed=0
skipped=0
declare -A area_pass area_fail
failures=()
for t in "${tests[@]}"; do
  # A test that is nothing but upgrade checks would pass without running.
  case "${reason[$t]:-}" in
    "only an upgrade check"*)
      printf 'SKIP  %-62s        %s\n' "$t" "${reason[$t]}"
      skipped=$((skipped + 1))
      continue
      ;;
  esac
  start_sandbox "$t"
  start=$SECONDS
  set +e
  (cd "$work/src/tailscale" && TF_ACC=1 TF_ACC_TERRAFORM_PATH="$terraform_path" TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1 TF_CLI_CONFIG_FILE="$work/terraformrc" \
    "$work/peer.test" -test.run "^${t}\$" -test.v -test.count=1 -test.timeout "${PEER_TEST_TIMEOUT:-15m}") >"$work/logs/$t.log" 2>&1
  rc=$?
  set -e
  stop_sandbox
  a=${area[$t]:-other}
  if [ "$rc" -eq 0 ] && grep -E "^--- PASS: ${t} " "$work/logs/$t.log" >/dev/null; then
    printf 'PASS  %-62s %4ss  %s\n' "$t" $((SECONDS - start)) "$a"
    passed=$((passed + 1))
    area_pass[$a]=$((${area_pass[$a]:-0} + 1))
  else
    printf 'FAIL  %-62s %4ss  %s  (%s)\n' "$t" $((SECONDS - start)) "$a" "$work/logs/$t.log"
    failed=$((failed + 1))
    area_fail[$a]=$((${area_fail[$a]:-0} + 1))
    failures+=("$t")
  fi
done

echo
echo "== by area"
for a in "policy file" devices "device tags" "subnet routes" "tailnet keys" "oauth clients" services other; do
  p=${area_pass[$a]:-0}
  f=${area_fail[$a]:-0}
  if [ $((p + f)) -gt 0 ]; then printf '%-15s %d passed, %d failed\n' "$a" "$p" "$f"; fi
done

echo
echo "== left aside"
for t in $all_tests; do
  if [ -n "${reason[$t]:-}" ]; then printf '%-62s %s\n' "$t" "${reason[$t]}"; fi
done
echo
echo "== upgrade checks skipped (they download the provider 0.28.0) at the end of:"
for t in $upgrade_checked; do
  if [ -n "${area[$t]:-}" ]; then echo "$t"; fi
done

for t in "${failures[@]}"; do
  echo
  echo "== $t (last lines of its log)"
  tail -n 25 "$work/logs/$t.log"
done

echo
if [ "$skipped" -gt 0 ]; then
  echo "peer tests: $passed passed, $failed failed ($skipped skipped: only upgrade checks)"
else
  echo "peer tests: $passed passed, $failed failed"
fi
if [ "$failed" -ne 0 ]; then
  echo "(logs in $work/logs)"
  exit 1
fi
if [ -n "$own_work" ]; then rm -rf "$work"; fi
