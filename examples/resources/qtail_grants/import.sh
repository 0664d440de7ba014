# Grants are imported by their names, separated by commas: the NAME of each
# marker comment "// qtail:grant:NAME" in the policy file. To take over a
# grant written by hand, add that comment on its own line just above it
# first. Grants of the configuration that the ID leaves out are added by the
# next apply.
terraform import qtail_grants.platform us-east-1-ops-to-billing,us-east-1-oncall-to-billing,us-east-1-ops-kubernetes-read
