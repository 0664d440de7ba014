// Command sandbox serves qtail's fake Qovery and Tailscale APIs and the
// simulated cluster on loopback, so that anyone can run the provider with no
// account.
//
//	go run ./tools/sandbox [-addr 127.0.0.1:8787] [-latency 50ms] [-deploy-time 2s] [-status-lag 2s] [-deploy-conflicts]
//
// As on the real Qovery API, a deployment requested while another one runs
// is queued (-deploy-conflicts answers 409 instead, as the API reference
// documents), and the deployment status keeps its previous value for
// -status-lag after a deployment is triggered.
//
// On start it prints one export line per provider environment variable and
// per seeded ID; eval them in a shell, then run Terraform.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8787", "address to listen on (loopback only; port 0 picks a free one)")
	latency := flag.Duration("latency", 0, "latency added to every API call, e.g. 50ms")
	deployTime := flag.Duration("deploy-time", 2*time.Second, "how long a simulated deployment takes")
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
	if err := run(*addr, opts); err != nil {
		log.Fatal(err)
	}
}

func run(addr string, opts sandbox.Options) error {
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
	base := "http://" + ln.Addr().String()
	seed, err := json.MarshalIndent(world.Seed(), "# ", "  ")
	if err != nil {
		return err
	}
	fmt.Printf("# qtail sandbox on %s (Qovery API %s/qovery, Tailscale API %s/tailscale, admin %s/_sandbox/)\n", base, base, base, base)
	fmt.Print(world.Exports(base))
	fmt.Printf("# seeded IDs:\n# %s\n", seed)
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
