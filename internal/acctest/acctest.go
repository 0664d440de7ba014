// Package acctest wires the qtail provider to a fresh in-process sandbox
// (fake Qovery API, fake Tailscale API, simulated cluster) for tests driven
// by terraform-plugin-testing.
package acctest

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/qtail/terraform-provider-qtail/internal/fake/cluster"
	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
	"github.com/qtail/terraform-provider-qtail/internal/provider"
	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

// Env is one test's world and the provider settings that point at it.
type Env struct {
	*sandbox.World
	// URL is the base URL of the world's HTTP server.
	URL string

	mu  sync.Mutex
	env map[string]string
	// agents are the User-Agent headers each API was called with, by the
	// API's path prefix ("/qovery", "/tailscale").
	agents map[string]map[string]bool
}

// Option changes the sandbox options of a new Env.
type Option func(*sandbox.Options)

// WithDeployTime sets how long a simulated deployment takes.
func WithDeployTime(d time.Duration) Option {
	return func(o *sandbox.Options) { o.DeployTime = d }
}

// WithPolicy sets the tailnet's starting policy file.
func WithPolicy(p string) Option {
	return func(o *sandbox.Options) { o.InitialPolicy = []byte(p) }
}

// WithAfterDelete sets how the Qovery API answers about a deleted object
// (403 by default).
func WithAfterDelete(a qoveryapi.DeletedAnswer) Option {
	return func(o *sandbox.Options) { o.AfterDelete = a }
}

// WithCompat turns on the simpler behaviours of c in the simulated
// cluster; the other fakes answer as the real APIs do.
func WithCompat(c cluster.Compat) Option {
	return func(o *sandbox.Options) {
		compat := sandbox.DefaultCompat
		compat.Cluster = c
		o.Compat = &compat
	}
}

// New starts a world on a loopback httptest server, closed when the test
// ends.
func New(t testing.TB, opts ...Option) *Env {
	t.Helper()
	o := sandbox.Options{DeployTime: 30 * time.Millisecond}
	for _, opt := range opts {
		opt(&o)
	}
	w, err := sandbox.New(o)
	if err != nil {
		t.Fatalf("starting the sandbox: %v", err)
	}
	e := &Env{World: w, agents: map[string]map[string]bool{}}
	handler := w.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		e.recordAgent(r)
		handler.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	e.URL, e.env = srv.URL, w.Env(srv.URL)
	return e
}

func (e *Env) recordAgent(r *http.Request) {
	api := "/" + strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 2)[0]
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.agents[api] == nil {
		e.agents[api] = map[string]bool{}
	}
	e.agents[api][r.UserAgent()] = true
}

// UserAgents returns the User-Agent headers the API under the path prefix
// api ("/qovery", "/tailscale") was called with, sorted.
func (e *Env) UserAgents(api string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Sorted(maps.Keys(e.agents[api]))
}

// Setenv sets (or, with an empty value, unsets) a provider environment
// variable as the provider under test sees it.
func (e *Env) Setenv(name, value string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if value == "" {
		delete(e.env, name)
		return
	}
	e.env[name] = value
}

func (e *Env) getenv(name string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.env[name]
}

// Environ returns a copy of the provider environment.
func (e *Env) Environ() map[string]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.env)
}

// ProviderOptions are the provider settings for this world: its
// environment, short waits and a fast retry policy.
func (e *Env) ProviderOptions() provider.Options {
	return provider.Options{
		Getenv:       e.getenv,
		PollInterval: 10 * time.Millisecond,
		Retry: retry.Policy{
			MaxAttempts:   4,
			BaseDelay:     2 * time.Millisecond,
			MaxDelay:      20 * time.Millisecond,
			MaxRetryAfter: 3 * time.Second,
		},
	}
}

// Factories returns the provider factories for resource.TestCase.
func (e *Env) Factories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"qtail": provider.Server(provider.NewWithOptions("test", e.ProviderOptions())),
	}
}

// Capture returns a check that stores the value of attr of the resource
// at address into *dst, for use by later steps (a PreConfig drift, say).
func Capture(address, attr string, dst *string) func(*terraform.State) error {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[address]
		if !ok {
			return fmt.Errorf("%s is not in the state", address)
		}
		v, ok := rs.Primary.Attributes[attr]
		if !ok {
			return fmt.Errorf("%s has no attribute %q", address, attr)
		}
		*dst = v
		return nil
	}
}

// Background returns a context for calls made by tests outside Terraform.
func Background(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// ErrorRE matches an error message that Terraform may have wrapped over
// several lines: each run of spaces in text matches any run of white space.
func ErrorRE(text string) *regexp.Regexp {
	parts := strings.Fields(text)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(parts, `\s+`))
}

// ErrorOn matches an error that Terraform shows on the line of attr (on
// the block when attr is empty) and whose text has want.
func ErrorOn(attr, want string) *regexp.Regexp {
	// Terraform wraps the detail: any space of want matches any spaces.
	text := strings.Join(strings.Fields(regexp.QuoteMeta(want)), `\s+`)
	var on string
	switch {
	case attr == "":
		on = `\n\s*\d+:\s*(resource|data|provider) `
	case strings.Contains(attr, "."):
		// Terraform shows the block for a nested attribute; the detail
		// names it.
		on = `Attribute:\s+` + regexp.QuoteMeta(attr) + `\b`
	default:
		on = `\n\s*\d+:\s*` + regexp.QuoteMeta(attr) + `\s*=`
	}
	return regexp.MustCompile(`(?s)Error: .*?(` + on + `.*` + text + `|` + text + `.*?` + on + `)`)
}
