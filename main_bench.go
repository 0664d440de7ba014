//go:build bench

package main

import (
	"os"
	"time"
)

// A build with the bench tag (tools/benchdeploy) reads the poll interval of
// the waits from $QTAIL_BENCH_POLL_INTERVAL, so that a benchmark whose
// simulated deployments take seconds rather than minutes measures them and
// not the interval; $QTAIL_BENCH_DEPLOY_BATCH=off deploys each Qovery
// service on its own, as qtail did before it gathered the deployments of
// an environment.
func init() {
	if d, err := time.ParseDuration(os.Getenv("QTAIL_BENCH_POLL_INTERVAL")); err == nil && d > 0 {
		providerOptions.PollInterval = d
	}
	if os.Getenv("QTAIL_BENCH_DEPLOY_BATCH") == "off" {
		providerOptions.DeployQuiet = -1
	}
}
