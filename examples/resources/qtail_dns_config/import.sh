# A DNSConfig is imported by the ID of its Qovery Helm service. Every
# attribute comes back from the DNSConfig in the Helm service's values file
# and from the service itself (environment, chart source).
terraform import qtail_dns_config.dns 6b1e0c2d-4f3a-4b5c-9d8e-7f6a5b4c3d2e
