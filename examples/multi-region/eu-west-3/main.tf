# The eu-west-3 root: the region's operator, billing-api on the tailnet with its
# grant and policy test, and a connector to the region's VPC. It has its own
# state, and CI may apply it at the same time as the other regions: every
# name it writes on the shared tailnet carries the region, and qtail edits
# only its own fragments of the policy file.

terraform {
  required_version = ">= 1.11"
  required_providers {
    qtail = {
      source  = "qtail/qtail"
      version = "~> 0.1"
    }
  }

  # backend "s3" {
  #   bucket       = "acme-terraform-state"
  #   key          = "qtail/eu-west-3.tfstate"
  #   region       = "us-east-1"
  #   use_lockfile = true
  # }
  #
  # cloud {
  #   organization = "acme"
  #   workspaces {
  #     name = "qtail-eu-west-3"
  #   }
  # }
}

provider "qtail" {}

# What the platform root made, from its output:
#   export TF_VAR_tailnet="$(terraform -chdir=../platform output -json tailnet)"
variable "tailnet" {
  type = object({
    operator_helm_repository_id  = string
    manifests_helm_repository_id = string
    operator_tag                 = string
    proxy_tag                    = string
    service_tags                 = list(string)
    regions = map(object({
      proxy_tag    = string
      service_tags = map(string)
    }))
  })
  description = "The platform root's output `tailnet`."
}

# Or read it from the platform root's state (the same backend settings as
# its backend block), and pass local.tailnet to the module instead:
# data "terraform_remote_state" "platform" {
#   backend = "s3"
#   config = {
#     bucket = "acme-terraform-state"
#     key    = "qtail/platform.tfstate"
#     region = "us-east-1"
#   }
# }
#
# locals {
#   tailnet = data.terraform_remote_state.platform.outputs.tailnet
# }

variable "environment_id" {
  type        = string
  description = "ID of the Qovery environment, on the eu-west-3 cluster, where the operator runs."
}

variable "billing_api_application_id" {
  type        = string
  description = "ID of the Qovery application billing-api in eu-west-3."
}

module "region" {
  # Outside this repository:
  # source = "github.com/qtail/terraform-provider-qtail//examples/modules/region?ref=v0.1.0"
  source = "../../modules/region"

  region         = "eu-west-3"
  environment_id = var.environment_id
  tailnet        = var.tailnet

  services = {
    billing-api = {
      application_id = var.billing_api_application_id
      tags           = ["tag:k8s-billing"]
      access = {
        platform-ops = { src = ["group:platform-ops"] }
      }
    }
  }

  connector = {
    subnet_routes = ["10.30.0.0/16"]
    users         = ["group:platform-ops"]
  }
}

output "urls" {
  description = "Where billing-api answers on the tailnet, one address per port (a URL for an HTTP port)."
  value       = module.region.urls
}

output "devices" {
  description = "The proxy device of each service."
  value       = module.region.devices
}

output "operator" {
  description = "The region's operator."
  value       = module.region.operator
}

output "connector" {
  description = "The connector to the region's VPC."
  value       = module.region.connector
}
