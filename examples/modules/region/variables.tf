variable "region" {
  type        = string
  description = "Name of the region, such as `us-east-1`. It is part of every hostname, grant name and policy test name the module creates, so that the regions share one tailnet and one policy file without taking each other's names."

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,30}[a-z0-9]$", var.region))
    error_message = "region: \"${var.region}\" must be 2 to 32 lower-case letters, digits and dashes, starting with a letter and ending with a letter or a digit, such as us-east-1."
  }
}

variable "environment_id" {
  type        = string
  description = "ID of the Qovery environment, on the region's cluster, where the operator runs, and the connector and egress Services when there are any."

  validation {
    condition     = can(regex("^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$", var.environment_id))
    error_message = "environment_id: \"${var.environment_id}\" is not a Qovery ID (a UUID such as 3fa85f64-5717-4562-b3fc-2c963f66afa6)."
  }
}

variable "tailnet" {
  type = object({
    operator_helm_repository_id  = string
    manifests_helm_repository_id = string
    operator_tag                 = string
    proxy_tag                    = string
    service_tags                 = optional(list(string))
    regions = optional(map(object({
      proxy_tag    = string
      service_tags = map(string)
    })))
  })
  description = "What the tailnet module made: pass `module.tailnet` in the same root, or the platform root's output (`data.terraform_remote_state.platform.outputs.tailnet`, or a variable fed from `terraform output -json tailnet`). Other attributes are ignored. With `service_tags`, every service's tags must be among them; `regions` gives each region's own tags (see `isolation`)."
  nullable    = false
}

variable "isolation" {
  type        = bool
  description = <<-EOT
    Whether the region's proxies carry tags of their own region (the default): each tag a service, the connector or the
    operator's proxies would carry, the tailnet's proxy tag or a service tag such as `tag:k8s-billing`, becomes its
    region's tag from the tailnet module's `regions` output (`tag:k8s-billing-us-east-1`), and the grants name those. A
    grant of this region then reaches this region's services alone; `access[...].regions` reaches others explicitly. With
    `false`, every region's proxies carry the shared tags, and a grant that names one reaches the proxies of every region.
  EOT
  default     = true
  nullable    = false

  validation {
    condition     = !var.isolation || contains(keys(coalesce(var.tailnet.regions, {})), var.region)
    error_message = "isolation: the tailnet module gives region ${var.region} no tags of its own (its regions: ${jsonencode(sort(keys(coalesce(var.tailnet.regions, {}))))}). Add \"${var.region}\" to the regions of the tailnet module, in the platform root, and apply it first; or set isolation = false, and every region's grants that name a shared tag reach this region's proxies too."
  }
}

variable "operator" {
  type = object({
    chart_version    = optional(string, "1.102.4")
    hostname         = optional(string)
    api_server_proxy = optional(string, "false")
    oauth_client_id  = optional(string)
    extra_values     = optional(string)
  })
  description = "The region's Tailscale operator. `chart_version` pins the tailscale-operator chart; `hostname` defaults to `tailscale-operator-REGION`. Without `oauth_client_id`, qtail creates the operator's OAuth client (its secret goes straight to Qovery, never into the state); with it, give the secret in `operator_oauth_client_secret`."
  default     = {}
  nullable    = false

  validation {
    condition     = contains(["false", "true", "noauth"], var.operator.api_server_proxy)
    error_message = "operator.api_server_proxy: \"${var.operator.api_server_proxy}\" must be \"false\", \"true\" or \"noauth\"."
  }
  validation {
    condition     = var.operator.hostname == null || can(regex("^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$", coalesce(var.operator.hostname, "-")))
    error_message = "operator.hostname: \"${var.operator.hostname == null ? "" : var.operator.hostname}\" must be a DNS label: 1 to 63 lower-case letters, digits and dashes, such as tailscale-operator-${var.region}."
  }
}

