// Package tfx holds the Terraform helpers of qtail that know nothing of
// Qovery, Tailscale or the cluster: diagnostics, timeouts, import IDs,
// string validators and the conversions between lists of strings and
// Terraform values. Every resource family uses them; they use no other
// qtail package but the lower ones.
package tfx
