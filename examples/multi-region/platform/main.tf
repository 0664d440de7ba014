# The platform root: what exists once per tailnet and Qovery organization
# (the Helm repositories, the tag owners of the operators and proxies, the
# removal of the allow-all rule, tailnet-wide policy tests). Apply it first,
# and again only when those change; the region roots read its output
# `tailnet`.

terraform {
  required_version = ">= 1.11"
  required_providers {
    qtail = {
      source  = "qtail/qtail"
      version = "~> 0.1"
    }
  }

  # One state per root. With S3 (state locking in the bucket):
  # backend "s3" {
  #   bucket       = "acme-terraform-state"
  #   key          = "qtail/platform.tfstate"
  #   region       = "us-east-1"
  #   use_lockfile = true
  # }
  #
  # Or with HCP Terraform, one workspace per root:
  # cloud {
  #   organization = "acme"
  #   workspaces {
  #     name = "qtail-platform"
  #   }
  # }
}

provider "qtail" {}

variable "organization_id" {
  type        = string
  description = "ID of the Qovery organization."
}

module "tailnet" {
  # Outside this repository:
  # source = "github.com/qtail/terraform-provider-qtail//examples/modules/tailnet?ref=v0.1.0"
  source = "../../modules/tailnet"

  organization_id  = var.organization_id
  remove_allow_all = true

  # One tag per kind of service, and one of it per region: billing-api's
  # proxies carry tag:k8s-billing-us-east-1 in us-east-1 and
  # tag:k8s-billing-eu-west-3 in eu-west-3, so that a grant of one region
  # reaches that region alone.
  service_tags = ["tag:k8s-billing"]
  regions      = ["us-east-1", "eu-west-3"]

  # Guard rails that hold in every region, whoever edits the policy file.
  policy_tests = {
    tailnet-carol-denied-billing = {
      src = "carol@example.com"
      deny = [
        "tag:k8s-billing-us-east-1:443", "tag:k8s-billing-us-east-1:8080",
        "tag:k8s-billing-eu-west-3:443", "tag:k8s-billing-eu-west-3:8080",
      ]
    }
  }
}

output "tailnet" {
  description = "What the region roots need: the Helm repositories' IDs and the tags."
  value       = module.tailnet
}
