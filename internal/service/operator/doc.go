// Package operator holds qtail_operator: the Tailscale Kubernetes operator
// of one cluster, installed as a Qovery Helm service with its OAuth client
// in two Helm variables, deployed and waited for with cluster.Deployment,
// and checked on the tailnet.
package operator
