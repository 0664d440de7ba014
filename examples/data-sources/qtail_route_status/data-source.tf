# Whether the routes of the home-lab connector work. A route works only when
# four things hold: the connector advertises it, it is approved, a grant lets
# someone reach it, and the client accepts routes. This data source checks
# the first three through the Tailscale API; the fourth is a setting of each
# client that no API shows (`tailscale up --accept-routes` on Linux, the
# default elsewhere): check it on the machines that use the routes.
data "qtail_route_status" "homelab" {
  connector_id = var.connector_id
}

# Report every unmet condition, with what to do, in each plan.
check "homelab_routes" {
  assert {
    condition     = data.qtail_route_status.homelab.ok
    error_message = join("\n", data.qtail_route_status.homelab.missing)
  }
}

output "homelab_routes" {
  value = {
    for r in data.qtail_route_status.homelab.routes : r.route => {
      advertised = r.advertised
      approval   = r.approval
      granted_by = r.granted_by
    }
  }
}

# Any device, by hostname, for the routes that matter most.
data "qtail_route_status" "gateway" {
  hostname     = "homelab"
  check_routes = ["10.20.0.0/16"]
}

# The ID of a qtail_connector (qtail_connector.NAME.id when it is in the same
# configuration).
variable "connector_id" {
  type        = string
  description = "ID of the connector's Qovery Helm service."
}
