// Package helmrepository holds qtail_helm_repository: the Qovery
// organization Helm repository that serves the Tailscale operator chart.
package helmrepository
