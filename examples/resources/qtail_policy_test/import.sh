# A policy test is imported by its name: the NAME of its marker comment
# "// qtail:policy_test:NAME" in the policy file.
terraform import qtail_policy_test.ops_reach_billing us-east-1-ops-reach-billing
