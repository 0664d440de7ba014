# The Tailscale operator of the us-east-1 cluster, with an OAuth client made
# in the Tailscale admin console (scopes devices:core, auth_keys and
# services, with write access, tagged tag:k8s-operator).

# The tag owners the operator needs: its own tag, and the proxy tag that it
# owns.
resource "qtail_tag_owner" "k8s_operator" {
  tag    = "tag:k8s-operator"
  owners = []
}

resource "qtail_tag_owner" "k8s" {
  tag    = "tag:k8s"
  owners = ["tag:k8s-operator"]
}

resource "qtail_helm_repository" "tailscale" {
  organization_id = var.organization_id
  name            = "tailscale"
}

resource "qtail_operator" "us_east_1" {
  environment_id     = var.environment_id
  helm_repository_id = qtail_helm_repository.tailscale.id
  chart_version      = "1.102.4"
  hostname           = "tailscale-operator-us-east-1"

  # The client ID is stored as a plain Qovery variable; the secret goes into
  # a Qovery secret and never into the plan or the state. Increment the
  # version to write a new secret.
  oauth_client_id                = var.operator_oauth_client_id
  oauth_client_secret_wo         = var.operator_oauth_client_secret
  oauth_client_secret_wo_version = 1

  # Planned after the tag owners, so that the plan-time check sees them.
  depends_on = [qtail_tag_owner.k8s_operator, qtail_tag_owner.k8s]
}

variable "organization_id" {
  type        = string
  description = "ID of the Qovery organization."
}

variable "environment_id" {
  type        = string
  description = "ID of the Qovery environment of the operator, on the us-east-1 cluster."
}

variable "operator_oauth_client_id" {
  type        = string
  description = "ID of the operator's OAuth client."
}

# Ephemeral: Terraform keeps it out of plan files and state.
variable "operator_oauth_client_secret" {
  type        = string
  description = "Secret of the operator's OAuth client."
  ephemeral   = true
  sensitive   = true
}

output "operator_fqdn" {
  value = qtail_operator.us_east_1.tailnet_fqdn
}
