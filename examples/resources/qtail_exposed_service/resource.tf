# The billing API of one region on the tailnet, at
# billing-api-us-east-1.TAILNET.ts.net, with its own tag so that the policy
# can grant access to it alone.

resource "qtail_tag_owner" "k8s_billing" {
  tag    = "tag:k8s-billing"
  owners = ["tag:k8s-operator"]
}

resource "qtail_exposed_service" "billing_us_east_1" {
  application_id = var.billing_application_id
  hostname       = "billing-api-us-east-1"

  # Referencing the tag owner plans it first: the plan checks that the
  # operator's tag owns every tag of the proxy.
  tags = [qtail_tag_owner.k8s_billing.tag]

  # The operator of the application's cluster must run before the proxy can
  # appear, and until the proxy is gone. When it is in the same
  # configuration (see qtail_operator), name it:
  # operator_id = qtail_operator.NAME.id
  # Terraform then installs it first and uninstalls it last.
}

# Only group:platform-ops reaches the proxy, on the ports the application
# declares (every declared port is reachable through the proxy).
resource "qtail_grant" "platform_ops_to_billing" {
  name = "platform-ops-to-billing"
  src  = ["group:platform-ops"]
  dst  = [qtail_tag_owner.k8s_billing.tag]
  ip = [
    for p in qtail_exposed_service.billing_us_east_1.ports :
    "${p.protocol == "UDP" ? "udp" : "tcp"}:${p.internal_port}"
  ]
}

variable "billing_application_id" {
  type        = string
  description = "ID of the Qovery application to expose."
}

output "billing_fqdn" {
  value = qtail_exposed_service.billing_us_east_1.tailnet_fqdn
}
