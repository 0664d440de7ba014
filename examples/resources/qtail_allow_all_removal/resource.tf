# The grants that replace the allow-all rule come first; then the rule goes.
resource "qtail_grant" "platform_ops_to_k8s" {
  name = "platform-ops-to-k8s"
  src  = ["group:platform-ops"]
  dst  = ["tag:k8s"]
  ip   = ["tcp:443"]
}

resource "qtail_allow_all_removal" "this" {
  depends_on = [qtail_grant.platform_ops_to_k8s]
}
