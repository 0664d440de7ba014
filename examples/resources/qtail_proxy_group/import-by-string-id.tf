import {
  to = qtail_proxy_group.ingress
  id = "3f6d2b1a-8c4e-4d7f-9a0b-1c2d3e4f5a6b"
}
