# The tags of the Tailscale operator recipe: the operator's own device is
# tagged tag:k8s-operator, which only admins may apply (no owners); its
# proxies are tagged tag:k8s, which the operator may apply.
resource "qtail_tag_owner" "operator" {
  tag    = "tag:k8s-operator"
  owners = []
}

resource "qtail_tag_owner" "k8s" {
  tag    = "tag:k8s"
  owners = [qtail_tag_owner.operator.tag]
}
