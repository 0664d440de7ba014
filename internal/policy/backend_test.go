package policy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tailscale/hujson"
)

// httpError is an API error with a status, as the tailnet client returns.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string   { return fmt.Sprintf("%s (%d)", e.msg, e.status) }
func (e *httpError) HTTPStatus() int { return e.status }

func etagOf(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// memBackend is an in-memory policy file API: the ETag is the quoted
// SHA-256 of the stored bytes, a stale If-Match gets a 412, and tests can
// add latency, storms of concurrent edits and rejections.
type memBackend struct {
	latency time.Duration
	// reject, when set, is asked about every write; a non-nil result
	// refuses it with HTTP 400 and that message.
	reject func(body []byte) string

	mu        sync.Mutex
	body      []byte
	gets      int
	sets      int // write attempts
	writes    int // successful writes
	conflicts int // 412 answers
	rejects   int // 400 answers
	validates int // Validate calls
	storm     int // writes left that find the file edited by someone else
	edits     int
}

func newMemBackend(body string) *memBackend {
	return &memBackend{body: []byte(body)}
}

func (m *memBackend) wait(ctx context.Context) error {
	if m.latency <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(m.latency)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (m *memBackend) Get(ctx context.Context) (Snapshot, error) {
	if err := m.wait(ctx); err != nil {
		return Snapshot{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gets++
	return Snapshot{HuJSON: bytes.Clone(m.body), ETag: etagOf(m.body)}, nil
}

func (m *memBackend) Set(ctx context.Context, body []byte, etag string) (string, error) {
	if err := m.wait(ctx); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sets++
	if m.storm > 0 {
		m.storm--
		m.editLocked()
	}
	if etag != etagOf(m.body) {
		m.conflicts++
		return "", &httpError{412, "precondition failed, invalid old hash"}
	}
	if err := m.check(body); err != nil {
		m.rejects++
		return "", err
	}
	m.body = bytes.Clone(body)
	m.writes++
	return etagOf(m.body), nil
}

func (m *memBackend) Validate(ctx context.Context, body []byte) error {
	if err := m.wait(ctx); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.validates++
	return m.check(body)
}

func (m *memBackend) check(body []byte) error {
	std, err := hujson.Standardize(bytes.Clone(body))
	if err != nil {
		return &httpError{400, err.Error()}
	}
	if m.reject != nil {
		if msg := m.reject(std); msg != "" {
			return &httpError{400, msg}
		}
	}
	return nil
}

// edit changes the file the way a person in the admin console would.
func (m *memBackend) edit() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.editLocked()
}

func (m *memBackend) editLocked() {
	m.edits++
	m.body = append(m.body, fmt.Sprintf("// edited by hand, %d\n", m.edits)...)
}

func (m *memBackend) bytes() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return bytes.Clone(m.body)
}

type counts struct{ gets, sets, writes, conflicts, rejects, validates int }

func (m *memBackend) counts() counts {
	m.mu.Lock()
	defer m.mu.Unlock()
	return counts{m.gets, m.sets, m.writes, m.conflicts, m.rejects, m.validates}
}

func TestErrorClassification(t *testing.T) {
	if !IsPreconditionFailed(&httpError{412, "x"}) || !IsPreconditionFailed(fmt.Errorf("w: %w", ErrPreconditionFailed)) {
		t.Error("412 not recognized")
	}
	if IsPreconditionFailed(&httpError{400, "x"}) || IsPreconditionFailed(errors.New("x")) {
		t.Error("non-412 taken for a 412")
	}
	if !IsRejected(&httpError{400, "x"}) || !IsRejected(fmt.Errorf("w: %w", ErrRejected)) {
		t.Error("400 not recognized")
	}
	if IsRejected(&httpError{412, "x"}) || IsRejected(errors.New("x")) {
		t.Error("non-400 taken for a rejection")
	}
}
