# A tag owner is imported by its tag. An entry of tagOwners that has no
# qtail marker can be imported too: the next apply adds the marker and
# writes the owners of the configuration.
terraform import qtail_tag_owner.k8s tag:k8s
