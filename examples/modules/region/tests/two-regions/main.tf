# One root, one tailnet, the region module once per region with for_each:
# the form for a team that applies every region together. Used by
# sandbox.tftest.hcl and by internal/exampletest against qtail's sandbox,
# whose seeded IDs come in var.sandbox.

terraform {
  required_version = ">= 1.11"
  required_providers {
    qtail = {
      source  = "qtail/qtail"
      version = "~> 0.1"
    }
  }
}

variable "sandbox" {
  type = object({
    organization_id = string
    regions = map(object({
      environment_id = string
      applications   = map(string)
      containers     = map(string)
    }))
  })
  description = "The sandbox's seeded IDs (GET /_sandbox/seed)."
}

locals {
  # A subnet per region for its connector.
  vpc = { "us-east-1" = "10.10.0.0/16", "eu-west-3" = "10.30.0.0/16" }
}

module "tailnet" {
  source           = "../../../tailnet"
  organization_id  = var.sandbox.organization_id
  remove_allow_all = true
  service_tags     = ["tag:k8s-billing"]
  regions          = keys(var.sandbox.regions)
}

module "region" {
  source   = "../.."
  for_each = var.sandbox.regions

  region         = each.key
  environment_id = each.value.environment_id
  tailnet        = module.tailnet

  services = {
    billing-api = {
      application_id = each.value.applications["billing-api"]
      tags           = ["tag:k8s-billing"]
      access = {
        platform-ops = { src = ["group:platform-ops"] }
        proxies      = { src = ["tag:k8s"], ports = [443] }
      }
      denied = ["carol@example.com"]
    }
    # A container is exposed the same way as an application.
    metrics = {
      container_id = each.value.containers["metrics"]
    }
    web = {
      application_id = each.value.applications["web"]
      access         = { members = { src = ["autogroup:member"], test_src = "carol@example.com" } }
    }
  }

  connector = {
    subnet_routes = [local.vpc[each.key]]
    users         = ["group:platform-ops"]
  }

  egress_services = {
    metrics = { tailnet_ip = "100.101.102.103", ports = ["tcp:9090"] }
  }

  # The policy tests with deny hold only once the allow-all rule is gone.
  depends_on = [module.tailnet]
}

output "regions" {
  value = module.region
}
