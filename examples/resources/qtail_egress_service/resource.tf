# Workloads of the us-east-1 cluster reach a PostgreSQL server that runs on
# a tailnet machine (outside the cluster) at
# billing-db.NAMESPACE.svc.cluster.local:5432.

# qtail's Helm repository: every qtail release publishes its tailnet-manifests
# chart there. One per Qovery organization.
resource "qtail_helm_repository" "qtail" {
  organization_id = var.organization_id
  name            = "qtail"
  url             = "https://qtail.github.io/terraform-provider-qtail"
}

resource "qtail_egress_service" "billing_db" {
  environment_id = var.environment_id
  name           = "billing-db"

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

  tailnet_fqdn = "billing-db.tail1234.ts.net"
  ports        = ["tcp:5432"]

  # With the operator in the same configuration, name it, so that Terraform
  # installs it first and uninstalls it last:
  # operator_id = qtail_operator.NAME.id
}

# The egress proxy is a tailnet device tagged tag:k8s: the policy must let
# it reach the database machine, tagged tag:billing-db, on its port only.
resource "qtail_tag_owner" "billing_db" {
  tag    = "tag:billing-db"
  owners = ["group:platform-ops"]
}

resource "qtail_grant" "k8s_to_billing_db" {
  name = "us-east-1-k8s-to-billing-db"
  src  = ["tag:k8s"]
  dst  = [qtail_tag_owner.billing_db.tag]
  ip   = ["tcp:5432"]
}

# Whether the path works: the target is on the tailnet and the policy lets
# the proxy reach it on every port.
data "qtail_egress_status" "billing_db" {
  egress_service_id = qtail_egress_service.billing_db.id
  depends_on        = [qtail_grant.k8s_to_billing_db]
}

# The same through an egress ProxyGroup named egress, deployed on the
# cluster: its replicas carry the traffic, so the ports are required.
resource "qtail_egress_service" "metrics" {
  environment_id = var.environment_id
  name           = "metrics"

  chart = {
    helm_repository = {
      repository_id = qtail_helm_repository.qtail.id
      chart_version = "0.1.0"
    }
  }

  tailnet_ip  = "100.101.102.103"
  proxy_group = "egress"
  ports       = ["tcp:9090", "udp:8125"]
}

variable "organization_id" {
  type        = string
  description = "ID of the Qovery organization."
}

variable "environment_id" {
  type        = string
  description = "ID of the Qovery environment of the us-east-1 operator."
}

# Give this to the workloads, for example as a Qovery environment variable
# DATABASE_HOST.
output "billing_db_host" {
  value = qtail_egress_service.billing_db.cluster_dns_name
}

output "billing_db_missing" {
  value = data.qtail_egress_status.billing_db.missing
}
