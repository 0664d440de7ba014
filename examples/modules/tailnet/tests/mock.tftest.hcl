# Plan-time checks with a mocked provider: no account, no sandbox.
#   terraform test -filter=tests/mock.tftest.hcl

mock_provider "qtail" {}

variables {
  organization_id  = "3fa85f64-5717-4562-b3fc-2c963f66afa6"
  remove_allow_all = true
  service_tags     = ["tag:k8s-billing", "tag:k8s-web"]
  regions          = ["eu-west-3"]
  policy_tests = {
    carol-denied-billing = {
      src  = "carol@example.com"
      deny = ["tag:k8s-billing:443"]
    }
  }
}

run "owns_the_tailnet_singletons" {
  command = plan

  assert {
    condition     = qtail_tag_owner.operator.tag == "tag:k8s-operator" && length(qtail_tag_owner.operator.owners) == 0
    error_message = "The operators' tag must be tag:k8s-operator with no owners (only admins apply it)."
  }
  assert {
    condition     = qtail_tag_owner.proxy.tag == "tag:k8s" && qtail_tag_owner.proxy.owners == tolist(["tag:k8s-operator"])
    error_message = "The proxies' tag must be tag:k8s, owned by the operators' tag."
  }
  assert {
    condition     = jsonencode(keys(qtail_tag_owner.service)) == jsonencode(["tag:k8s-billing", "tag:k8s-web"]) && alltrue([for t in qtail_tag_owner.service : t.owners == tolist(["tag:k8s-operator"])])
    error_message = "Each service tag must be owned by the operators' tag."
  }
  assert {
    condition     = jsonencode(sort(keys(qtail_tag_owner.region))) == jsonencode(["tag:k8s-billing-eu-west-3", "tag:k8s-eu-west-3", "tag:k8s-web-eu-west-3"]) && alltrue([for t in qtail_tag_owner.region : t.owners == tolist(["tag:k8s-operator"])])
    error_message = "Each region's proxy and service tags must be owned by the operators' tag."
  }
  assert {
    condition     = qtail_helm_repository.operator.name == "tailscale" && qtail_helm_repository.manifests.name == "qtail"
    error_message = "The Helm repositories must be named tailscale and qtail by default."
  }
  assert {
    condition     = qtail_helm_repository.manifests.url == "https://qtail.github.io/terraform-provider-qtail"
    error_message = "The manifests repository must be qtail's Helm repository."
  }
  assert {
    condition     = length(qtail_allow_all_removal.this) == 1
    error_message = "remove_allow_all = true must remove the allow-all rule."
  }
  assert {
    condition     = qtail_policy_test.this["carol-denied-billing"].name == "carol-denied-billing" && qtail_policy_test.this["carol-denied-billing"].accept == null
    error_message = "A tailnet-wide test keeps its name and sends no empty accept list."
  }
  assert {
    condition     = jsonencode(output.service_tags) == jsonencode(["tag:k8s-billing", "tag:k8s-web"]) && output.operator_tag == "tag:k8s-operator" && output.proxy_tag == "tag:k8s"
    error_message = "The outputs must give the regions the tags."
  }
}

run "keeps_the_allow_all_rule_when_asked" {
  command = plan

  variables {
    remove_allow_all      = false
    helm_repository_names = { operator = "tailscale-stable" }
  }

  assert {
    condition     = length(qtail_allow_all_removal.this) == 0 && output.allow_all_removed == false
    error_message = "remove_allow_all = false must leave the allow-all rule alone."
  }
  assert {
    condition     = qtail_helm_repository.operator.name == "tailscale-stable" && qtail_helm_repository.manifests.name == "qtail"
    error_message = "A name given for one repository must leave the other's default."
  }
}

run "refuses_a_tag_without_prefix" {
  command = plan

  variables {
    service_tags = ["tag:k8s-billing", "k8s-web"]
  }

  expect_failures = [var.service_tags]
}

run "refuses_a_repeated_tag" {
  command = plan

  variables {
    service_tags = ["tag:k8s-billing", "tag:k8s-billing"]
  }

  expect_failures = [var.service_tags]
}

run "refuses_a_bad_operator_tag" {
  command = plan

  variables {
    operator_tag = "tag:9lives"
  }

  expect_failures = [var.operator_tag]
}

run "refuses_one_name_for_both_repositories" {
  command = plan

  variables {
    helm_repository_names = { operator = "charts", manifests = "Charts" }
  }

  expect_failures = [var.helm_repository_names]
}

run "refuses_a_test_without_destination" {
  command = plan

  variables {
    policy_tests = { empty = { src = "alice@example.com" } }
  }

  expect_failures = [var.policy_tests]
}

run "refuses_an_organization_that_is_not_an_id" {
  command = plan

  variables {
    organization_id = "acme"
  }

  expect_failures = [var.organization_id]
}
