# The operator of the ap-south-1 cluster with workload identity: no secret
# anywhere. In the Tailscale admin console, a federated identity (Settings,
# Trust credentials) trusts the cluster's service account token issuer for
# the subject system:serviceaccount:<namespace>:operator and the audience
# below, with the scopes devices:core, auth_keys and services, tagged
# tag:k8s-operator. The chart projects a token with that audience into the
# operator's pod, and the operator exchanges it for API access.
resource "qtail_operator" "ap_south_1" {
  environment_id     = var.ap_south_1_environment_id
  helm_repository_id = qtail_helm_repository.tailscale.id
  chart_version      = "1.102.4" # workload identity needs chart 1.92 or later
  hostname           = "tailscale-operator-ap-south-1"

  # The ID of the federated identity, stored as a plain Qovery variable.
  oauth_client_id = var.ap_south_1_federated_identity_id
  oauth_audience  = "api.tailscale.com/${var.ap_south_1_federated_identity_id}"

  depends_on = [qtail_tag_owner.k8s_operator, qtail_tag_owner.k8s]
}

variable "ap_south_1_environment_id" {
  type        = string
  description = "ID of the Qovery environment of the operator, on the ap-south-1 cluster."
}

variable "ap_south_1_federated_identity_id" {
  type        = string
  description = "ID of the Tailscale federated identity of the ap-south-1 operator."
}
