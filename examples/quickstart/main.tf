# qtail quickstart: one Qovery application on the tailnet at a stable
# hostname, reachable only by group:platform-ops, on its declared ports, and
# a web application served over HTTPS with the tailnet's certificate.
#
# This is the whole manual recipe for one region (us-east-1): the operator's
# Helm repository, the tag owners it needs, the operator with its own OAuth
# client, the exposure, a grant, the removal of the allow-all rule a new
# tailnet ships with, and policy tests that Tailscale then enforces on every
# later change of the policy file.
#
# Two kinds of resources live in this one file. PER TAILNET (and Qovery
# organization): the Helm repository, the tag owners and the removal of the
# allow-all rule exist once, whatever the number of regions. PER REGION: the
# operator, the exposure, the grant and the policy tests exist once per
# cluster, and their names carry the region. Do not copy this file for a
# second region: two roots would both own the per-tailnet part (a second
# Helm repository named "tailscale" fails at plan, and destroying either
# root removes the tag owners for both). Use the modules instead:
# examples/modules/tailnet once, examples/modules/region once per region,
# composed as in examples/multi-region (one state per region).
#
# Run it against the built-in sandbox with `make demo`, or against real
# Qovery and Tailscale accounts with the credentials in the environment
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
  description = "ID of the Qovery environment, on the us-east-1 cluster, where the operator runs."
}

variable "application_id" {
  type        = string
  description = "ID of the Qovery application to expose (billing-api in the sandbox)."
}

variable "web_application_id" {
  type        = string
  description = "ID of the Qovery web application to serve over HTTPS, in the same environment (web in the sandbox)."
}

variable "denied_user" {
  type        = string
  description = "A member of the tailnet outside group:platform-ops, who must not reach billing-api (a user of the sandbox tailnet by default)."
  default     = "carol@example.com"
}

variable "chart_version" {
  type        = string
  description = "Pinned version of the tailscale-operator chart."
  default     = "1.102.4"
}

# ---- Per tailnet (examples/modules/tailnet) ----

# Tailscale's stable chart channel, as an organization Helm repository.
resource "qtail_helm_repository" "tailscale" {
  organization_id = var.organization_id
  name            = "tailscale"
}

# tagOwners: the operator's own tag (only admins may apply it), the tag of
# every proxy it creates, and the tags of the billing and web proxies alone.
resource "qtail_tag_owner" "k8s_operator" {
  tag    = "tag:k8s-operator"
  owners = []
}

resource "qtail_tag_owner" "k8s" {
  tag    = "tag:k8s"
  owners = [qtail_tag_owner.k8s_operator.tag]
}

resource "qtail_tag_owner" "k8s_billing" {
  tag    = "tag:k8s-billing"
  owners = [qtail_tag_owner.k8s_operator.tag]
}

resource "qtail_tag_owner" "k8s_web" {
  tag    = "tag:k8s-web"
  owners = [qtail_tag_owner.k8s_operator.tag]
}

# qtail's Helm repository: every qtail release publishes there the
# tailnet-manifests chart that deploys the Ingress below.
resource "qtail_helm_repository" "qtail" {
  organization_id = var.organization_id
  name            = "qtail"
  url             = "https://qtail.github.io/terraform-provider-qtail"
}

# ---- Per region (examples/modules/region) ----

# The operator of the us-east-1 cluster, with an OAuth client that qtail
# creates for this cluster alone; its secret goes straight to a Qovery
# secret variable and never into the Terraform state.
resource "qtail_operator" "us_east_1" {
  environment_id      = var.environment_id
  helm_repository_id  = qtail_helm_repository.tailscale.id
  chart_version       = var.chart_version
  hostname            = "tailscale-operator-us-east-1"
  default_tags        = [qtail_tag_owner.k8s_operator.tag]
  proxy_default_tags  = [qtail_tag_owner.k8s.tag]
  create_oauth_client = true
}

# billing-api at billing-api-us-east-1.TAILNET.ts.net, with its own tag.
resource "qtail_exposed_service" "billing" {
  application_id = var.application_id
  hostname       = "billing-api-us-east-1"
  tags           = [qtail_tag_owner.k8s_billing.tag]

  # The operator creates the proxy and removes it: Terraform installs the
  # operator first and uninstalls it last.
  operator_id = qtail_operator.us_east_1.id
}

