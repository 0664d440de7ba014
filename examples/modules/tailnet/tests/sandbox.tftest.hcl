# Applies the module against qtail's sandbox (fake Qovery and Tailscale APIs),
# then destroys it. internal/exampletest starts the sandbox, points the
# provider at it and sets TF_VAR_sandbox to the sandbox's seeded IDs, as
# JSON: go test ./internal/exampletest -run TestModules.

run "apply" {
  variables {
    organization_id  = var.sandbox.organization_id
    remove_allow_all = true
    service_tags     = ["tag:k8s-billing"]
    regions          = ["us-east-1", "eu-west-3"]
    policy_tests = {
      tailnet-carol-denied-billing = {
        src  = "carol@example.com"
        deny = ["tag:k8s-billing:443"]
      }
    }
  }

  assert {
    condition     = output.operator_helm_repository_id != output.manifests_helm_repository_id
    error_message = "The module must create two Helm repositories."
  }
  assert {
    condition     = output.regions["us-east-1"].proxy_tag == "tag:k8s-us-east-1" && output.regions["eu-west-3"].service_tags["tag:k8s-billing"] == "tag:k8s-billing-eu-west-3"
    error_message = "Each region must have its own tags: ${jsonencode(output.regions)}"
  }
  assert {
    condition     = jsonencode(output.policy_test_names) == jsonencode(["tailnet-carol-denied-billing"])
    error_message = "The tailnet-wide test must be in the policy file."
  }
}

run "policy" {
  module {
    source = "./tests/policy"
  }

  assert {
    condition     = output.fragments["tag_owner:tag:k8s-operator"] == [] && output.fragments["tag_owner:tag:k8s"] == ["tag:k8s-operator"]
    error_message = "The operators' and proxies' tag owners must be in the policy file: ${jsonencode(output.fragments)}"
  }
  assert {
    condition     = output.fragments["tag_owner:tag:k8s-billing"] == ["tag:k8s-operator"]
    error_message = "The service tag must be owned by the operators' tag: ${jsonencode(output.fragments)}"
  }
  assert {
    condition     = output.fragments["tag_owner:tag:k8s-billing-us-east-1"] == ["tag:k8s-operator"] && output.fragments["tag_owner:tag:k8s-eu-west-3"] == ["tag:k8s-operator"]
    error_message = "Each region's tags must be owned by the operators' tag: ${jsonencode(output.fragments)}"
  }
  assert {
    condition     = output.fragments["policy_test:tailnet-carol-denied-billing"].deny == ["tag:k8s-billing:443"]
    error_message = "The tailnet-wide test must be in the policy file: ${jsonencode(output.fragments)}"
  }
  assert {
    condition     = !output.allow_all_present
    error_message = "The allow-all rule must be gone."
  }
}
