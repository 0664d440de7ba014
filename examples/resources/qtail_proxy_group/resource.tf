# Production traffic of the us-east-1 cluster goes through ProxyGroups: two
# ingress replicas serve the exposed applications as Tailscale Services,
# and two egress replicas carry the workloads' calls to tailnet machines.

# qtail's Helm repository: every qtail release publishes its tailnet-manifests
# chart there. One per Qovery organization.
resource "qtail_helm_repository" "qtail" {
  organization_id = var.organization_id
  name            = "qtail"
  url             = "https://qtail.github.io/terraform-provider-qtail"
}

resource "qtail_proxy_group" "ingress" {
  environment_id = var.environment_id
  name           = "ingress"
  type           = "ingress"

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

  # Hostnames name devices on the whole tailnet: the devices are
  # ingress-us-east-1-0 and ingress-us-east-1-1, and the eu-west-3 cluster
  # gets its own prefix.
  hostname_prefix = "ingress-us-east-1"
  replicas        = 2

  # With the operator in the same configuration, name it, so that Terraform
  # installs it first and uninstalls it last:
  # operator_id = qtail_operator.NAME.id
}

# The billing API served by the ingress replicas as the Tailscale Service
# svc:billing-api-us-east-1. It has no device of its own, so there is none
# to wait for. The operator creates the Tailscale Service through the API:
# its OAuth client needs the services scope (the client qtail_operator
# creates with create_oauth_client has it).
resource "qtail_exposed_service" "billing_us_east_1" {
  application_id  = var.billing_application_id
  hostname        = "billing-api-us-east-1"
  proxy_group     = qtail_proxy_group.ingress.name
  wait_for_device = false

  # The replicas carry the Service's traffic once the tailnet approves them
  # as its hosts: the plan checks that autoApprovers.services does, and
  # sees the approver when it is planned first.
  depends_on = [qtail_auto_approver.svc_billing_api_us_east_1]
}

# The replicas (tagged tag:k8s, the operator's default proxy tag) are
# approved as hosts of the Service without an admin.
resource "qtail_auto_approver" "svc_billing_api_us_east_1" {
  service   = "svc:billing-api-us-east-1"
  approvers = ["tag:k8s"]
}

resource "qtail_proxy_group" "egress" {
  environment_id = var.environment_id
  name           = "egress"
  type           = "egress"

  chart = {
    helm_repository = {
      repository_id = qtail_helm_repository.qtail.id
      chart_version = "0.1.0"
    }
  }

  hostname_prefix = "egress-us-east-1"

  # With the operator in the same configuration, name it, so that Terraform
  # installs it first and uninstalls it last:
  # operator_id = qtail_operator.NAME.id
}

# Workloads reach the metrics machine of the tailnet through the egress
# replicas.
resource "qtail_egress_service" "metrics" {
  environment_id = qtail_proxy_group.egress.environment_id
  name           = "metrics"

  chart = {
    helm_repository = {
      repository_id = qtail_helm_repository.qtail.id
      chart_version = "0.1.0"
    }
  }

  tailnet_ip  = "100.101.102.103"
  proxy_group = qtail_proxy_group.egress.name
  ports       = ["tcp:9090"]
}

variable "organization_id" {
  type        = string
  description = "ID of the Qovery organization."
}

variable "environment_id" {
  type        = string
  description = "ID of the Qovery environment of the cluster's operator."
}

variable "billing_application_id" {
  type        = string
  description = "ID of the Qovery application to expose."
}

output "ingress_devices" {
  value = qtail_proxy_group.ingress.devices[*].tailnet_fqdn
}
