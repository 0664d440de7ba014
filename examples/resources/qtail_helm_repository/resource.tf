# The organization Helm repository that serves the Tailscale operator chart
# (Tailscale's stable channel by default).
resource "qtail_helm_repository" "tailscale" {
  organization_id = var.organization_id
  name            = "tailscale"
}

variable "organization_id" {
  type        = string
  description = "ID of the Qovery organization."
}