variable "operator_oauth_client_secret" {
  type        = string
  description = "Secret of `operator.oauth_client_id`, written into Qovery and never stored in the plan or the state (an ephemeral value). Required with `operator.oauth_client_id`; leave it null when qtail creates the client."
  default     = null
  sensitive   = true
  ephemeral   = true

  validation {
    condition     = (var.operator_oauth_client_secret == null) == (var.operator.oauth_client_id == null)
    error_message = "operator_oauth_client_secret: give it together with operator.oauth_client_id, or neither (qtail then creates the operator's OAuth client)."
  }
}

variable "operator_oauth_client_secret_version" {
  type        = number
  description = "Version of `operator_oauth_client_secret`: change it to write a new secret into Qovery and redeploy the operator."
  default     = 1
  nullable    = false
}

variable "services" {
  type = map(object({
    application_id = optional(string)
    container_id   = optional(string)
    hostname       = optional(string)
    tags           = optional(list(string), [])
    access = optional(map(object({
      src      = list(string)
      ports    = optional(list(number))
      test_src = optional(string)
      regions  = optional(list(string), [])
    })), {})
    denied = optional(list(string), [])
  }))
  description = <<-EOT
    The region's services on the tailnet, by name (lower-case letters, digits and dashes): each is one Qovery application
    (`application_id`) or container (`container_id`), exposed at `hostname` (default `NAME-REGION`) with `tags` (default the
    tailnet's proxy tag; give each kind of service a tag of its own). `access` maps a name to who (`src`) may reach which of
    the service's ports (`ports`, default every port it declares): each becomes the grant `REGION-NAME-ACCESS` and the policy
    test of the same name, run from `test_src` (default the first `src`). With `isolation`, the grant reaches this region's
    proxies alone; `regions` lists other regions whose proxies of the same tags it reaches too, on the same ports (an
    explicit reach across regions). `denied` lists sources that must not reach the service: each becomes a policy test
    `REGION-NAME-denies-SOURCE`.
  EOT
  default     = {}
  nullable    = false

  validation {
    condition     = alltrue([for k in keys(var.services) : can(regex("^[a-z0-9]([a-z0-9-]*[a-z0-9])?$", k))])
    error_message = "services: the name ${join(", ", [for k in keys(var.services) : jsonencode(k) if !can(regex("^[a-z0-9]([a-z0-9-]*[a-z0-9])?$", k))])} must be lower-case letters, digits and dashes: it is part of hostnames and policy names."
  }
  validation {
    condition     = alltrue([for k, s in var.services : (s.application_id == null) != (s.container_id == null)])
    error_message = "services: ${join(", ", [for k, s in var.services : "services[\"${k}\"]" if(s.application_id == null) == (s.container_id == null)])} needs exactly one of application_id and container_id."
  }
  validation {
    condition = alltrue([for k, s in var.services :
    can(regex("^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$", coalesce(s.hostname, "${k}-${var.region}")))])
    error_message = "services: the hostname of ${join(", ", [for k, s in var.services : "services[\"${k}\"] (\"${coalesce(s.hostname, "${k}-${var.region}")}\")" if !can(regex("^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$", coalesce(s.hostname, "${k}-${var.region}")))])} must be a DNS label: 1 to 63 lower-case letters, digits and dashes."
  }
  validation {
    condition     = length(distinct([for k, s in var.services : coalesce(s.hostname, "${k}-${var.region}")])) == length(var.services)
    error_message = "services: two services have the same hostname; each needs its own."
  }
  validation {
    condition     = alltrue(flatten([for k, s in var.services : [for t in s.tags : can(regex("^tag:[A-Za-z][A-Za-z0-9-]*$", t))]]))
    error_message = "services: ${join(", ", flatten([for k, s in var.services : [for t in s.tags : "services[\"${k}\"].tags (${jsonencode(t)})" if !can(regex("^tag:[A-Za-z][A-Za-z0-9-]*$", t))]]))} is not a tag: write tag: then a letter, then letters, digits or dashes."
  }
  validation {
    condition = var.tailnet.service_tags == null || alltrue(flatten([for k, s in var.services :
    [for t in s.tags : contains(concat([var.tailnet.proxy_tag], coalesce(var.tailnet.service_tags, [])), t)]]))
    error_message = "services: ${join(", ", flatten([for k, s in var.services : [for t in s.tags : "services[\"${k}\"].tags (${jsonencode(t)})" if !contains(concat([var.tailnet.proxy_tag], coalesce(var.tailnet.service_tags, [])), t)]]))} is not a tag the tailnet module owns (${join(", ", concat([var.tailnet.proxy_tag], coalesce(var.tailnet.service_tags, [])))}): add it to its service_tags, or fix the typo."
  }
  validation {
    condition = alltrue(flatten([for k, s in var.services : [for a, x in s.access :
    can(regex("^[A-Za-z0-9][A-Za-z0-9._-]*$", a)) && length(x.src) > 0]]))
    error_message = "services: ${join(", ", flatten([for k, s in var.services : [for a, x in s.access : "services[\"${k}\"].access[\"${a}\"]" if !(can(regex("^[A-Za-z0-9][A-Za-z0-9._-]*$", a)) && length(x.src) > 0)]]))} needs a name of letters, digits, ., _ and - (it is part of the grant's name) and at least one src."
  }
  validation {
    condition = alltrue(flatten([for k, s in var.services : [for a, x in s.access :
    [for p in coalesce(x.ports, [1]) : p >= 1 && p <= 65535 && floor(p) == p]]]))
    error_message = "services: the ports of ${join(", ", distinct(flatten([for k, s in var.services : [for a, x in s.access : [for p in coalesce(x.ports, [1]) : "services[\"${k}\"].access[\"${a}\"]" if !(p >= 1 && p <= 65535 && floor(p) == p)]]])))} must be port numbers from 1 to 65535."
  }
  validation {
    condition = alltrue(flatten([for k, s in var.services : concat(
      [for a, x in s.access : length(x.src) == 0 || !can(regex("^(\\*|autogroup:.*|.*/.*)$", coalesce(x.test_src, try(x.src[0], "-"))))],
      [for d in s.denied : !can(regex("^(\\*|autogroup:.*|.*/.*)$", d))],
    )]))
    error_message = "services: ${join(", ", flatten([for k, s in var.services : concat(
      [for a, x in s.access : "services[\"${k}\"].access[\"${a}\"] (policy test from ${jsonencode(coalesce(x.test_src, try(x.src[0], "-")))}; set test_src to one user or group of src)" if length(x.src) > 0 && can(regex("^(\\*|autogroup:.*|.*/.*)$", coalesce(x.test_src, try(x.src[0], "-"))))],
      [for d in s.denied : "services[\"${k}\"].denied (${jsonencode(d)})" if can(regex("^(\\*|autogroup:.*|.*/.*)$", d))],
    )]))}: a policy test runs from one user, group, tag, host or IP, not a wildcard, an autogroup or a CIDR."
  }
  validation {
    condition = alltrue(flatten([for k, s in var.services : [for a, x in s.access : [for r in x.regions :
    var.isolation && r != var.region && contains(keys(coalesce(var.tailnet.regions, {})), r)]]]))
    error_message = "services: ${join(", ", distinct(flatten([for k, s in var.services : [for a, x in s.access : [for r in x.regions : "services[\"${k}\"].access[\"${a}\"].regions (${jsonencode(r)})" if !(var.isolation && r != var.region && contains(keys(coalesce(var.tailnet.regions, {})), r))]]])))} must name another region of the tailnet module's regions (${jsonencode(sort(keys(coalesce(var.tailnet.regions, {}))))}), with isolation on: without it, the grant already reaches every region."
  }
  validation {
    condition = !var.isolation || try(var.tailnet.regions[var.region], null) == null || alltrue(flatten([for k, s in var.services :
    [for t in s.tags : t == var.tailnet.proxy_tag || !contains(coalesce(var.tailnet.service_tags, [t]), t) || contains(keys(try(var.tailnet.regions[var.region].service_tags, {})), t)]]))
    error_message = "services: ${join(", ", flatten([for k, s in var.services : [for t in s.tags : "services[\"${k}\"].tags (${jsonencode(t)})" if !(t == var.tailnet.proxy_tag || !contains(coalesce(var.tailnet.service_tags, [t]), t) || contains(keys(try(var.tailnet.regions[var.region].service_tags, {})), t))]]))} has no tag of region ${var.region} in the tailnet module: add it to the tailnet module's service_tags (the platform root), which gives it a tag in each region."
  }
}

