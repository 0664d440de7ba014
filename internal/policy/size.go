package policy

import "fmt"

// MaxPolicySize is the largest policy file qtail writes, 10 MiB.
//
// Tailscale documents no limit on the size of the policy file. The one
// bound found in Tailscale's own code is that its Go API client reads at
// most 10 MiB of an answer (maxReadSize in client/tailscale/tailscale.go),
// so a larger file could not be read back with it: qtail refuses, at plan
// time, a change that would make the file larger than that.
const MaxPolicySize = 10 << 20

// TooLargeError reports a change that would make the policy file larger
// than MaxPolicySize.
type TooLargeError struct {
	// Size is the size the file would have, Before its size as read, and
	// Limit the largest size qtail writes, in bytes.
	Size, Before, Limit int
}

// Error gives the sizes and what to do.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the policy file would grow from %d to %d bytes, beyond the %d bytes (%d MiB) that qtail writes: "+
		"Tailscale documents no size limit, and its own API client reads at most %d MiB of an answer, "+
		"so a larger file might not be read back; make the policy file smaller (fewer or shorter entries, "+
		"fewer comments) before adding more",
		e.Before, e.Size, e.Limit, e.Limit>>20, e.Limit>>20)
}

// checkSize refuses a policy file after a change that is larger than
// limit and than the file before it.
func checkSize(after, before []byte, limit int) error {
	if len(after) > limit && len(after) > len(before) {
		return &TooLargeError{Size: len(after), Before: len(before), Limit: limit}
	}
	return nil
}
