# The egress proxy's tag may reach the tailnet database on PostgreSQL.
resource "qtail_grant" "egress_to_db" {
  name = "k8s-egress-to-db"
  src  = ["tag:k8s"]
  dst  = ["tag:db"]
  ip   = ["tcp:5432"]
}

# Whether the cluster's workloads can reach the database behind the egress
# Service: the target is on the tailnet, and the policy lets the egress
# proxy's tags reach it on every port of the Service. Tailscale itself
# answers, through policy tests run against the current policy file (nothing
# is changed). Read after the grant, so that it sees it.
data "qtail_egress_status" "db" {
  egress_service_id = var.egress_service_id
  depends_on        = [qtail_grant.egress_to_db]
}

check "db_egress" {
  assert {
    condition     = data.qtail_egress_status.db.allowed
    error_message = join("\n", data.qtail_egress_status.db.missing)
  }
}

# The ID of a qtail_egress_service (qtail_egress_service.NAME.id when it is
# in the same configuration).
variable "egress_service_id" {
  type        = string
  description = "ID of the egress Service's Qovery Helm service."
}
