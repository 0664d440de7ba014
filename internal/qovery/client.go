// Package qovery is a typed client for the parts of the Qovery REST API that
// qtail uses: organizations, projects, environments and clusters (read
// only), organization Helm repositories, Helm services, variables and their
// overrides, organization annotations groups, applications and containers
// (read, and the attachment of annotations groups) and deployments.
//
// Every call sends the organization API token as "Authorization: Token
// <token>" and JSON in both directions. Errors answered by the API are
// *APIError values; IsNotFound, IsConflict and StatusCode inspect them.
package qovery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/batch"
	"github.com/qtail/terraform-provider-qtail/internal/retry"
)

// DefaultBaseURL is the public Qovery API.
const DefaultBaseURL = "https://api.qovery.com"

// DefaultUserAgent is sent when Config.UserAgent is empty.
const DefaultUserAgent = "terraform-provider-qtail"

// maxErrorBody caps how much of an error body is read and kept.
const maxErrorBody = 64 << 10

// Config configures a Client.
type Config struct {
	// BaseURL is the API root, DefaultBaseURL when empty. A path (for
	// example "http://127.0.0.1:8787/qovery") is kept as a prefix.
	BaseURL string
	// Token is an organization API token. It is required.
	Token string
	// UserAgent is sent with every request.
	UserAgent string
	// HTTPClient sends the requests. It is expected to carry the retry
	// transport already; when nil a client with retry.Default() over
	// http.DefaultTransport is used.
	HTTPClient *http.Client
	// NotFoundDelay is how long the client waits before it reads again an
	// object answered 404 (see NotFoundRereads), DefaultNotFoundDelay when
	// zero.
	NotFoundDelay time.Duration
	// DeployQuiet is how long a deployment triggered through a
	// DeployTicket waits for other deployments after the latest one,
	// DefaultDeployQuiet when zero; a negative one gathers nothing: each
	// service is deployed on its own, as it asked.
	DeployQuiet time.Duration
	// DeployMaxWait bounds how long a deployment waits for its batch, and
	// how long an expected one is waited for, DefaultDeployMaxWait when
	// zero.
	DeployMaxWait time.Duration
	// OnDeployBatch, when set, is told about each batch of deployments
	// before it is triggered.
	OnDeployBatch func(services []ServiceDeploy, info batch.BatchInfo)
}

// NotFoundRereads is how many times a read of an object that answered 404
// is made again before the 404 is believed: one 404, such as the API may
// give right after a create or under load, is no proof that the object is
// gone.
const NotFoundRereads = 2

// DefaultNotFoundDelay is the time between the reads of an object that
// answered 404.
const DefaultNotFoundDelay = time.Second

// Client calls the Qovery API. It is safe for concurrent use.
type Client struct {
	base          *url.URL
	token         string
	userAgent     string
	http          *http.Client
	notFoundDelay time.Duration
	deploys       *deployBatches
}

// New returns a client for cfg.
func New(cfg Config) (*Client, error) {
	if strings.TrimSpace(cfg.Token) == "" {
		return nil, errors.New("qovery: an API token is required")
	}
	raw := cfg.BaseURL
	if raw == "" {
		raw = DefaultBaseURL
	}
	base, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("qovery: invalid base URL %q: %w", raw, err)
	}
	if (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("qovery: invalid base URL %q: want http(s)://host[/path]", raw)
	}
	if base.RawQuery != "" || base.Fragment != "" {
		return nil, fmt.Errorf("qovery: invalid base URL %q: no query or fragment allowed", raw)
	}
	base.Path = strings.TrimRight(base.Path, "/")
	base.RawPath = ""
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: retry.Default().Transport(nil)}
	}
	ua := cfg.UserAgent
	if ua == "" {
		ua = DefaultUserAgent
	}
	delay := cfg.NotFoundDelay
	if delay <= 0 {
		delay = DefaultNotFoundDelay
	}
	c := &Client{base: base, token: cfg.Token, userAgent: ua, http: hc, notFoundDelay: delay}
	c.deploys = newDeployBatches(c, cfg)
	return c, nil
}

// BaseURL returns the API root the client calls.
func (c *Client) BaseURL() string { return c.base.String() }

// pathf builds an API path, escaping every argument as one path segment.
func pathf(format string, segments ...string) string {
	args := make([]any, len(segments))
	for i, s := range segments {
		args[i] = url.PathEscape(s)
	}
	return fmt.Sprintf(format, args...)
}

// do sends one request. in, when not nil, is sent as JSON (a
// json.RawMessage as is); out, when not nil, receives the JSON answer of a
// 2xx response.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	_, err := c.doHeader(ctx, method, path, nil, in, out)
	return err
}

