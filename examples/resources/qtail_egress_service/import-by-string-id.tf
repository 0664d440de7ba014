import {
  to = qtail_egress_service.billing_db
  id = "9c2e4b1a-7d3f-4a5e-b6c8-1f0e2d3c4b5a"
}
