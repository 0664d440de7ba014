# qtail quickstart: the Tailscale operator's Helm repository in Qovery.
#
# Run it against the built-in sandbox with `make demo`, or against real
# Qovery and Tailscale accounts with the credentials in the environment.

terraform {
  required_version = ">= 1.11"
  required_providers {
    qtail = {
      source = "qtail/qtail"
    }
  }
}

provider "qtail" {}

variable "organization_id" {
  type        = string
  description = "ID of the Qovery organization."
}

# Tailscale's stable chart channel, as an organization Helm repository.
resource "qtail_helm_repository" "tailscale" {
  organization_id = var.organization_id
  name            = "tailscale"
}

output "helm_repository_id" {
  value = qtail_helm_repository.tailscale.id
}
