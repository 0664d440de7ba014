# An auto approver is imported by "route:" and its CIDR, or by "exitNode"
# for the approvers of exit nodes.
terraform import qtail_auto_approver.us_east_1_pods route:10.20.0.0/16
terraform import qtail_auto_approver.exit_nodes exitNode
