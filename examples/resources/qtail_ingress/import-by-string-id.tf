import {
  to = qtail_ingress.billing
  id = "4f7d2c1e-9a3b-4e6f-8d2c-7b1a0e9f3c5d"
}
