import {
  to = qtail_dns_config.dns
  id = "6b1e0c2d-4f3a-4b5c-9d8e-7f6a5b4c3d2e"
}
