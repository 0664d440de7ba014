// Package qoveryapi is a stateful in-memory Qovery API for tests and the
// sandbox. It serves the endpoints qtail uses with the real paths, status
// codes, request validation and request/response asymmetries, keeps state,
// and simulates deployments over time.
//
// Choices where the API documentation is silent are marked "(fake)" in the
// comments of this package.
package qoveryapi

import (
	"context"
	crand "crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/faults"
)

// Options configures a Server.
type Options struct {
	// Token is the API token every request must carry as
	// "Authorization: Token <Token>". (fake) When empty any non-empty token
	// is accepted.
	Token string
	// Prefix is prepended to route names in the fault and call counters,
	// e.g. "/qovery" gives "PUT /qovery/application/{applicationId}". The
	// handler itself serves paths without it.
	Prefix string
	// DeployTime is how long a deployment or a deletion takes, split
	// between its queued and running phases.
	DeployTime time.Duration
	// StatusLag is how long the status endpoints keep reporting the
	// previous status after an action is triggered, as the real API does
	// for a few seconds. Zero takes DefaultStatusLag; NoStatusLag turns
	// the lag off, for the tests of the state machine itself. The
	// action's own 202 answer is never stale.
	StatusLag time.Duration
	// Deployer, when set, is told about every deployment and deletion and
	// may fail them.
	Deployer Deployer
	// Faults injects failures and counts calls; nil makes a new set.
	Faults *faults.Set
	// Seed, when not zero, makes ids deterministic: the same sequence of
	// calls gives the same ids.
	Seed uint64
	// AfterDelete is how the routes of a Helm repository, Helm service,
	// application, container, annotations group or variable that was
	// deleted answer. The zero value answers 403 Forbidden, as the real API
	// does (a deleted project answers 403 too); DeletedDoesNotExist answers
	// 400 with a detail "<kind> does not exist", as it does for some
	// objects; DeletedNotFound answers 404, what the API documents (the
	// simple behaviour). An id the fake never issued answers 404 whatever
	// the mode.
	AfterDelete DeletedAnswer
	// AfterDeleteOf overrides AfterDelete for the kinds of objects it
	// names: "helm", "application", "container", "annotations group",
	// "helm repository", "variable".
	AfterDeleteOf map[string]DeletedAnswer
	// StatusMessages adds a "message" member to statuses in an *_ERROR
	// state, with the reason of the failure. The real Status has no such
	// member (the reason is in the console's deployment logs): off, the
	// status says only which step failed (steps.details).
	StatusMessages bool
	// NullDeploymentIDs makes statuses carry a null deployment_request_id
	// and no execution_id, as the API reference allows.
	NullDeploymentIDs bool
	// FrozenDeploymentIDs keeps the deployment_request_id and
	// execution_id of a service's first action for every later one: they
	// are not renewed. last_deployment_date still is.
	FrozenDeploymentIDs bool
	// ConflictWhileBusy makes a deployment requested while another action
	// of the service runs answer 409 "Operation is in progress", as the
	// API reference documents, instead of queueing it as the real API
	// does. By default the request is queued: the answer is 202 with the
	// queued request's status (DEPLOYMENT_QUEUED, its own
	// deployment_request_id), the deployment queues of the service and of
	// its environment list it, and it starts a quarter of DeployTime after
	// the running action ends. A deletion is never queued.
	ConflictWhileBusy bool
	// AcceptUnknownMembers makes the edits of applications and containers
	// ignore the members that their request (ApplicationEditRequest,
	// ContainerRequest) does not define, such as the id, created_at or
	// environment of the object read, as a lenient server would. By
	// default they are refused with 400, as a strict server may.
	AcceptUnknownMembers bool
}

// DefaultStatusLag is the StatusLag of a zero Options: short, so that
// tests stay fast, but long enough that a client which takes the status
// read right after a trigger for the outcome fails.
const DefaultStatusLag = 200 * time.Millisecond

// NoStatusLag, as Options.StatusLag, turns the lag off.
const NoStatusLag time.Duration = -1

// statusLag is the lag of the status endpoints (see Options.StatusLag).
func (o Options) statusLag() time.Duration {
	switch {
	case o.StatusLag == 0:
		return DefaultStatusLag
	case o.StatusLag < 0:
		return 0
	}
	return o.StatusLag
}

// DeletedAnswer is how the routes of a deleted object answer
// (Options.AfterDelete).
type DeletedAnswer int

const (
	// DeletedForbidden answers 403 Forbidden, the real API's answer for
	// deleted objects.
	DeletedForbidden DeletedAnswer = iota
	// DeletedDoesNotExist answers 400 Bad Request with the detail
	// "<kind> does not exist", the real API's answer for some objects.
	DeletedDoesNotExist
	// DeletedNotFound answers 404 Not Found, as the API reference
	// documents.
	DeletedNotFound
)

// Deployer is what the cluster does when the fake deploys or deletes a
// service. It is called without the server's lock held, so it may call the
// server back.
type Deployer interface {
	// Deploy is called at the end of the DEPLOYING phase. An error ends
	// the deployment in DEPLOYMENT_ERROR with the error text as reason.
	Deploy(ctx context.Context, svc ServiceSnapshot) error
	// Delete is called at the end of the DELETING phase. An error ends
	// the deletion in DELETE_ERROR and the service stays.
	Delete(ctx context.Context, svc ServiceSnapshot) error
}

// Server is the fake Qovery API.
type Server struct {
	opts    Options
	faults  *faults.Set
	handler http.Handler

	mu       sync.Mutex
	st       *State
	deployer Deployer
	rng      *rand.Rand
	ops      uint64
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	closed   bool
}

