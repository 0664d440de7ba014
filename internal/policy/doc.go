// Package policy keeps the tailnet policy file of one process: a Store
// that reads the file once and writes the fragments qtail owns, and a
// Planner that checks at plan time the changes to them. The file is edited
// with the policyfile package, and concurrent changes are gathered by the
// batch package.
//
// # Concurrency
//
// A Store serves many fragment reads with one policy read, and gathers
// concurrent changes into one read-modify-write guarded by If-Match,
// rebased and retried on 412 within a bounded, jittered budget. When the
// server rejects a batch (400), each change of the batch is written again
// on its own, once, so that only the fragment at fault fails.
//
// A Planner, next to the Store, holds the changes that a Terraform plan
// makes to the fragments and validates each against the policy file as it
// will be, with the server's Validate; concurrent checks share one
// validation and are isolated the same way. The Store's writes and the
// Planner's checks are gathered by batchers (batch.Batcher) that share
// their estimate of Terraform's parallelism.
//
// # Size
//
// The Store writes, and the Planner plans, no change that would make the
// policy file larger than the file as read and than StoreOptions.MaxSize
// (MaxPolicySize unless set): such a change fails with a *TooLargeError.
package policy
