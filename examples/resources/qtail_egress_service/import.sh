# An egress Service is imported by the ID of its Qovery Helm service. Every
# attribute comes back from the Service in the Helm service's values file,
# from the service itself (environment, chart source) and, for namespace
# and cluster_dns_name, from the built-in variable
# QOVERY_KUBERNETES_NAMESPACE_NAME that the Helm service sees.
terraform import qtail_egress_service.billing_db 9c2e4b1a-7d3f-4a5e-b6c8-1f0e2d3c4b5a
