// Package tailnetapi is a stateful in-memory Tailscale API for tests and
// the sandbox: the policy file (stored byte for byte, ETag and If-Match),
// devices, their routes and tags, Tailscale Services, auth keys, OAuth
// clients (created, updated in place and revoked) and the OAuth token
// endpoint.
//
// It answers the way the real API does as far as qtail depends on it: the
// same paths, status codes and JSON error bodies ({"message": ...}, also for
// unknown routes and wrong methods), strict and case-insensitive policy
// decoding, and the If-Match rules of the policy file. Policy semantics
// (tags, grants, tests) are checked by the aclcheck subpackage.
//
// Routes are served without the prefix (/api/v2/...); Options.Prefix is
// only the prefix of the per-route counters of the faults.Set, so that a
// sandbox that mounts the handler under /tailscale counts
// "POST /tailscale/api/v2/tailnet/{tailnet}/acl".
package tailnetapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi/aclcheck"
)

// Options configures a Server.
type Options struct {
	// APIKey is the API access token the server accepts, as the HTTP Basic
	// user (empty password) or as a Bearer token. Empty means no API key
	// is accepted; only OAuth access tokens are.
	APIKey string
	// Tailnet is the tailnet's name, e.g. "example.com". The path segment
	// "-" also addresses it. Default "example.com".
	Tailnet string
	// MagicDNSSuffix is the tailnet's MagicDNS domain, e.g.
	// "tail1234.ts.net". Default "tail1234.ts.net".
	MagicDNSSuffix string
	// Prefix is prepended to the route patterns in the counters of Faults,
	// e.g. "/tailscale". It does not change the paths served.
	Prefix string
	// Faults injects failures and counts calls. Nil means a new set.
	Faults *faults.Set
	// Topology is the initial set of users and devices.
	Topology aclcheck.Topology
	// InitialPolicy is the initial policy file. Nil means the default
	// policy of a new tailnet (see DefaultPolicy). A non-nil initial policy
	// counts as an edit: If-Match "ts-default" does not match it.
	InitialPolicy []byte
	// TokenTTL is the lifetime of the OAuth access tokens the server
	// issues. Default one hour, as on the real service; rounded up to
	// whole seconds.
	TokenTTL time.Duration
	// Now is the server's clock: it stamps keys, devices and access
	// tokens. Default time.Now.
	Now func() time.Time
	// HTTPSEnabled turns HTTPS certificates on in the tailnet settings.
	// Off by default, as on a new tailnet.
	HTTPSEnabled bool
	// Compat selects behaviours simpler than the real API's; its zero
	// value, the default, answers as the real API does.
	Compat Compat
}

// Compat holds behaviours of the fake that are simpler than the real
// API's. Each is off by default and kept only for the tests that name it.
type Compat struct {
	// EnabledRoutesAsSent reports a device's enabled routes in the order
	// they were sent or approved in. The real API sorts them by address.
	EnabledRoutesAsSent bool
	// KeyTagsEverywhere gives auth keys a top-level "tags" and an
	// "updated" time, as OAuth clients have. The real API reports an
	// auth key's tags only under capabilities.devices.create.tags, and
	// no "updated".
	KeyTagsEverywhere bool
}

// Server is the fake Tailscale API. It is an http.Handler. All methods are
// safe for concurrent use.
type Server struct {
	opts   Options
	faults *faults.Set
	mux    *http.ServeMux

	mu            sync.Mutex
	policy        []byte
	policyDefault bool
	users         []aclcheck.User
	devices       []*Device
	deviceSeq     int
	keys          map[string]*key
	keyOrder      []string
	tokens        map[string]*accessToken
	seeded        []*key
	services      map[string]*Service
	serviceOrder  []string
	serviceSeq    int
	// serviceHosts are the devices that advertise each Tailscale
	// Service, and serviceApprovals the admin's approvals of them (see
	// service_hosts.go).
	serviceHosts     map[string][]string
	serviceApprovals map[string]map[string]bool
	// federated are the trust settings of the federated identities, by
	// client ID; they survive Reset, as their seeded keys do.
	federated map[string]*FederatedIdentity
	// settings are the tailnet settings (see settings.go).
	settings tailnetSettings
	// certs are the TLS certificates issued (see certs.go).
	certs []Certificate
}

// New returns a server with the given options.
func New(opts Options) *Server {
	if opts.Tailnet == "" {
		opts.Tailnet = "example.com"
	}
	if opts.MagicDNSSuffix == "" {
		opts.MagicDNSSuffix = "tail1234.ts.net"
	}
	opts.MagicDNSSuffix = strings.Trim(opts.MagicDNSSuffix, ".")
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = time.Hour
	}
	f := opts.Faults
	if f == nil {
		f = &faults.Set{}
	}
	s := &Server{opts: opts, faults: f, mux: http.NewServeMux()}
	s.routes()
	s.Reset()
	return s
}

// now reads the server's clock.
func (s *Server) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now()
	}
	return time.Now()
}

// Handler returns the handler that serves /api/v2/....
func (s *Server) Handler() http.Handler { return s.mux }

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Faults returns the fault set the routes are wrapped with.
func (s *Server) Faults() *faults.Set { return s.faults }

// TailnetName returns the tailnet's name.
func (s *Server) TailnetName() string { return s.opts.Tailnet }

// MagicDNSSuffix returns the tailnet's MagicDNS domain.
func (s *Server) MagicDNSSuffix() string { return s.opts.MagicDNSSuffix }