# Only group:platform-ops reaches the billing proxy, on the ports the
# application declares (every declared port is reachable through it).
resource "qtail_grant" "platform_ops_to_billing" {
  name = "us-east-1-platform-ops-to-billing"
  src  = ["group:platform-ops"]
  dst  = [qtail_tag_owner.k8s_billing.tag]
  ip   = [for p in qtail_exposed_service.billing.ports : "${p.protocol == "UDP" ? "udp" : "tcp"}:${p.internal_port}"]
}

# The web application over HTTPS at https://web-us-east-1.TAILNET.ts.net/:
# an Ingress whose proxy serves port 443 with the tailnet's certificate (the
# plan checks that the tailnet has HTTPS certificates on) and passes the
# requests to the application's port 80. Only 443 is reachable.
resource "qtail_ingress" "web" {
  environment_id = var.environment_id
  application_id = var.web_application_id
  hostname       = "web-us-east-1"
  backend_port   = 80
  tags           = [qtail_tag_owner.k8s_web.tag]
  chart = {
    helm_repository = {
      repository_id = qtail_helm_repository.qtail.id
      chart_version = "0.1.0"
    }
  }
  operator_id = qtail_operator.us_east_1.id
}

resource "qtail_grant" "platform_ops_to_web" {
  name = "us-east-1-platform-ops-to-web"
  src  = ["group:platform-ops"]
  dst  = [qtail_tag_owner.k8s_web.tag]
  ip   = ["tcp:443"]
}

# Per tailnet: the rule every new tailnet ships with lets every device reach
# every proxy: remove it once the grants above give the access that is
# needed.
resource "qtail_allow_all_removal" "this" {
  depends_on = [qtail_grant.platform_ops_to_billing, qtail_grant.platform_ops_to_web]
}

# Per region: Tailscale refuses every later policy change that breaks these.
# A second region's tests need names of their own (the region module
# prefixes them with the region).
resource "qtail_policy_test" "platform_ops_reach_billing" {
  name       = "us-east-1-platform-ops-reach-billing"
  src        = "group:platform-ops"
  accept     = [for p in qtail_exposed_service.billing.ports : "${qtail_tag_owner.k8s_billing.tag}:${p.internal_port}"]
  depends_on = [qtail_grant.platform_ops_to_billing]
}

resource "qtail_policy_test" "others_denied_billing" {
  name       = "us-east-1-others-denied-billing"
  src        = var.denied_user
  deny       = [for p in qtail_exposed_service.billing.ports : "${qtail_tag_owner.k8s_billing.tag}:${p.internal_port}"]
  depends_on = [qtail_allow_all_removal.this]
}

# The proxy passes TCP through, so the scheme is the application's: an
# HTTP port gets an http:// URL, port 443 (TLS that billing-api terminates
# with a certificate of its own, not the tailnet's) the bare address.
output "billing_url" {
  description = "Where group:platform-ops reaches billing-api on the tailnet: its first declared port."
  value = [for p in qtail_exposed_service.billing.ports :
    p.protocol == "HTTP" && p.internal_port != 443 ? "http://${qtail_exposed_service.billing.tailnet_fqdn}:${p.internal_port}/" : "${qtail_exposed_service.billing.tailnet_fqdn}:${p.internal_port}"
  ][0]
}

output "web_url" {
  description = "Where group:platform-ops reaches the web application over HTTPS, with the tailnet's certificate."
  value       = qtail_ingress.web.url
}

output "billing_device" {
  value = {
    fqdn = qtail_exposed_service.billing.tailnet_fqdn
    ips  = qtail_exposed_service.billing.tailnet_ips
    tags = qtail_exposed_service.billing.tags
  }
}

output "operator_device" {
  value = {
    hostname = qtail_operator.us_east_1.hostname
    fqdn     = qtail_operator.us_east_1.tailnet_fqdn
  }
}

output "annotations_group_id" {
  description = "The Qovery annotations group that exposes billing-api."
  value       = qtail_exposed_service.billing.annotations_group_id
}
