variable "organization_id" {
  type        = string
  description = "ID of the Qovery organization whose clusters run the operators. The module creates its two Helm repositories there."

  validation {
    condition     = can(regex("^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$", var.organization_id))
    error_message = "organization_id: \"${var.organization_id}\" is not a Qovery ID (a UUID such as 3fa85f64-5717-4562-b3fc-2c963f66afa6)."
  }
}

variable "remove_allow_all" {
  type        = bool
  description = "Remove the allow-all rule a new tailnet ships with, and keep it removed. While it is there, every proxy the operators create is reachable by every device. Set `false` on a tailnet whose devices still rely on it, and remove it once grants cover the access they need."
}

variable "operator_tag" {
  type        = string
  description = "Tag of the operators' own devices; only admins may apply it (its owners are empty)."
  default     = "tag:k8s-operator"

  validation {
    condition     = can(regex("^tag:[A-Za-z][A-Za-z0-9-]*$", var.operator_tag))
    error_message = "operator_tag: \"${var.operator_tag}\" is not a tag: write tag: then a letter, then letters, digits or dashes, such as tag:k8s-operator."
  }
}

variable "proxy_tag" {
  type        = string
  description = "Default tag of the proxies, connectors and ProxyGroups the operators create, owned by `operator_tag`."
  default     = "tag:k8s"

  validation {
    condition     = can(regex("^tag:[A-Za-z][A-Za-z0-9-]*$", var.proxy_tag))
    error_message = "proxy_tag: \"${var.proxy_tag}\" is not a tag: write tag: then a letter, then letters, digits or dashes, such as tag:k8s."
  }
}

variable "service_tags" {
  type        = list(string)
  description = "More tags the operators may give proxies, one per kind of service (such as `tag:k8s-billing`), so that grants reach that service alone. Each is owned by `operator_tag`. The same tag serves every region: the regions' grants name the region, the tags do not."
  default     = []
  nullable    = false

  validation {
    condition     = alltrue([for t in var.service_tags : can(regex("^tag:[A-Za-z][A-Za-z0-9-]*$", t))])
    error_message = "service_tags: ${join(", ", [for t in var.service_tags : jsonencode(t) if !can(regex("^tag:[A-Za-z][A-Za-z0-9-]*$", t))])} is not a tag: write tag: then a letter, then letters, digits or dashes, such as tag:k8s-billing."
  }
  validation {
    condition     = length(distinct(var.service_tags)) == length(var.service_tags)
    error_message = "service_tags: each tag once; repeated: ${join(", ", distinct([for i, t in var.service_tags : t if contains(slice(var.service_tags, 0, i), t)]))}."
  }
}

variable "regions" {
  type        = list(string)
  description = "The regions whose services get tags of their own, so that a grant of one region reaches that region alone. For each region REGION, the module owns `PROXY_TAG-REGION` (such as `tag:k8s-us-east-1`) and, for each service tag, `SERVICE_TAG-REGION` (such as `tag:k8s-billing-us-east-1`), all owned by `operator_tag`. The region module gives its proxies these tags, and names them in its grants, unless it is told to reach other regions."
  default     = []
  nullable    = false

  validation {
    condition     = alltrue([for r in var.regions : can(regex("^[a-z][a-z0-9-]{0,30}[a-z0-9]$", r))])
    error_message = "regions: ${join(", ", [for r in var.regions : jsonencode(r) if !can(regex("^[a-z][a-z0-9-]{0,30}[a-z0-9]$", r))])} must be 2 to 32 lower-case letters, digits and dashes, starting with a letter and ending with a letter or a digit, such as us-east-1: it is part of tags."
  }
  validation {
    condition     = length(distinct(var.regions)) == length(var.regions)
    error_message = "regions: each region once; repeated: ${join(", ", distinct([for i, r in var.regions : r if contains(slice(var.regions, 0, i), r)]))}."
  }
}

variable "helm_repository_names" {
  type = object({
    operator  = optional(string, "tailscale")
    manifests = optional(string, "qtail")
  })
  description = "Names of the organization Helm repositories the module creates: `operator` serves Tailscale's operator chart (stable channel), `manifests` serves qtail's tailnet-manifests chart (connectors, ProxyGroups, egress Services). Names are unique per organization."
  default     = {}
  nullable    = false

  validation {
    condition     = lower(var.helm_repository_names.operator) != lower(var.helm_repository_names.manifests)
    error_message = "helm_repository_names: operator and manifests are both \"${var.helm_repository_names.operator}\"; Qovery needs one name per repository."
  }
}

variable "policy_tests" {
  type = map(object({
    src    = string
    accept = optional(list(string), [])
    deny   = optional(list(string), [])
    proto  = optional(string)
  }))
  description = "Tailnet-wide policy tests, by name (the name of each test in the policy file, unique among every configuration that shares it): Tailscale refuses every later change of the policy file, from anyone, that breaks one. Destinations are `HOST:PORT`, such as `tag:k8s-billing:443`. Tests with `deny` run after the allow-all rule is removed."
  default     = {}
  nullable    = false

  validation {
    condition     = alltrue([for k, t in var.policy_tests : length(t.accept) + length(t.deny) > 0])
    error_message = "policy_tests: ${join(", ", [for k, t in var.policy_tests : jsonencode(k) if length(t.accept) + length(t.deny) == 0])} needs at least one destination in accept or deny."
  }
  validation {
    condition     = alltrue([for k in keys(var.policy_tests) : can(regex("^[A-Za-z0-9][A-Za-z0-9._-]*$", k))])
    error_message = "policy_tests: the name ${join(", ", [for k in keys(var.policy_tests) : jsonencode(k) if !can(regex("^[A-Za-z0-9][A-Za-z0-9._-]*$", k))])} is not a test name: letters, digits, ., _ and -, starting with a letter or a digit."
  }
}
