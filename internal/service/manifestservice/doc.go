// Package manifestservice holds the manifest services: qtail_connector,
// qtail_proxy_group and qtail_egress_service. Each renders one Kubernetes
// object into the values of a Qovery Helm service whose chart applies the
// list `manifests`, and shares one lifecycle (manifestResource): write the
// Helm service, deploy it and wait (cluster.Deployment), then wait for the
// devices the operator brings up.
package manifestservice
