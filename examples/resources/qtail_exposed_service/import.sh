# An exposure is imported by the ID of its application and the ID of its
# annotations group (an organization annotations group of Qovery).
terraform import qtail_exposed_service.billing_us_east_1 3fa85f64-5717-4562-b3fc-2c963f66afa6/7d2c9e41-0b6a-4f3e-9a55-1c8e2b4d6f90

# An exposure of a container is imported by container/CONTAINER_ID/GROUP_ID.
terraform import qtail_exposed_service.metrics_us_east_1 container/67f3c4fd-0a92-4661-939b-4a70a1ce055b/2b7e4c1a-9d3f-4e6b-8a21-5f0c9d7e3b14
