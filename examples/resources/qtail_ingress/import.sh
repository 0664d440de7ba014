# An Ingress is imported by the ID of its Qovery Helm service. Every
# attribute comes back from the Ingress in the Helm service's values file
# and from the service itself (environment, chart source); the application
# is the one of the environment whose Kubernetes Service is the Ingress's
# backend.
terraform import qtail_ingress.billing 4f7d2c1e-9a3b-4e6f-8d2c-7b1a0e9f3c5d
