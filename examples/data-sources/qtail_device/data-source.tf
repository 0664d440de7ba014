# The proxy device of an exposure: its tags and whether it is connected.
data "qtail_device" "billing" {
  hostname = "billing-api-us-east-1"
}

output "billing_proxy" {
  value = {
    fqdn      = data.qtail_device.billing.fqdn
    tags      = data.qtail_device.billing.tags
    connected = data.qtail_device.billing.connected
  }
}