variable "connector" {
  type = object({
    name           = optional(string)
    subnet_routes  = optional(list(string), [])
    exit_node      = optional(bool, false)
    approve_routes = optional(bool, true)
    tags           = optional(list(string), [])
    users          = optional(list(string), [])
  })
  description = "An optional connector: a subnet router for `subnet_routes` (such as the region's VPC) and/or an exit node, named `name` (default `vpc-REGION`, also its device's hostname). `approve_routes` approves its routes through the Tailscale API; `users` are granted every route (and the internet through the exit node) by the grant `REGION-connector-routes`. Its tags default to the tailnet's proxy tag (its region's, with `isolation`)."
  default     = null

  validation {
    condition     = var.connector == null || length(try(var.connector.subnet_routes, [])) > 0 || try(var.connector.exit_node, false)
    error_message = "connector: needs subnet_routes, exit_node = true, or both."
  }
  validation {
    condition     = var.connector == null || alltrue([for r in try(var.connector.subnet_routes, []) : can(cidrhost(r, 0)) && try(cidrsubnet(r, 0, 0) == r, false)])
    error_message = "connector.subnet_routes: ${join(", ", [for r in try(var.connector.subnet_routes, []) : jsonencode(r) if !(can(cidrhost(r, 0)) && try(cidrsubnet(r, 0, 0) == r, false))])} is not a CIDR without host bits, such as 10.0.0.0/16."
  }
  validation {
    condition     = try(var.connector.name, null) == null || can(regex("^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$", coalesce(try(var.connector.name, null), "-")))
    error_message = "connector.name: \"${try(var.connector.name == null ? "" : var.connector.name, "")}\" must be 2 to 63 lower-case letters, digits and dashes."
  }
}

