// Command sandbox serves qtail's fake Qovery and Tailscale APIs and the
// simulated cluster on loopback, so that anyone can run the provider with no
// account.
//
//	go run ./tools/sandbox [-addr 127.0.0.1:8787] [-latency 50ms] [-deploy-time 2s] [-status-lag 2s]
//	    [-deploy-conflicts] [-env-file FILE] [-seed-peer-tests]
//
// As on the real Qovery API, a deployment requested while another one runs
// is queued (-deploy-conflicts answers 409 instead, as the API reference
// documents), and the deployment status keeps its previous value for
// -status-lag after a deployment is triggered.
//
// On start it prints one export line per provider environment variable and
// per seeded ID on standard output, and nothing else there (what it serves
// and the seeded IDs go to standard error): `go run ./tools/sandbox >
// sandbox.env`, then `source sandbox.env` in another shell. -env-file
// writes the same lines to FILE, whole, once the sandbox listens.
//
// -seed-peer-tests adds the device that the official Tailscale provider's
// acceptance tests expect (scripts/peer-tests.sh) and prints its name as
// TAILSCALE_TEST_DEVICE_NAME. It is off by default: the extra device would
// show up in the sandbox's other users' device lists.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8787", "address to listen on (loopback only; port 0 picks a free one)")
	latency := flag.Duration("latency", 0, "latency added to every API call, e.g. 50ms")
	deployTime := flag.Duration("deploy-time", 2*time.Second, "how long a simulated deployment takes")
	envFile := flag.String("env-file", "", "also write the export lines to this file once the sandbox listens")
	seedPeer := flag.Bool("seed-peer-tests", false, "add the device the official Tailscale provider's acceptance tests expect, and export its name as TAILSCALE_TEST_DEVICE_NAME")
	statusLag := flag.Duration("status-lag", 2*time.Second, "how long the Qovery status keeps its previous value after a deployment is triggered (0 for none)")
	conflicts := flag.Bool("deploy-conflicts", false, "refuse a Qovery deployment requested while another one runs with 409 instead of queueing it")
	flag.Parse()

	opts := sandbox.Options{Latency: *latency, DeployTime: *deployTime, StatusLag: *statusLag}
	if *statusLag <= 0 {
		opts.StatusLag = qoveryapi.NoStatusLag
	}
	if *conflicts {
		compat := sandbox.DefaultCompat
		compat.DeploymentConflicts = true
		opts.Compat = &compat
	}
	if err := run(*addr, opts, *envFile, *seedPeer); err != nil {
		log.Fatal(err)
	}
}

// peerTestHostname is the hostname of the device -seed-peer-tests adds.
const peerTestHostname = "peer-test-device"

func run(addr string, opts sandbox.Options, envFile string, seedPeer bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-addr %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("-addr %q: the sandbox listens on loopback only", addr)
	}
	world, err := sandbox.New(opts)
	if err != nil {
		return err
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", addr)
	if err != nil {
		return err
	}
	extra := ""
	if seedPeer {
		// An untagged device of a tailnet member, as devcontrol's generated
		// test devices are: the tests tag it, approve its routes and
		// find it by its MagicDNS name.
		d := world.Tailnet.AddDevice(tailnetapi.DeviceSpec{Hostname: peerTestHostname, User: "alice@example.com"})
		extra = fmt.Sprintf("export TAILSCALE_TEST_DEVICE_NAME=%s\n", d.Name)
	}
	if err := announce(os.Stdout, os.Stderr, world, "http://"+ln.Addr().String(), extra, envFile); err != nil {
		return err
	}
	if err := os.Stdout.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) && !errors.Is(err, syscall.EINVAL) {
		log.Printf("flushing stdout: %v", err)
	}

	srv := &http.Server{Handler: world.Handler(), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// announce writes the export lines, the world's then extra, to stdout, and
// to envFile unless it is empty, and what the sandbox serves and the seeded IDs to stderr: stdout
// holds nothing a shell would run but the exports.
func announce(stdout, stderr io.Writer, world *sandbox.World, base, extra, envFile string) error {
	seed, err := json.MarshalIndent(world.Seed(), "# ", "  ")
	if err != nil {
		return err
	}
	exports := world.Exports(base) + extra
	if envFile != "" {
		if err := writeFile(envFile, exports); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "# qtail sandbox on %s (Qovery API %s/qovery, Tailscale API %s/tailscale, admin %s/_sandbox/)\n", base, base, base, base)
	fmt.Fprintf(stderr, "# seeded IDs:\n# %s\n", seed)
	_, err = io.WriteString(stdout, exports)
	return err
}

// writeFile writes content to path through a temporary file in the same
// folder, so that a reader never sees part of it.
func writeFile(path, content string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