// doHeader is do that also returns the header of a 2xx answer and the
// local time it arrived.
func (c *Client) doHeader(ctx context.Context, method, path string, query url.Values, in, out any) (answer, error) {
	target := c.base.String() + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var body io.Reader
	if in != nil {
		b, ok := in.(json.RawMessage)
		if !ok {
			var err error
			if b, err = json.Marshal(in); err != nil {
				return answer{}, fmt.Errorf("qovery: %s %s: encoding the request: %w", method, path, err)
			}
		}
		// A bytes.Reader lets the retry transport send the body again.
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return answer{}, fmt.Errorf("qovery: %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Token "+c.token)
	req.Header.Set("User-Agent", c.userAgent)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")

	resp, err := c.http.Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("qovery: %s %s: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	got := answer{header: resp.Header, received: time.Now()}

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return got, newAPIError(resp, method, path, b)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return got, fmt.Errorf("qovery: %s %s: reading the response: %w", method, path, err)
	}
	if out == nil {
		return got, nil
	}
	// Every answer read into out is a JSON object: an empty one would
	// pass for an object with every field unset.
	if len(bytes.TrimSpace(b)) == 0 {
		return got, fmt.Errorf("qovery: %s %s: the answer is empty (HTTP %d)", method, path, resp.StatusCode)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return got, fmt.Errorf("qovery: %s %s: decoding the response: %w", method, path, err)
	}
	return got, nil
}

// answer is what doHeader keeps of a response besides its body.
type answer struct {
	header   http.Header
	received time.Time
}

// serverTime returns the local time t on the server's clock, estimated
// from the answer's Date header.
func (a answer) serverTime(t time.Time) time.Time {
	return retry.ServerTime(t, a.header.Get("Date"), a.received)
}

// list is the {"results": [...]} envelope of list endpoints.
type list[T any] struct {
	Results []T `json:"results"`
}

func getList[T any](ctx context.Context, c *Client, path string, query url.Values) ([]T, error) {
	items, _, err := getListAnswer[T](ctx, c, path, query)
	return items, err
}

// getListAnswer is getList that also returns what doHeader keeps of the
// answer.
func getListAnswer[T any](ctx context.Context, c *Client, path string, query url.Values) ([]T, answer, error) {
	var l list[T]
	a, err := c.doHeader(ctx, http.MethodGet, path, query, nil, &l)
	if err != nil {
		return nil, a, err
	}
	if l.Results == nil {
		l.Results = []T{}
	}
	return l.Results, a, nil
}

// APIError is an error answer of the Qovery API.
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Method and Path name the request; Path is relative to the base URL.
	Method string
	Path   string
	// Detail is the server's message: the "detail" of a JSON error body,
	// or the body itself when it is not JSON.
	Detail string
	// Attempts is how many times the request was sent, when the retry
	// transport says more than once; otherwise 0 or 1.
	Attempts int
	// Later is set when the server asked for a longer wait (Retry-After)
	// than qtail makes: how long, and until when.
	Later *retry.Later
}

// RetryLater returns the wait the server asked for and qtail did not make.
func (e *APIError) RetryLater() (retry.Later, bool) {
	if e.Later == nil {
		return retry.Later{}, false
	}
	return *e.Later, true
}

func newAPIError(resp *http.Response, method, path string, body []byte) *APIError {
	e := &APIError{Status: resp.StatusCode, Method: method, Path: path, Detail: errorDetail(body)}
	if n, err := strconv.Atoi(resp.Header.Get(retry.AttemptsHeader)); err == nil {
		e.Attempts = n
	}
	if later, ok := retry.LaterOf(resp.Header); ok {
		e.Later = &later
	}
	return e
}

// errorDetail extracts the server's message from an error body.
func errorDetail(body []byte) string {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return ""
	}
	var payload struct {
		Detail  any    `json:"detail"`
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	if json.Unmarshal(body, &payload) == nil {
		switch d := payload.Detail.(type) {
		case string:
			if d != "" {
				return d
			}
		case nil:
		default:
			if b, err := json.Marshal(d); err == nil {
				return string(b)
			}
		}
		if payload.Message != "" {
			return payload.Message
		}
		if payload.Error != "" {
			return payload.Error
		}
	}
	const maxDetail = 512
	s := strings.Join(strings.Fields(string(body)), " ")
	if r := []rune(s); len(r) > maxDetail {
		s = string(r[:maxDetail]) + "…"
	}
	return s
}

// Error returns, for example,
// "qovery: POST /environment/ID/helm: 409 Conflict: a service with this name already exists (after 3 attempts)".
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "qovery: %s %s: %d", e.Method, e.Path, e.Status)
	if text := http.StatusText(e.Status); text != "" {
		b.WriteString(" " + text)
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	if e.Later != nil {
		b.WriteString("; " + e.Later.String())
	}
	return b.String()
}

// HTTPStatus returns the HTTP status code.
func (e *APIError) HTTPStatus() int { return e.Status }

// StatusCode returns the HTTP status of an *APIError in err's chain, or 0.
func StatusCode(err error) int {
	var e *APIError
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// IsNotFound reports whether err is an API answer 404 Not Found.
//
// The API answers 403 Forbidden, and for some objects 400 with a detail
// saying the object does not exist, rather than 404 for an object that was
// deleted. A 403 is not taken for "gone" by itself: the same answer comes
// to a token that lost access to the object, and a Terraform provider that
// read it as "gone" would drop from its state objects that still exist,
// then create duplicates. So the reads and deletions of objects that can
// be deleted ask the list of their parent: an organization's Helm
// repositories and annotations groups, an environment's Helm services,
// applications and containers (for those, name the environment with
// InEnvironment). When the token can read the list and it no longer holds
// the object, the answer becomes a 404 and IsNotFound is true; when the
// list is refused too, it stays a 403 that says the token has no access.
// A 400 saying the object does not exist is taken as "gone" unless the
// list still holds the object or is refused. A wait for a deletion the
// client asked for (WaitForDeletion) takes either answer as the end of the
// deletion.
func IsNotFound(err error) bool { return StatusCode(err) == http.StatusNotFound }

// IsConflict reports whether err is an API answer 409 Conflict: a name
// already taken, or an action while a deployment of the service runs.
func IsConflict(err error) bool { return StatusCode(err) == http.StatusConflict }
