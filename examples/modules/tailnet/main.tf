# What exists once per tailnet and Qovery organization, whatever the number
# of regions: the Helm repositories the operators and the manifest services
# install from, the tag owners of the operators and their proxies, the
# removal of the allow-all rule, and tailnet-wide policy tests. Apply it from
# one root, before the regions; the regions refer to it through its outputs.

# Tailscale's stable chart channel, for the operators of every region.
resource "qtail_helm_repository" "operator" {
  organization_id = var.organization_id
  name            = var.helm_repository_names.operator
}

# qtail's Helm repository, which serves the tailnet-manifests chart of every
# qtail release, for the connectors, ProxyGroups and egress Services of
# every region.
resource "qtail_helm_repository" "manifests" {
  organization_id = var.organization_id
  name            = var.helm_repository_names.manifests
  url             = "https://qtail.github.io/terraform-provider-qtail"
}

# Only admins may apply the operators' tag; the operators apply the tags of
# their proxies.
resource "qtail_tag_owner" "operator" {
  tag    = var.operator_tag
  owners = []
}

resource "qtail_tag_owner" "proxy" {
  tag    = var.proxy_tag
  owners = [qtail_tag_owner.operator.tag]
}

resource "qtail_tag_owner" "service" {
  for_each = toset(var.service_tags)
  tag      = each.key
  owners   = [qtail_tag_owner.operator.tag]
}

# The tags of each region's proxies: the proxy tag and every service tag,
# suffixed with the region, so that a grant that names them reaches that
# region's proxies and no other's.
locals {
  region_tags = { for r in var.regions : r => {
    proxy_tag    = "${var.proxy_tag}-${r}"
    service_tags = { for t in var.service_tags : t => "${t}-${r}" }
  } }
  region_tag_list = flatten([for r, x in local.region_tags : concat([x.proxy_tag], values(x.service_tags))])
}

resource "qtail_tag_owner" "region" {
  for_each = toset(local.region_tag_list)
  tag      = each.key
  owners   = [qtail_tag_owner.operator.tag]
}

resource "qtail_allow_all_removal" "this" {
  count = var.remove_allow_all ? 1 : 0
}

resource "qtail_policy_test" "this" {
  for_each = var.policy_tests
  name     = each.key
  src      = each.value.src
  accept   = length(each.value.accept) > 0 ? each.value.accept : null
  deny     = length(each.value.deny) > 0 ? each.value.deny : null
  proto    = each.value.proto

  # A test may name any tag this module owns, and a deny test holds only
  # without the allow-all rule.
  depends_on = [qtail_tag_owner.proxy, qtail_tag_owner.service, qtail_tag_owner.region, qtail_allow_all_removal.this]
}