variable "egress_services" {
  type = map(object({
    tailnet_fqdn = optional(string)
    tailnet_ip   = optional(string)
    ports        = optional(list(string))
  }))
  description = "Egress Services by name: cluster workloads reach the tailnet machine `tailnet_fqdn` or `tailnet_ip` at `NAME.NAMESPACE.svc.cluster.local`. The policy must let the proxy tag reach the machine."
  default     = {}
  nullable    = false

  validation {
    condition     = alltrue([for k, e in var.egress_services : (e.tailnet_fqdn == null) != (e.tailnet_ip == null)])
    error_message = "egress_services: ${join(", ", [for k, e in var.egress_services : "egress_services[\"${k}\"]" if(e.tailnet_fqdn == null) == (e.tailnet_ip == null)])} needs exactly one of tailnet_fqdn and tailnet_ip."
  }
  validation {
    condition     = alltrue([for k in keys(var.egress_services) : can(regex("^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$", k))])
    error_message = "egress_services: the name ${join(", ", [for k in keys(var.egress_services) : jsonencode(k) if !can(regex("^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$", k))])} must be a Kubernetes Service name: lower-case letters, digits and dashes, starting with a letter."
  }
}

variable "manifests_chart_version" {
  type        = string
  description = "Version of qtail's tailnet-manifests chart that the connector and the egress Services install: the version published with the qtail release you use."
  default     = "0.1.0"
  nullable    = false
}
