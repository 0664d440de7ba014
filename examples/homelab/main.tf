# qtail home lab: the recipe's second shape, on one cluster.
#
# The Tailscale operator, pinned, with its API server proxy on (kubectl
# --server=https://tailscale-operator works from the tailnet: the tailnet
# needs HTTPS certificates, a grant of the tailscale.com/cap/kubernetes
# capability names the group the proxy impersonates, and RBAC in the cluster
# binds it), and one connector named after the cluster that is both a
# subnet router for six networks and an exit node. autoApprovers approve the
# routes for the connector's tag; qtail also approves them through the API
# (approve_routes), so that a route revoked by hand shows in the plan. A grant
# lets the platform team use every route and the exit node, and
# qtail_route_status checks the four conditions of each route. The
# operator's proxy is one pod: its highly available variant, a kube-apiserver
# ProxyGroup of two replicas behind one Tailscale Service, comes last
# (kubectl --server=https://kubeapi.TAILNET.ts.net).
#
# Run it against the built-in sandbox with `make demo-homelab`, or against
# real Qovery and Tailscale accounts with the credentials in the environment
# (see the README).

terraform {
  required_version = ">= 1.11"
  required_providers {
    qtail = {
      source  = "qtail/qtail"
      version = "~> 0.1"
    }
  }
}

provider "qtail" {}

variable "organization_id" {
  type        = string
  description = "ID of the Qovery organization."
}

variable "environment_id" {
  type        = string
  description = "ID of the Qovery environment of the operator and the connector (the networking namespace)."
}

locals {
  homelab_routes = [
    "10.244.0.0/16", # pod network
    "10.10.0.0/16",  # home VLANs
    "10.50.0.0/24",
    "10.101.0.0/16",
    "192.168.0.0/24",
    "10.20.0.0/16", # LoadBalancer range: the internal gateway lives here
  ]
}

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

# The API server proxy serves TLS with the tailnet's certificates: turn on
# HTTPS Certificates on the DNS page of the admin console first (the plan
# refuses the proxy without them). In auth mode it impersonates each caller;
# this grant lets the platform team in as the Kubernetes group
# "tailnet-readers", which the cluster binds to the built-in "view" role:
#
#   kubectl create clusterrolebinding tailnet-readers --clusterrole=view --group=tailnet-readers
#
# Without a binding, every request through the proxy answers 403 Forbidden.
resource "qtail_grant" "ops_kubernetes_read" {
  name = "ops-kubernetes-read"
  src  = ["group:platform-ops"]
  dst  = [qtail_tag_owner.k8s_operator.tag]
  app = jsonencode({
    "tailscale.com/cap/kubernetes" = [{
      impersonate = { groups = ["tailnet-readers"] }
    }]
  })
}

resource "qtail_operator" "homelab" {
  environment_id      = var.environment_id
  helm_repository_id  = qtail_helm_repository.tailscale.id
  chart_version       = "1.102.4"
  hostname            = "tailscale-operator"
  api_server_proxy    = "true"
  create_oauth_client = true
  # The grant is planned first, so that the plan sees it.
  depends_on = [qtail_tag_owner.k8s_operator, qtail_tag_owner.k8s, qtail_grant.ops_kubernetes_read]
}

# Tailscale approves the connector's routes when its device advertises
# them, because the connector's tag is an approver.
resource "qtail_auto_approver" "homelab" {
  count     = length(local.homelab_routes)
  route     = local.homelab_routes[count.index]
  approvers = [qtail_tag_owner.k8s.tag]
}

resource "qtail_auto_approver" "exit_node" {
  exit_node = true
  approvers = [qtail_tag_owner.k8s.tag]
}

resource "qtail_connector" "homelab" {
  environment_id = qtail_operator.homelab.environment_id
  operator_id    = qtail_operator.homelab.id
  name           = "homelab"

  # The tailnet-manifests chart from qtail's Helm repository, pinned to the
  # version published with the qtail release in use.
  chart = {
    helm_repository = {
      repository_id = qtail_helm_repository.qtail.id
      chart_version = "0.1.0"
    }
  }

  hostname       = "homelab"
  subnet_routes  = local.homelab_routes
  exit_node      = true
  tags           = [qtail_tag_owner.k8s.tag]
  approve_routes = true

  depends_on = [qtail_auto_approver.homelab, qtail_auto_approver.exit_node]
}

# Approval and access are separate layers.
resource "qtail_grant" "ops_to_homelab" {
  name = "ops-to-homelab"
  src  = ["group:platform-ops"]
  dst  = concat(qtail_connector.homelab.subnet_routes, ["autogroup:internet"])
  ip   = ["*"]
}

data "qtail_route_status" "homelab" {
  connector_id = qtail_connector.homelab.id
  depends_on   = [qtail_grant.ops_to_homelab]
}

# The highly available API server proxy: two replicas, each a device tagged
# tag:k8s, that serve the Tailscale Service svc:kubeapi. It needs the same as
# the operator's proxy (HTTPS certificates; in auth mode a grant of
# tailscale.com/cap/kubernetes, here to the replicas' tag), and an operator
# chart from 1.86. Once it serves, the operator's own proxy can go
# (api_server_proxy = "false").
resource "qtail_grant" "ops_kubernetes_read_ha" {
  name = "ops-kubernetes-read-ha"
  src  = ["group:platform-ops"]
  dst  = [qtail_tag_owner.k8s.tag]
  app = jsonencode({
    "tailscale.com/cap/kubernetes" = [{
      impersonate = { groups = ["tailnet-readers"] }
    }]
  })
}

resource "qtail_proxy_group" "kubeapi" {
  environment_id = qtail_operator.homelab.environment_id
  operator_id    = qtail_operator.homelab.id
  name           = "kubeapi"
  type           = "kube-apiserver"
  kube_apiserver = {
    mode = "auth"
  }

  chart = {
    helm_repository = {
      repository_id = qtail_helm_repository.qtail.id
      chart_version = "0.1.0"
    }
  }

  # The grant is planned first, so that the plan sees it.
  depends_on = [qtail_grant.ops_kubernetes_read_ha]
}

output "kube_apiserver_url" {
  # The Tailscale Service's MagicDNS name: the ProxyGroup's name in the
  # tailnet's domain.
  value = "https://${replace(qtail_proxy_group.kubeapi.devices[0].tailnet_fqdn, "/^[^.]+/", qtail_proxy_group.kubeapi.name)}"
}

output "connector_device" {
  value = qtail_connector.homelab.devices[0].tailnet_fqdn
}

output "routes" {
  value = {
    for r in data.qtail_route_status.homelab.routes :
    r.route => "advertised=${r.advertised} approved=${r.approved} (${r.approval}) granted=${r.granted}"
  }
}

output "routes_ok" {
  value = data.qtail_route_status.homelab.ok
}

output "routes_missing" {
  value = data.qtail_route_status.homelab.missing
}
