# A connector is imported by the ID of its Qovery Helm service. Every
# attribute comes back from the Connector in the Helm service's values file
# and from the service itself (environment, chart source); approve_routes
# and wait_for_devices take their defaults.
terraform import qtail_connector.homelab 5e0f8c2a-9b1d-4c3e-8f7a-6d5c4b3a2910
