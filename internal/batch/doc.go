// Package batch gathers the requests that Terraform's operations make at
// about the same time into batches, each handed to one runner, so that a
// wave of operations costs one call instead of one per operation.
//
// Terraform runs up to -parallelism operations at once and starts the
// next one as soon as one ends: the operations come in waves, one wave
// per answered batch. A Batcher waits for the rest of a wave before it
// runs a batch: for the requests known to be on their way (Expect), for
// the operations that its previous answers let Terraform start, and,
// before anything is known, for a quiet period. A Parallelism, shared by
// the batchers that the same operations go through, follows how many
// operations Terraform runs at once.
//
// The package knows nothing of what the requests are: the caller gives
// the runner, which returns one result per request.
package batch
