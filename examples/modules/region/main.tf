# What exists once per cluster: the region's Tailscale operator, its
# services on the tailnet with the grants and policy tests of each, and
# optionally a connector and egress Services. Every name the module writes
# on the shared tailnet (hostnames, grant and test names) carries the
# region, so that one instance per region can share the tailnet and its
# policy file, from one root with for_each or from one root per region.

locals {
  # The tags of each service's proxy: its own, or the tailnet's proxy tag.
  service_tags = { for k, s in var.services : k => length(s.tags) > 0 ? s.tags : [var.tailnet.proxy_tag] }

  # One grant and one policy test per service and access entry.
  access = merge([for k, s in var.services : {
    for a, x in s.access : "${k}/${a}" => merge(x, { service = k, name = "${var.region}-${k}-${a}" })
  }]...)

  # One policy test per service and denied source.
  denied = merge([for k, s in var.services : {
    for d in s.denied : "${k}/${d}" => {
      service = k
      src     = d
      name    = "${var.region}-${k}-denies-${replace(d, "/[^A-Za-z0-9._-]+/", "-")}"
    }
  }]...)

  connector_name = var.connector == null ? null : coalesce(var.connector.name, "vpc-${var.region}")

  # The tailnet-manifests chart from qtail's Helm repository, pinned.
  manifests_chart = {
    helm_repository = {
      repository_id = var.tailnet.manifests_helm_repository_id
      chart_version = var.manifests_chart_version
    }
  }
}

resource "qtail_operator" "this" {
  environment_id     = var.environment_id
  helm_repository_id = var.tailnet.operator_helm_repository_id
  chart_version      = var.operator.chart_version
  hostname           = coalesce(var.operator.hostname, "tailscale-operator-${var.region}")
  api_server_proxy   = var.operator.api_server_proxy
  default_tags       = [var.tailnet.operator_tag]
  proxy_default_tags = [var.tailnet.proxy_tag]
  extra_values       = var.operator.extra_values

  # An OAuth client for this cluster alone, created by qtail, unless one is
  # given.
  create_oauth_client            = var.operator.oauth_client_id == null
  oauth_client_id                = var.operator.oauth_client_id
  oauth_client_secret_wo         = var.operator_oauth_client_secret
  oauth_client_secret_wo_version = var.operator.oauth_client_id == null ? null : var.operator_oauth_client_secret_version
}

resource "qtail_exposed_service" "this" {
  for_each       = var.services
  application_id = each.value.application_id
  container_id   = each.value.container_id
  hostname       = coalesce(each.value.hostname, "${each.key}-${var.region}")
  tags           = length(each.value.tags) > 0 ? each.value.tags : null
  operator_id    = qtail_operator.this.id
}

resource "qtail_grant" "access" {
  for_each = local.access
  name     = each.value.name
  src      = each.value.src
  dst      = local.service_tags[each.value.service]
  ip = [for p in qtail_exposed_service.this[each.value.service].ports : "${p.protocol == "UDP" ? "udp" : "tcp"}:${p.internal_port}"
  if each.value.ports == null || contains(coalesce(each.value.ports, []), p.internal_port)]

  lifecycle {
    precondition {
      condition     = alltrue([for p in coalesce(each.value.ports, []) : contains(qtail_exposed_service.this[each.value.service].ports[*].internal_port, p)])
      error_message = "services[\"${each.value.service}\"].access: ports ${jsonencode(coalesce(each.value.ports, []))} include a port the service does not declare; it declares ${jsonencode(qtail_exposed_service.this[each.value.service].ports[*].internal_port)}."
    }
  }
}

# Tailscale refuses every later change of the policy file, from anyone, that
# breaks these.
resource "qtail_policy_test" "access" {
  for_each = local.access
  name     = each.value.name
  src      = coalesce(each.value.test_src, each.value.src[0])
  accept = [for p in qtail_exposed_service.this[each.value.service].ports : "${local.service_tags[each.value.service][0]}:${p.internal_port}"
  if each.value.ports == null || contains(coalesce(each.value.ports, []), p.internal_port)]
  depends_on = [qtail_grant.access]
}

resource "qtail_policy_test" "denied" {
  for_each   = local.denied
  name       = each.value.name
  src        = each.value.src
  deny       = [for p in qtail_exposed_service.this[each.value.service].ports : "${local.service_tags[each.value.service][0]}:${p.internal_port}"]
  depends_on = [qtail_grant.access]
}

resource "qtail_connector" "this" {
  count          = var.connector == null ? 0 : 1
  environment_id = qtail_operator.this.environment_id
  name           = local.connector_name
  chart          = local.manifests_chart
  hostname       = local.connector_name
  subnet_routes  = length(var.connector.subnet_routes) > 0 ? var.connector.subnet_routes : null
  exit_node      = var.connector.exit_node
  tags           = length(var.connector.tags) > 0 ? var.connector.tags : [var.tailnet.proxy_tag]
  approve_routes = var.connector.approve_routes
}

resource "qtail_grant" "connector" {
  count = var.connector == null ? 0 : length(var.connector.users) > 0 ? 1 : 0
  name  = "${var.region}-connector-routes"
  src   = var.connector.users
  dst   = concat(coalesce(qtail_connector.this[0].subnet_routes, []), var.connector.exit_node ? ["autogroup:internet"] : [])
  ip    = ["*"]
}

resource "qtail_egress_service" "this" {
  for_each       = var.egress_services
  environment_id = qtail_operator.this.environment_id
  name           = each.key
  chart          = local.manifests_chart
  tailnet_fqdn   = each.value.tailnet_fqdn
  tailnet_ip     = each.value.tailnet_ip
  ports          = each.value.ports
}
