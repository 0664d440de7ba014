# The platform team's grants for us-east-1, managed together: one plan-time
# validation and one write of the policy file for the whole set, however
# many grants it holds. Each grant is still its own fragment of the policy
# file, marked "// qtail:grant:NAME", and a plan shows only the grants that
# change.
locals {
  billing_ports = {
    "us-east-1-ops-to-billing"    = ["tcp:443"]
    "us-east-1-oncall-to-billing" = ["tcp:443", "tcp:8443"]
  }
}

resource "qtail_grants" "platform" {
  grants = merge(
    {
      for name, ports in local.billing_ports : name => {
        src = ["group:platform-ops"]
        dst = [qtail_tag_owner.billing.tag]
        ip  = ports
      }
    },
    {
      "us-east-1-ops-kubernetes-read" = {
        src = ["group:platform-ops"]
        dst = ["tag:k8s-operator"]
        app = jsonencode({
          "tailscale.com/cap/kubernetes" = [{
            impersonate = { groups = ["tailnet-readers"] }
          }]
        })
      }
    },
  )
}

resource "qtail_tag_owner" "billing" {
  tag    = "tag:k8s-billing"
  owners = ["tag:k8s-operator"]
}
