# Workloads of the us-east-1 cluster call tailnet machines by their MagicDNS
# names (https://metrics.tail1234.ts.net:9090, whose TLS certificate carries
# that name), through egress proxies. The operator's nameserver answers for
# those names once CoreDNS forwards ts.net to it.

resource "qtail_helm_repository" "qtail" {
  organization_id = var.organization_id
  name            = "qtail"
  url             = "https://qtail.github.io/terraform-provider-qtail"
}

# One DNSConfig per cluster: the operator supports no more.
resource "qtail_dns_config" "dns" {
  environment_id = var.environment_id

  chart = {
    helm_repository = {
      repository_id = qtail_helm_repository.qtail.id
      chart_version = "0.1.0"
    }
  }

  # A free address of the cluster's Service range: the nameserver's IP is
  # then known before the apply, and stays the same if the DNSConfig is
  # replaced, so the CoreDNS configuration never has to change.
  cluster_ip = "10.96.0.53"

  # Pin the nameserver's image, to upgrade it as a reviewed change.
  image_tag = "v1.102.3"

  # With the operator in the same configuration, name it, so that Terraform
  # installs it first and uninstalls it last:
  # operator_id = qtail_operator.NAME.id
}

# The egress target whose ts.net name the nameserver answers for.
resource "qtail_egress_service" "metrics" {
  environment_id = var.environment_id
  name           = "metrics"

  chart = {
    helm_repository = {
      repository_id = qtail_helm_repository.qtail.id
      chart_version = "0.1.0"
    }
  }

  tailnet_fqdn = "metrics.tail1234.ts.net"
  ports        = ["tcp:9090"]
}

variable "organization_id" {
  type        = string
  description = "ID of the Qovery organization."
}

variable "environment_id" {
  type        = string
  description = "ID of the Qovery environment of the cluster's operator."
}

# The address to which CoreDNS forwards ts.net (see the Egress guide).
output "nameserver_ip" {
  value = qtail_dns_config.dns.nameserver_ip
}
