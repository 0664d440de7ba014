import {
  to = qtail_tag_owner.k8s
  id = "tag:k8s"
}
