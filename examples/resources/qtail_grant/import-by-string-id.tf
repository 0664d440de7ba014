import {
  to = qtail_grant.ops_to_billing
  id = "us-east-1-ops-to-billing"
}
