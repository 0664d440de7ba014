# Reads what the tests check on the sandbox: the policy file and devices.

terraform {
  required_providers {
    qtail = {
      source  = "qtail/qtail"
      version = "~> 0.1"
    }
  }
}

variable "hostnames" {
  type    = list(string)
  default = []
}

data "qtail_policy" "this" {}

data "qtail_device" "this" {
  for_each = toset(var.hostnames)
  hostname = each.key
}

output "fragments" {
  value = { for f in data.qtail_policy.this.fragments : "${f.kind}:${f.key}" => jsondecode(f.value) }
}

output "allow_all_present" {
  value = data.qtail_policy.this.findings.allow_all_present
}

output "hujson" {
  value = data.qtail_policy.this.hujson
}

output "devices" {
  value = { for h, d in data.qtail_device.this : h => { connected = d.connected, tags = sort(d.tags), fqdn = d.fqdn } }
}
