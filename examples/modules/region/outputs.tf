output "region" {
  description = "The region's name, as it appears in hostnames and policy names."
  value       = var.region
}

output "operator" {
  description = "The region's operator: the ID of its Qovery Helm service, its device's hostname, MagicDNS name and node ID."
  value = {
    id          = qtail_operator.this.id
    hostname    = qtail_operator.this.hostname
    fqdn        = qtail_operator.this.tailnet_fqdn
    device_id   = qtail_operator.this.device_id
    environment = qtail_operator.this.environment_id
  }
}

# The proxy of an exposure passes TCP through: the scheme is the
# application's. An HTTP port gets an http:// URL; port 443, and a TCP, UDP
# or gRPC port, get the bare address: behind 443 the application terminates
# TLS itself, with a certificate of its own rather than the tailnet's
# HOST.TAILNET.ts.net, so neither http:// nor https:// would be honest.
output "urls" {
  description = "Per service, one address per port it declares, at its MagicDNS name: `http://FQDN:PORT/` for an HTTP port other than 443, `FQDN:PORT` for port 443 (the application's own TLS, passed through) and for TCP, UDP and gRPC ports."
  value = { for k, s in qtail_exposed_service.this :
    k => [for p in s.ports : p.protocol == "HTTP" && p.internal_port != 443 ? "http://${s.tailnet_fqdn}:${p.internal_port}/" : "${s.tailnet_fqdn}:${p.internal_port}"]
  }
}

output "devices" {
  description = "Per service, its proxy device: hostname, MagicDNS name, tailnet addresses, node ID and tags."
  value = { for k, s in qtail_exposed_service.this : k => {
    hostname  = s.hostname
    fqdn      = s.tailnet_fqdn
    ips       = s.tailnet_ips
    device_id = s.device_id
    tags      = local.service_tags[k]
  } }
}

output "annotations_group_ids" {
  description = "Per service, the Qovery annotations group that exposes it."
  value       = { for k, s in qtail_exposed_service.this : k => s.annotations_group_id }
}

output "grant_names" {
  description = "Names of the grants the region owns in the policy file."
  value       = sort(concat([for g in qtail_grant.access : g.name], qtail_grant.connector[*].name))
}

output "policy_test_names" {
  description = "Names of the policy tests the region owns in the policy file."
  value       = sort(concat([for t in qtail_policy_test.access : t.name], [for t in qtail_policy_test.denied : t.name]))
}

output "connector" {
  description = "The connector, when there is one: the ID of its Qovery Helm service and its devices' MagicDNS names."
  value = var.connector == null ? null : {
    id      = qtail_connector.this[0].id
    name    = qtail_connector.this[0].name
    devices = qtail_connector.this[0].devices[*].tailnet_fqdn
  }
}

output "egress_services" {
  description = "Per egress Service, the name cluster workloads call."
  value       = { for k, e in qtail_egress_service.this : k => e.cluster_dns_name }
}
