# Pass the whole module to the region module (tailnet = module.tailnet), or
# publish it as one output of the platform root (value = module.tailnet) and
# read that from each region root.

output "organization_id" {
  description = "ID of the Qovery organization."
  value       = var.organization_id
}

output "operator_helm_repository_id" {
  description = "ID of the Helm repository that serves the Tailscale operator chart, for `qtail_operator.helm_repository_id`."
  value       = qtail_helm_repository.operator.id
}

output "manifests_helm_repository_id" {
  description = "ID of the Helm repository that serves qtail's tailnet-manifests chart, for `chart.helm_repository.repository_id` of connectors, ProxyGroups and egress Services."
  value       = qtail_helm_repository.manifests.id
}

output "operator_tag" {
  description = "Tag of the operators' devices."
  value       = qtail_tag_owner.operator.tag
}

output "proxy_tag" {
  description = "Default tag of the operators' proxies."
  value       = qtail_tag_owner.proxy.tag
}

output "service_tags" {
  description = "The per-service tags the operators may give proxies."
  value       = [for t in var.service_tags : qtail_tag_owner.service[t].tag]
}

output "regions" {
  description = "The tags of each region of `regions`: `proxy_tag`, its proxies' default tag, and `service_tags`, each service tag's tag in that region (`{\"tag:k8s-billing\" = \"tag:k8s-billing-us-east-1\"}`)."
  value = { for r, x in local.region_tags : r => {
    proxy_tag    = qtail_tag_owner.region[x.proxy_tag].tag
    service_tags = { for t, rt in x.service_tags : t => qtail_tag_owner.region[rt].tag }
  } }
}

output "allow_all_removed" {
  description = "Whether this module removes the allow-all rule (and keeps it removed)."
  value       = var.remove_allow_all
}

output "policy_test_names" {
  description = "Names of the tailnet-wide policy tests."
  value       = sort([for t in qtail_policy_test.this : t.name])
}
