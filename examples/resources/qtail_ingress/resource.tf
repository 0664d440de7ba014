# billing-api's port 8080 on the tailnet over HTTPS, at
# https://billing-api-us-east-1.TAILNET.ts.net/, with the tailnet's
# certificate. HTTPS Certificates must be on (DNS page of the admin console,
# with MagicDNS): the plan checks it.

# qtail's Helm repository: every qtail release publishes its tailnet-manifests
# chart there. One per Qovery organization.
resource "qtail_helm_repository" "qtail" {
  organization_id = var.organization_id
  name            = "qtail"
  url             = "https://qtail.github.io/terraform-provider-qtail"
}

resource "qtail_ingress" "billing" {
  # The application's own environment: an Ingress reaches only the Services
  # of its namespace.
  environment_id = var.environment_id
  application_id = var.application_id
  hostname       = "billing-api-us-east-1"
  backend_port   = 8080

  # The tailnet-manifests chart from qtail's Helm repository, pinned to the
  # version published with the qtail release in use.
  chart = {
    helm_repository = {
      repository_id = qtail_helm_repository.qtail.id
      chart_version = "0.1.0"
    }
  }

  # A tag of its own, owned by the operator's tag, so that a grant can
  # open tcp:443 of this proxy alone.
  tags = ["tag:k8s-billing"]

  # With the operator in the same configuration, name it, so that Terraform
  # installs it first and uninstalls it last:
  # operator_id = qtail_operator.NAME.id
}

variable "organization_id" {
  type        = string
  description = "ID of the Qovery organization."
}

variable "environment_id" {
  type        = string
  description = "ID of the Qovery environment of billing-api, on the us-east-1 cluster."
}

variable "application_id" {
  type        = string
  description = "ID of the Qovery application billing-api."
}

output "billing_url" {
  value = qtail_ingress.billing.url
}
