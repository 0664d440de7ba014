# The platform team reaches the billing API of us-east-1 on HTTPS only,
# through the proxy the Tailscale operator runs for it. The tag comes from
# its qtail_tag_owner, so that Terraform plans the tag first and qtail
# validates both changes together.
resource "qtail_grant" "ops_to_billing" {
  name = "us-east-1-ops-to-billing"
  src  = ["group:platform-ops"]
  dst  = [qtail_tag_owner.billing.tag]
  ip   = ["tcp:443"]
}

resource "qtail_tag_owner" "billing" {
  tag    = "tag:k8s-billing"
  owners = ["tag:k8s-operator"]
}

# An application capability: read-only access to the Kubernetes API through
# the operator's API server proxy. The proxy impersonates the group
# "tailnet-readers", which a ClusterRoleBinding must bind to a role (for
# example the built-in "view"); avoid "system:masters", which bypasses RBAC.
# To require trusted devices, add src_posture = ["posture:NAME"] once the
# policy file's "postures" section defines posture:NAME (qtail does not
# manage postures; a grant naming an undefined posture is refused).
resource "qtail_grant" "ops_kubernetes_read" {
  name = "us-east-1-ops-kubernetes-read"
  src  = ["group:platform-ops"]
  dst  = ["tag:k8s-operator"]
  app = jsonencode({
    "tailscale.com/cap/kubernetes" = [{
      impersonate = { groups = ["tailnet-readers"] }
    }]
  })
}
