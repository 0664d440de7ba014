# The home lab of the recipe: one cluster, one operator whose API server
# proxy is on, and one connector named after the cluster that is both a
# subnet router for six networks and an exit node.

resource "qtail_tag_owner" "k8s_operator" {
  tag    = "tag:k8s-operator"
  owners = []
}

resource "qtail_tag_owner" "k8s" {
  tag    = "tag:k8s"
  owners = [qtail_tag_owner.k8s_operator.tag]
}

resource "qtail_helm_repository" "tailscale" {
  organization_id = var.organization_id
  name            = "tailscale"
}

# qtail's Helm repository: every qtail release publishes its tailnet-manifests
# chart there. One per Qovery organization.
resource "qtail_helm_repository" "qtail" {
  organization_id = var.organization_id
  name            = "qtail"
  url             = "https://qtail.github.io/terraform-provider-qtail"
}

resource "qtail_operator" "homelab" {
  environment_id      = var.environment_id
  helm_repository_id  = qtail_helm_repository.tailscale.id
  chart_version       = "1.102.4"
  hostname            = "tailscale-operator"
  api_server_proxy    = "true"
  create_oauth_client = true
  depends_on          = [qtail_tag_owner.k8s_operator, qtail_tag_owner.k8s]
}

resource "qtail_connector" "homelab" {
  environment_id = qtail_operator.homelab.environment_id
  name           = "homelab"

  # The operator runs the connector and removes its devices when it goes:
  # Terraform installs it first and uninstalls it last.
  operator_id = qtail_operator.homelab.id

  # The tailnet-manifests chart from qtail's Helm repository, pinned to the
  # version published with the qtail release in use.
  chart = {
    helm_repository = {
      repository_id = qtail_helm_repository.qtail.id
      chart_version = "0.1.0"
    }
  }
  # Or the chart from a Git repository you control, on a branch you move only
  # on purpose: Qovery deploys the head of a branch, never a tag.
  # chart = {
  #   git_repository = {
  #     url       = "https://github.com/acme/platform.git"
  #     branch    = "tailnet-manifests-0.1"
  #     root_path = "/charts/tailnet-manifests"
  #   }
  # }

  hostname = "homelab"
  subnet_routes = [
    "10.244.0.0/16", # pod network
    "10.10.0.0/16",  # home VLANs
    "10.50.0.0/24",
    "10.101.0.0/16",
    "192.168.0.0/24",
    "10.20.0.0/16", # LoadBalancer range, with the internal gateway
  ]
  exit_node = true
  tags      = [qtail_tag_owner.k8s.tag]

  # No autoApprovers entry on this tailnet: qtail approves the routes.
  approve_routes = true
}

# Approval and access are separate layers: the admins may use every route
# and the exit node.
resource "qtail_grant" "admins_to_homelab" {
  name = "admins-to-homelab"
  src  = ["group:admins"]
  dst  = concat(qtail_connector.homelab.subnet_routes, ["autogroup:internet"])
  ip   = ["*"]
}

# The four conditions of a working route, checked (the fourth, the client
# accepting routes, is outside the API).
data "qtail_route_status" "homelab" {
  connector_id = qtail_connector.homelab.id
  depends_on   = [qtail_grant.admins_to_homelab]
}

variable "organization_id" {
  type        = string
  description = "ID of the Qovery organization."
}

variable "environment_id" {
  type        = string
  description = "ID of the Qovery environment of the operator (namespace networking)."
}

output "homelab_devices" {
  value = qtail_connector.homelab.devices[*].tailnet_fqdn
}

output "homelab_routes_missing" {
  value = data.qtail_route_status.homelab.missing
}
