# The operator of the eu-west-3 cluster with an OAuth client that qtail
# creates for this cluster alone (the provider's Tailscale credential needs
# the oauth_keys scope). qtail revokes the client when the operator is
# destroyed.
resource "qtail_operator" "eu_west_3" {
  environment_id     = var.eu_west_3_environment_id
  helm_repository_id = qtail_helm_repository.tailscale.id
  chart_version      = "1.102.4"
  hostname           = "tailscale-operator-eu-west-3"

  create_oauth_client = true

  # The operator also proxies the Kubernetes API on the tailnet; callers
  # still need RBAC in the cluster.
  api_server_proxy = "true"

  # Other chart values, merged under the ones qtail sets.
  extra_values = <<-EOT
    operatorConfig:
      logging: debug
  EOT

  timeouts = {
    create = "30m"
  }

  depends_on = [qtail_tag_owner.k8s_operator, qtail_tag_owner.k8s]
}

variable "eu_west_3_environment_id" {
  type        = string
  description = "ID of the Qovery environment of the operator, on the eu-west-3 cluster."
}
