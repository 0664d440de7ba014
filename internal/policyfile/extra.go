package policyfile

import (
	"bytes"
	"strings"

	"github.com/tailscale/hujson"
)

// The helpers below read and cut the whitespace and comments (hujson.Extra)
// that stand between values. They never split a comment.

type tokenKind byte

const (
	tokSpace tokenKind = iota
	tokLine            // "// ...\n", newline included
	tokBlock           // "/* ... */"
)

type token struct {
	kind       tokenKind
	start, end int
}

// tokens splits a valid Extra into whitespace runs and comments.
func tokens(e []byte) []token {
	var out []token
	for i := 0; i < len(e); {
		switch {
		case bytes.HasPrefix(e[i:], []byte("//")):
			n := bytes.IndexByte(e[i:], '\n')
			if n < 0 {
				n = len(e) - i - 1
			}
			out = append(out, token{tokLine, i, i + n + 1})
			i += n + 1
		case bytes.HasPrefix(e[i:], []byte("/*")):
			n := bytes.Index(e[i+2:], []byte("*/"))
			end := len(e)
			if n >= 0 {
				end = i + 2 + n + 2
			}
			out = append(out, token{tokBlock, i, end})
			i = end
		default:
			j := i
			for j < len(e) && isSpace(e[j]) {
				j++
			}
			if j == i {
				j++ // not valid HuJSON; keep going without looping
			}
			out = append(out, token{tokSpace, i, j})
			i = j
		}
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isHorizontal(c byte) bool { return c == ' ' || c == '\t' }

// lineBreaks returns the offsets of the newlines in e that end a line: those
// in whitespace and those that end a line comment, not those inside a block
// comment.
func lineBreaks(e []byte) []int {
	var out []int
	for _, t := range tokens(e) {
		switch t.kind {
		case tokSpace:
			for i := t.start; i < t.end; i++ {
				if e[i] == '\n' {
					out = append(out, i)
				}
			}
		case tokLine:
			if e[t.end-1] == '\n' {
				out = append(out, t.end-1)
			}
		}
	}
	return out
}

// lastLineIndent returns the indentation of the last line of e: the spaces
// and tabs that follow its last line break. ok is false when e has no line
// break.
func lastLineIndent(e []byte) (ind string, ok bool) {
	br := lineBreaks(e)
	if len(br) == 0 {
		return "", false
	}
	i := br[len(br)-1] + 1
	j := i
	for j < len(e) && isHorizontal(e[j]) {
		j++
	}
	return string(e[i:j]), true
}

// splitFirstLine cuts e before its first line break, so that what stays on
// the line of the preceding value (a same-line comment) can move with it.
// A "\r" before the break goes with the break.
func splitFirstLine(e []byte) (head, tail []byte) {
	br := lineBreaks(e)
	if len(br) == 0 {
		return e, nil
	}
	i := br[0]
	if i > 0 && e[i-1] == '\r' {
		i--
	}
	return e[:i], e[i:]
}

// hasComment reports whether e holds a comment.
func hasComment(e []byte) bool {
	for _, t := range tokens(e) {
		if t.kind != tokSpace {
			return true
		}
	}
	return false
}

// hasBlankLine reports whether e holds an empty line between two line
// breaks.
func hasBlankLine(e []byte) bool {
	br := lineBreaks(e)
	for i := 1; i < len(br); i++ {
		gap := e[br[i-1]+1 : br[i]]
		if len(bytes.Trim(gap, " \t\r")) == 0 {
			return true
		}
	}
	return false
}

// markersIn returns the keys of the marker comments in e, in order.
func markersIn(e []byte) []Key {
	var out []Key
	for _, t := range tokens(e) {
		if t.kind != tokLine {
			continue
		}
		if k, ok := parseMarker(string(e[t.start:t.end])); ok {
			out = append(out, k)
		}
	}
	return out
}

// hasMarker reports whether e holds the marker of key, whatever owner it
// names for a kind other than the auto approver (see Key.ident).
func hasMarker(e []byte, key Key) bool {
	for _, k := range markersIn(e) {
		if sameEntry(k, key) {
			return true
		}
	}
	return false
}

// markerOwner returns the owner that the marker of key in e names, the
// last one when there are several; "" when it names none.
func markerOwner(e []byte, key Key) string {
	owner := ""
	for _, k := range markersIn(e) {
		if sameEntry(k, key) {
			owner = k.Owner
		}
	}
	return owner
}

// withMarker returns a copy of e whose markers of key are key's own
// marker (with its owner), each on the line where it was.
func withMarker(e []byte, key Key) hujson.Extra {
	var out hujson.Extra
	last := 0
	for _, t := range tokens(e) {
		if t.kind != tokLine {
			continue
		}
		k, ok := parseMarker(string(e[t.start:t.end]))
		if !ok || !sameEntry(k, key) {
			continue
		}
		end := t.end
		for end > t.start && (e[end-1] == '\n' || e[end-1] == '\r') {
			end--
		}
		out = append(out, e[last:t.start]...)
		out = append(out, key.Marker()...)
		last = end
	}
	return append(out, e[last:]...)
}

// hasMarkerOfKind reports whether e holds a marker of kind.
func hasMarkerOfKind(e []byte, kind Kind) bool {
	for _, k := range markersIn(e) {
		if k.Kind == kind {
			return true
		}
	}
	return false
}

// lastMarkerOfKind returns the marker of kind nearest to the entry.
func lastMarkerOfKind(e []byte, kind Kind) (Key, bool) {
	ks := markersIn(e)
	for i := len(ks) - 1; i >= 0; i-- {
		if ks[i].Kind == kind {
			return ks[i], true
		}
	}
	return Key{}, false
}

// isMarkerLine reports whether the line comment c is the marker that
// isMarker accepts, or the comment marker.
func isMarkerLine(c string, isMarker func(Key) bool, marker string) bool {
	if marker != "" && strings.TrimSpace(c) == marker {
		return true
	}
	k, ok := parseMarker(c)
	return ok && isMarker != nil && isMarker(k)
}

// dropMarkerLine removes from e the last marker line that isMarker (or
// the comment marker) accepts: the comment, the spaces before it and the
// line break that opened its line; the break that ends it stays. It
// returns a new extra, e's copy when it holds no such marker.
func dropMarkerLine(e []byte, isMarker func(Key) bool, marker string) []byte {
	out := cloneExtra(e)
	ts := tokens(out)
	for i := len(ts) - 1; i >= 0; i-- {
		t := ts[i]
		if t.kind != tokLine || !isMarkerLine(string(out[t.start:t.end]), isMarker, marker) {
			continue
		}
		from := t.start
		for from > 0 && isHorizontal(out[from-1]) {
			from--
		}
		if from > 0 && out[from-1] == '\n' {
			from--
			if from > 0 && out[from-1] == '\r' {
				from--
			}
		}
		to := t.end
		if out[to-1] == '\n' {
			to--
			if to > t.start && out[to-1] == '\r' {
				to--
			}
		}
		return append(out[:from:from], out[to:]...)
	}
	return out
}

// withoutMarker removes from the leading extra of a deleted entry its
// marker line and the indentation of the entry's own line, and returns what
// is left: the comments and line breaks that were there before the marker,
// which stay in the document.
func withoutMarker(e []byte, isMarker func(Key) bool, marker string) []byte {
	out := dropMarkerLine(e, isMarker, marker)
	// Drop the indentation of the entry's line and the line break before
	// it, unless that break ends a line comment.
	end := len(out)
	for end > 0 && isHorizontal(out[end-1]) {
		end--
	}
	br := lineBreaks(out)
	if len(br) > 0 && br[len(br)-1] == end-1 {
		ts := tokens(out)
		endsComment := false
		for _, t := range ts {
			if t.kind == tokLine && t.end == end {
				endsComment = true
			}
		}
		if !endsComment {
			end--
			if end > 0 && out[end-1] == '\r' {
				end--
			}
		}
	}
	return out[:end]
}

// withoutFinalBreak drops the line break that e ends with, unless it ends
// a line comment.
func withoutFinalBreak(e []byte) []byte {
	end := len(e)
	if end == 0 || e[end-1] != '\n' {
		return e
	}
	for _, t := range tokens(e) {
		if t.kind == tokLine && t.end == end {
			return e
		}
	}
	end--
	if end > 0 && e[end-1] == '\r' {
		end--
	}
	return e[:end]
}

// joinExtra concatenates a and b. When a ends with the line break of a
// line comment and b starts with a line break, the comment takes b's break
// instead of its own, so that joining adds no blank line.
func joinExtra(a, b []byte) hujson.Extra {
	if ts := tokens(a); len(ts) > 0 && ts[len(ts)-1].kind == tokLine && a[len(a)-1] == '\n' &&
		(bytes.HasPrefix(b, []byte("\n")) || bytes.HasPrefix(b, []byte("\r\n"))) {
		a = a[:len(a)-1]
		if len(a) > 0 && a[len(a)-1] == '\r' {
			a = a[:len(a)-1]
		}
	}
	return concat(a, b)
}

// concat joins extras into a new one. The result is nil only when every
// part is nil, so that a present-but-empty extra stays present.
func concat(parts ...[]byte) hujson.Extra {
	var out hujson.Extra
	for _, p := range parts {
		if p != nil && out == nil {
			out = hujson.Extra{}
		}
		out = append(out, p...)
	}
	return out
}