// Reset restores the initial policy and topology and forgets every key,
// OAuth client and access token, except the OAuth clients added with
// SeedOAuthClient. The fault set is left alone: it may be shared with
// another fake.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opts.InitialPolicy != nil {
		s.policy = append([]byte(nil), s.opts.InitialPolicy...)
		s.policyDefault = false
	} else {
		s.policy = []byte(DefaultPolicy)
		s.policyDefault = true
	}
	s.keys = map[string]*key{}
	s.keyOrder = nil
	s.tokens = map[string]*accessToken{}
	s.services, s.serviceOrder = map[string]*Service{}, nil
	s.serviceHosts, s.serviceApprovals = map[string][]string{}, map[string]map[string]bool{}
	for _, k := range s.seeded {
		c := *k
		s.keys[c.ID] = &c
		s.keyOrder = append(s.keyOrder, c.ID)
	}
	s.setTopologyLocked(s.opts.Topology)
	s.settings = tailnetSettings{HTTPSEnabled: s.opts.HTTPSEnabled}
	s.certs = nil
}

// route is one registered pattern.
type route struct {
	method, path string
}

// routes registers every endpoint, a JSON 405 for known paths with another
// method, and a JSON 404 for everything else.
//
// ServeMux matches the escaped path segment by segment, so an id sent as
// "a%2Fb" stays one {id} segment and r.PathValue returns it decoded.
func (s *Server) routes() {
	var all []route
	add := func(method, path string, h http.HandlerFunc) {
		all = append(all, route{method, path})
		s.mux.HandleFunc(method+" "+path, s.faults.Wrap(method+" "+s.opts.Prefix+path, h))
	}

	add(http.MethodPost, "/api/v2/oauth/token", s.handleToken)
	add(http.MethodPost, "/api/v2/oauth/token-exchange", s.handleTokenExchange)

	add(http.MethodGet, "/api/v2/tailnet/{tailnet}/acl", s.api(s.handleGetPolicy))
	add(http.MethodPost, "/api/v2/tailnet/{tailnet}/acl", s.api(s.handleSetPolicy))
	add(http.MethodPost, "/api/v2/tailnet/{tailnet}/acl/validate", s.api(s.handleValidatePolicy))
	add(http.MethodPost, "/api/v2/tailnet/{tailnet}/acl/preview", s.api(s.handlePreviewPolicy))

	add(http.MethodGet, "/api/v2/tailnet/{tailnet}/devices", s.api(s.handleListDevices))
	add(http.MethodGet, "/api/v2/device/{id}", s.api(s.handleGetDevice))
	add(http.MethodDelete, "/api/v2/device/{id}", s.api(s.handleDeleteDevice))
	add(http.MethodGet, "/api/v2/device/{id}/routes", s.api(s.handleGetRoutes))
	add(http.MethodPost, "/api/v2/device/{id}/routes", s.api(s.handleSetRoutes))
	add(http.MethodPost, "/api/v2/device/{id}/tags", s.api(s.handleSetTags))

	add(http.MethodGet, "/api/v2/tailnet/{tailnet}/vip-services", s.api(s.handleListServices))
	add(http.MethodGet, "/api/v2/tailnet/{tailnet}/vip-services/{name}", s.api(s.handleGetService))
	add(http.MethodPut, "/api/v2/tailnet/{tailnet}/vip-services/{name}", s.api(s.handlePutService))
	add(http.MethodDelete, "/api/v2/tailnet/{tailnet}/vip-services/{name}", s.api(s.handleDeleteService))
	for _, base := range []string{"/api/v2/tailnet/{tailnet}/services/{name}", "/api/v2/tailnet/{tailnet}/vip-services/{name}"} {
		add(http.MethodGet, base+"/devices", s.api(s.handleListServiceHosts))
		add(http.MethodGet, base+"/device/{id}/approved", s.api(s.handleGetServiceApproval))
		add(http.MethodPost, base+"/device/{id}/approved", s.api(s.handleSetServiceApproval))
	}

	add(http.MethodGet, "/api/v2/tailnet/{tailnet}/settings", s.api(s.handleGetSettings))

	add(http.MethodPost, "/api/v2/tailnet/{tailnet}/keys", s.api(s.handleCreateKey))
	add(http.MethodGet, "/api/v2/tailnet/{tailnet}/keys", s.api(s.handleListKeys))
	add(http.MethodGet, "/api/v2/tailnet/{tailnet}/keys/{id}", s.api(s.handleGetKey))
	add(http.MethodPut, "/api/v2/tailnet/{tailnet}/keys/{id}", s.api(s.handleSetKey))
	add(http.MethodDelete, "/api/v2/tailnet/{tailnet}/keys/{id}", s.api(s.handleDeleteKey))

	methods := map[string][]string{}
	var paths []string
	for _, r := range all {
		if _, ok := methods[r.path]; !ok {
			paths = append(paths, r.path)
		}
		methods[r.path] = append(methods[r.path], r.method)
	}
	for _, p := range paths {
		allow := methods[p]
		sort.Strings(allow)
		s.mux.HandleFunc(p, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, http.StatusMethodNotAllowed, "method not allowed")
		})
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusNotFound, "not found")
	})
}

// writeJSON answers with status and v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"message":"internal error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// errorBody is the API's error shape.
type errorBody struct {
	Message string                `json:"message"`
	Data    []aclcheck.TestResult `json:"data,omitempty"`
}

// writeError answers with status and {"message": msg}.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{Message: msg})
}

// writePolicyError answers with a rejected policy's message and data.
func writePolicyError(w http.ResponseWriter, status int, e *aclcheck.Error) {
	writeJSON(w, status, errorBody{Message: e.Message, Data: e.Data})
}

// maxBody bounds request bodies.
const maxBody = 4 << 20

// readBody reads a request body, answering 413 when it is too large. It
// reports false when an answer was written.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, http.StatusRequestEntityTooLarge, "request body too large")
		} else {
			writeError(w, http.StatusBadRequest, "reading request body: "+err.Error())
		}
		return nil, false
	}
	return b, true
}
