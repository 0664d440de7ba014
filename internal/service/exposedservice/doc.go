// Package exposedservice holds qtail_exposed_service: one Qovery
// application on the tailnet through an annotations group that the
// Tailscale operator reads, a redeployment of the application, and a wait
// for the proxy device.
package exposedservice
