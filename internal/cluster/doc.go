// Package cluster is what qtail's resource families share about a Qovery
// cluster and the Tailscale operator that runs on it: the facts of the
// operator chart, the lookup of a cluster's operator, the deploy-and-wait
// of a Helm service that qtail wrote, the check that a Helm repository
// publishes a chart version, the checks that the operator owns the tags it
// must apply and that a planned ProxyGroup has the right type, and the
// devices the operator brings up on the tailnet.
package cluster
