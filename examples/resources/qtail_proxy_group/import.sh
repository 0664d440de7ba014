# A ProxyGroup is imported by the ID of its Qovery Helm service. Every
# attribute comes back from the ProxyGroup in the Helm service's values file
# and from the service itself (environment, chart source);
# wait_for_devices takes its default.
terraform import qtail_proxy_group.ingress 3f6d2b1a-8c4e-4d7f-9a0b-1c2d3e4f5a6b
