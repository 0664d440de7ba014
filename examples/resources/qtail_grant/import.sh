# A grant is imported by its name: the NAME of its marker comment
# "// qtail:grant:NAME" in the policy file. To take over a grant written by
# hand, add that comment on its own line just above it first.
terraform import qtail_grant.ops_to_billing us-east-1-ops-to-billing
