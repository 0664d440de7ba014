package tailnetapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const testKey = "tskey-api-test"

// harness serves a Server over HTTP for one test.
type harness struct {
	t   *testing.T
	srv *Server
	ts  *httptest.Server
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	if opts.APIKey == "" {
		opts.APIKey = testKey
	}
	srv := New(opts)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return &harness{t: t, srv: srv, ts: ts}
}

// reply is a response with its body read.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into a map, failing the test if it is not a JSON
// object.
func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.body)
	}
	return m
}

// message returns the "message" of a JSON body.
func (r reply) message(t *testing.T) string {
	t.Helper()
	msg, _ := r.json(t)["message"].(string)
	return msg
}

// do sends a request authenticated with the API key unless hdr sets
// Authorization (an empty value sends none).
func (h *harness) do(method, path, body string, hdr map[string]string) reply {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(h.t.Context(), method, h.ts.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	req.SetBasicAuth(testKey, "")
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := h.ts.Client().Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// want fails the test unless r has status.
func (r reply) want(t *testing.T, status int) reply {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body: %s", r.status, status, r.body)
	}
	return r
}

// operatorPolicy declares the operator's tags, in HuJSON with comments.
const operatorPolicy = `// qtail test policy
{
	// Tags the operator applies.
	"tagOwners": {
		"tag:k8s-operator": [],
		"tag:k8s":          ["tag:k8s-operator"], // proxies
		"tag:other":        [],
	},
	"grants": [
		{"src": ["autogroup:member"], "dst": ["tag:k8s"], "ip": ["tcp:443"]},
	],
}
`