// New returns a fake API with no objects.
func New(opts Options) *Server {
	s := &Server{opts: opts, faults: opts.Faults, deployer: opts.Deployer, st: newState()}
	if s.faults == nil {
		s.faults = &faults.Set{}
	}
	if opts.Seed != 0 {
		s.rng = rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.handler = s.routes()
	return s
}

// Handler serves the API, paths without Options.Prefix.
func (s *Server) Handler() http.Handler { return s.handler }

// Faults returns the fault and call counter set of the server.
func (s *Server) Faults() *faults.Set { return s.faults }

// SetDeployer replaces the Deployer; nil makes every deployment succeed.
func (s *Server) SetDeployer(d Deployer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deployer = d
}

// Close stops the deployments and deletions in progress and waits for
// their goroutines. The handler keeps answering; actions started afterwards
// never finish.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.cancel()
	s.mu.Unlock()
	s.wg.Wait()
}

// Reset drops every object, abandons the actions in progress and clears the
// fault rules and call counters.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancel()
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if s.closed {
		s.cancel()
	}
	s.st = newState()
	if s.opts.Seed != 0 {
		s.rng = rand.New(rand.NewPCG(s.opts.Seed, s.opts.Seed^0x9e3779b97f4a7c15))
	}
	s.faults.Reset()
}

// Do runs fn on the state under the server's lock. Changes bypass the
// validation and the OUT_OF_DATE bookkeeping of the API; prefer the typed
// helpers where one exists.
func (s *Server) Do(fn func(*State)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s.st)
}

// newID returns a random (version 4) UUID. The caller holds the lock.
func (s *Server) newID() string {
	var b [16]byte
	if s.rng != nil {
		for i := 0; i < 16; i += 8 {
			v := s.rng.Uint64()
			for j := range 8 {
				b[i+j] = byte(v >> (8 * j))
			}
		}
	} else if _, err := crand.Read(b[:]); err != nil {
		panic(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	id := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
	s.st.issued[id] = true
	return id
}

func now() time.Time { return time.Now().UTC() }

// apiError is an error answer: {"status": <int>, "detail": "<message>"}.
type apiError struct {
	status int
	detail string
}

func (e *apiError) Error() string { return e.detail }

func errorf(status int, format string, args ...any) *apiError {
	return &apiError{status: status, detail: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *apiError {
	return errorf(http.StatusBadRequest, format, args...)
}

func notFound(kind, id string) *apiError {
	return errorf(http.StatusNotFound, "%s %s not found", kind, id)
}

// missing is the answer about an object that does not exist: 404 for an
// id the fake never issued; for one that was deleted, what
// Options.AfterDelete says. The caller holds the lock.
func (s *Server) missing(kind, id string) *apiError {
	if !s.st.issued[id] {
		return notFound(kind, id)
	}
	answer := s.opts.AfterDelete
	if a, ok := s.opts.AfterDeleteOf[kind]; ok {
		answer = a
	}
	switch answer {
	case DeletedDoesNotExist:
		return badRequest("%s does not exist", kind)
	case DeletedNotFound:
		return notFound(kind, id)
	}
	return errorf(http.StatusForbidden, "forbidden: this token has no access to %s %s", kind, id)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"status":500,"detail":"encoding the response failed"}`)
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, err error) {
	var e *apiError
	if !errors.As(err, &e) {
		e = &apiError{status: http.StatusInternalServerError, detail: err.Error()}
	}
	writeJSON(w, e.status, map[string]any{"status": e.status, "detail": e.detail})
}

// results is the envelope of list answers.
func results[T any](items []T) map[string]any {
	if items == nil {
		items = []T{}
	}
	return map[string]any{"results": items}
}

// handlerFunc answers with a status and a value to encode, or an error.
// A nil value with status 204 writes no body.
type handlerFunc func(r *http.Request) (int, any, error)

func (s *Server) serve(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			writeError(w, errorf(http.StatusUnauthorized, "missing or invalid API token: send \"Authorization: Token <token>\""))
			return
		}
		status, v, err := h(r)
		if err != nil {
			writeError(w, err)
			return
		}
		if status == http.StatusNoContent {
			w.WriteHeader(status)
			return
		}
		writeJSON(w, status, v)
	}
}

func (s *Server) authorized(r *http.Request) bool {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Token ")
	if !ok || strings.TrimSpace(token) == "" {
		return false
	}
	return s.opts.Token == "" || token == s.opts.Token
}

// maxBody caps request bodies.
const maxBody = 4 << 20

// decodeObject reads a JSON object body into a map of raw members.
func decodeObject(r *http.Request) (map[string]json.RawMessage, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return nil, badRequest("reading the request body: %v", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, badRequest("the request body is not a JSON object: %v", jsonMessage(err))
	}
	if m == nil {
		return nil, badRequest("the request body is not a JSON object")
	}
	return m, nil
}

// decodeBody reads a JSON body into v; an empty body is an error.
func decodeBody(r *http.Request, v any) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return badRequest("reading the request body: %v", err)
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return badRequest("a JSON request body is required")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return badRequest("invalid request body: %s", jsonMessage(err))
	}
	return nil
}

// jsonMessage turns a decoding error into a message naming the field.
func jsonMessage(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s: invalid type %s", te.Field, te.Value)
	}
	return err.Error()
}

// requireString reads a required string member.
func requireString(field string, p *string) (string, error) {
	if p == nil {
		return "", badRequest("%s: required", field)
	}
	if strings.TrimSpace(*p) == "" {
		return "", badRequest("%s: must not be empty", field)
	}
	return *p, nil
}

func requireBool(field string, p *bool) (bool, error) {
	if p == nil {
		return false, badRequest("%s: required", field)
	}
	return *p, nil
}

func oneOf(field, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return badRequest("%s: invalid value %q, must be one of %s", field, v, strings.Join(allowed, ", "))
}
