# Whether the Tailscale Service of an application exposed through an
# ingress ProxyGroup carries traffic: the ProxyGroup's devices advertise
# svc:HOSTNAME, and each carries its traffic once it is approved.
data "qtail_service_status" "billing" {
  name = "svc:${var.hostname}"
}

check "billing_served" {
  assert {
    condition     = data.qtail_service_status.billing.approved
    error_message = join("\n", data.qtail_service_status.billing.missing)
  }
}

# The hostname of the exposure (qtail_exposed_service.NAME.hostname when it
# is in the same configuration).
variable "hostname" {
  type        = string
  description = "Hostname of the application exposed through the ingress ProxyGroup."
}
