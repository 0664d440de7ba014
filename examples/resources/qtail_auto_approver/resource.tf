# Routes that the us-east-1 subnet router (a Connector tagged tag:k8s)
# advertises are approved without an admin.
resource "qtail_auto_approver" "us_east_1_pods" {
  route     = "10.20.0.0/16"
  approvers = ["tag:k8s"]
}

# Exit nodes run by the platform team are approved too.
resource "qtail_auto_approver" "exit_nodes" {
  exit_node = true
  approvers = ["group:platform-ops"]
}
