# Applies the module against qtail's sandbox (fake Qovery and Tailscale APIs),
# then destroys it. internal/exampletest starts the sandbox, points the
# provider at it and sets TF_VAR_sandbox to the sandbox's seeded IDs, as
# JSON: go test ./internal/exampletest -run TestModules.
#
# The module is applied through a root, tests/two-regions, with for_each
# over both seeded regions: Terraform before 1.17 cannot apply a module with
# an unset optional ephemeral variable (operator_oauth_client_secret) as the
# root of a test run (hashicorp/terraform#38974).

run "two_regions" {
  module {
    source = "./tests/two-regions"
  }

  variables {
    sandbox = var.sandbox
  }

  assert {
    condition     = output.regions["us-east-1"].operator.hostname == "tailscale-operator-us-east-1" && output.regions["eu-west-3"].operator.hostname == "tailscale-operator-eu-west-3"
    error_message = "Each region's operator must carry the region."
  }
  assert {
    condition     = jsonencode(output.regions["eu-west-3"].urls["billing-api"]) == jsonencode(["billing-api-eu-west-3.tail4f2a.ts.net:443", "http://billing-api-eu-west-3.tail4f2a.ts.net:8080/"])
    error_message = "billing-api must have one address per declared port (443 without a scheme), at its region's hostname: ${jsonencode(output.regions["eu-west-3"].urls)}"
  }
  assert {
    condition     = alltrue([for r in output.regions : alltrue([for d in r.devices : d.device_id != null])])
    error_message = "Every proxy must be on the tailnet."
  }
  assert {
    condition     = output.regions["us-east-1"].devices["metrics"].device_id != null && output.regions["eu-west-3"].devices["metrics"].device_id != null
    error_message = "The metrics container of each region must be on the tailnet: ${jsonencode(output.regions["us-east-1"].devices)}"
  }
  assert {
    condition     = jsonencode(output.regions["us-east-1"].grant_names) == jsonencode(["us-east-1-billing-api-platform-ops", "us-east-1-billing-api-proxies", "us-east-1-connector-routes", "us-east-1-web-members"])
    error_message = "The region's grants: ${jsonencode(output.regions["us-east-1"].grant_names)}"
  }
  assert {
    condition     = length(output.regions["us-east-1"].connector.devices) == 1 && output.regions["us-east-1"].egress_services["metrics"] != null
    error_message = "The connector and the egress Service must be deployed from the pinned chart."
  }
}

run "policy" {
  module {
    source = "../tailnet/tests/policy"
  }

  variables {
    hostnames = ["tailscale-operator-us-east-1", "tailscale-operator-eu-west-3", "billing-api-us-east-1", "billing-api-eu-west-3", "web-us-east-1", "web-eu-west-3"]
  }

  assert {
    condition     = output.fragments["grant:eu-west-3-billing-api-platform-ops"].ip == ["tcp:443", "tcp:8080"]
    error_message = "Without ports, a grant opens every port the service declares: ${jsonencode(output.fragments)}"
  }
  assert {
    condition     = output.fragments["grant:us-east-1-billing-api-proxies"].ip == ["tcp:443"] && output.fragments["policy_test:us-east-1-billing-api-proxies"].accept == ["tag:k8s-billing-us-east-1:443"]
    error_message = "With ports, a grant and its test cover those only: ${jsonencode(output.fragments)}"
  }
  assert {
    condition     = output.fragments["policy_test:us-east-1-billing-api-denies-carol-example.com"].deny == ["tag:k8s-billing-us-east-1:443", "tag:k8s-billing-us-east-1:8080"]
    error_message = "A denied source is tested on every declared port: ${jsonencode(output.fragments)}"
  }
  assert {
    condition     = output.fragments["grant:eu-west-3-web-members"].dst == ["tag:k8s-eu-west-3"] && output.fragments["policy_test:eu-west-3-web-members"].src == "carol@example.com"
    error_message = "A service without tags is granted through its region's proxy tag, tested from test_src: ${jsonencode(output.fragments)}"
  }
  assert {
    condition     = output.fragments["grant:eu-west-3-connector-routes"].dst == ["10.30.0.0/16"]
    error_message = "The connector's grant covers its routes: ${jsonencode(output.fragments)}"
  }
  assert {
    condition     = alltrue([for d in output.devices : d.connected])
    error_message = "Both operators and every proxy must be connected: ${jsonencode(output.devices)}"
  }
  assert {
    condition     = jsonencode(output.devices["billing-api-us-east-1"].tags) == jsonencode(["tag:k8s-billing-us-east-1"]) && jsonencode(output.devices["billing-api-eu-west-3"].tags) == jsonencode(["tag:k8s-billing-eu-west-3"]) && jsonencode(output.devices["tailscale-operator-eu-west-3"].tags) == jsonencode(["tag:k8s-operator"])
    error_message = "Devices must carry their tags: ${jsonencode(output.devices)}"
  }
}
