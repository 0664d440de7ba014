import {
  to = qtail_grants.platform
  id = "us-east-1-ops-to-billing,us-east-1-oncall-to-billing,us-east-1-ops-kubernetes-read"
}
