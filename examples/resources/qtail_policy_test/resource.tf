# What the grant promises, checked by Tailscale on every later change of the
# policy file: the platform team reaches the billing API on HTTPS, and not
# on SSH. depends_on makes Terraform plan and write the grant first.
resource "qtail_policy_test" "ops_reach_billing" {
  name   = "us-east-1-ops-reach-billing"
  src    = "alice@example.com"
  accept = ["tag:k8s-billing:443"]
  deny   = ["tag:k8s-billing:22"]

  depends_on = [qtail_grant.ops_to_billing]
}

resource "qtail_grant" "ops_to_billing" {
  name = "us-east-1-ops-to-billing"
  src  = ["group:platform-ops"]
  dst  = ["tag:k8s-billing"]
  ip   = ["tcp:443"]
}
