package policyfragment

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
)

// The calls of qtail_grants that precede a read of the policy file start
// that read before they decode their value: the validation of the
// configuration (the plan follows), and the upgrade of the state (the
// refresh follows).
func TestGrantsFastPath_startsReadingThePolicyFirst(t *testing.T) {
	ctx := context.Background()
	f := NewGrantsFastPath(ctx)
	cfg := configValue(t, f, fastPathGrants)
	state := `{"id":"a","grants":{"a":{"src":["*"],"dst":["*"],"ip":["*"],"app":null,"via":null,"src_posture":null}},"unmarked":[],"gone":1}`
	calls := map[string]func(*conn.Clients){
		"validation": func(c *conn.Clients) {
			f.ValidateResourceConfig(ctx, c, &tfprotov6.ValidateResourceConfigRequest{TypeName: "qtail_grants", Config: cfg})
		},
		"upgrade": func(c *conn.Clients) {
			f.UpgradeResourceState(ctx, c, &tfprotov6.UpgradeResourceStateRequest{TypeName: "qtail_grants", RawState: &tfprotov6.RawState{JSON: []byte(state)}})
		},
		"upgrade of a state from a later version": func(c *conn.Clients) {
			f.UpgradeResourceState(ctx, c, &tfprotov6.UpgradeResourceStateRequest{TypeName: "qtail_grants", Version: 9, RawState: &tfprotov6.RawState{JSON: []byte(state)}})
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			clients, reads := countingSandbox(t)
			call(clients)
			select {
			case <-reads.first:
			case <-time.After(30 * time.Second):
				t.Fatal("no read of the policy file began")
			}
			store, diags := clients.Policy()
			if diags.HasError() {
				t.Fatal(diags)
			}
			if _, err := store.Snapshot(ctx); err != nil {
				t.Fatal(err)
			}
			if n := reads.n.Load(); n != 1 {
				t.Fatalf("%d reads of the policy file, want 1: the plan or refresh uses the one that began early", n)
			}
		})
	}
	// An unconfigured provider has no policy to read, and answers the
	// validation all the same.
	if _, ok := f.ValidateResourceConfig(ctx, nil, &tfprotov6.ValidateResourceConfigRequest{TypeName: "qtail_grants", Config: cfg}); !ok {
		t.Error("an unconfigured provider did not answer the validation of valid grants")
	}
}

// policyReads counts the reads of the policy file, and closes first when
// the first one arrives.
type policyReads struct {
	n     atomic.Int32
	first chan struct{}
}

// countingSandbox is sandboxData whose server counts the policy reads.
func countingSandbox(t *testing.T) (*conn.Clients, *policyReads) {
	t.Helper()
	w, err := sandbox.New(sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reads := &policyReads{first: make(chan struct{})}
	h := w.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/acl") {
			if reads.n.Add(1) == 1 {
				close(reads.first)
			}
		}
		h.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	return configuredClients(t, w.Env(srv.URL)), reads
}
