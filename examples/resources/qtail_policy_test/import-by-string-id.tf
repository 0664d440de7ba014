import {
  to = qtail_policy_test.ops_reach_billing
  id = "us-east-1-ops-reach-billing"
}
