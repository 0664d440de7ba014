// Package tfx holds the Terraform helpers that every resource family of
// qtail uses: diagnostics, timeouts and waits, import IDs, string
// validators and the conversions between lists of strings and Terraform
// values. They use no other qtail package but the lower ones.
//
// Most of it knows nothing of Qovery, Tailscale or the cluster. The domain
// it does know is gathered in domain_validators.go: the validators of a
// Qovery ID, of a tailnet device's hostname and of a Tailscale tag (the
// last asks policy.ValidTag, hence the import of internal/policy). They
// are here because several families' schemas use them, the lower packages
// hold no Terraform types, and a family imports no other family.
package tfx
