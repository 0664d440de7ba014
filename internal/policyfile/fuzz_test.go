package policyfile

import (
	"bytes"
	"testing"
)

var fuzzMutations = []Mutation{
	{Key: Key{Kind: KindGrant, Name: "fuzz"}, Value: raw(`{"src":["tag:fz"],"dst":["tag:fz"],"ip":["tcp:1"]}`)},
	{Key: Key{Kind: KindTagOwner, Name: "tag:fuzz"}, Value: raw(`["group:fz"]`)},
	{Key: RouteKey("10.250.0.0/16"), Value: raw(`["tag:fz"]`)},
	{Key: ExitNodeKey(), Value: raw(`["tag:fz","group:a-very-long-group-name-to-force-one-approver-per-line","group:and-another-one"]`)},
	{Key: Key{Kind: KindPolicyTest, Name: "fuzz"}, Value: raw(`{"src":"tag:fz","accept":["tag:fz:1"]}`)},
}

// FuzzPutDelete checks that putting a fragment into any policy keeps every
// original byte, and that deleting it again gives the original back: byte
// for byte when its section existed, except an empty section holding only
// a line break and the closing bracket's indentation, which comes back as
// "[]" or "{}".
func FuzzPutDelete(f *testing.F) {
	seeds := []string{
		basePolicy,
		"{}",
		"{\"grants\": [\n\t],\n\t\"tagOwners\": {\n\t}}",
		"{\r\n  \"tagOwners\": {\"tag:a\": [] /* x */},\r\n  \"autoApprovers\": {\"routes\": {\"10.0.0.0/8\": []} // r\r\n  }\r\n}",
		"{\"tests\": [{\"src\": \"a@b.c\", \"accept\": [\"tag:x:1\"]} // t\n], \"grants\": [1, 2 /* two */ ,\n]}",
	}
	for _, b := range fuzzSeedFiles(f) {
		seeds = append(seeds, string(b))
	}
	for i, s := range seeds {
		for k := range fuzzMutations {
			f.Add([]byte(s), uint8(i+k))
		}
	}
	f.Fuzz(func(t *testing.T, src []byte, which uint8) {
		doc, err := Parse(src)
		if err != nil {
			return
		}
		m := fuzzMutations[int(which)%len(fuzzMutations)]
		if doc.Lookup(m.Key, m.Value).Found {
			return // already there: the put adopts or updates, nothing to restore
		}
		c, had, err := doc.section(m.Key, false)
		if err != nil {
			return // a section of the wrong type: the put fails
		}
		blankEmpty := had && c.len() == 0 && !hasComment(*c.closing()) && len(lineBreaks(*c.closing())) > 0

		if err := doc.Apply(m); err != nil {
			t.Fatalf("put: %v", err)
		}
		put := doc.Bytes()
		again, err := Parse(put)
		if err != nil {
			t.Fatalf("put produced invalid HuJSON: %v\n%s", err, put)
		}
		if got := again.Get(m.Key); !got.Found || !got.Marked || string(got.Value) != mustCanon(t, m.Value) {
			t.Fatalf("after put, Get = %+v\n%s", got, put)
		}
		if !isSubsequence(src, put) {
			t.Fatalf("put changed existing bytes:\n%q\n%q", src, put)
		}

		if !again.Delete(m.Key) {
			t.Fatalf("delete found nothing:\n%s", put)
		}
		deleted := again.Bytes()
		if _, err := Parse(deleted); err != nil {
			t.Fatalf("delete produced invalid HuJSON: %v\n%s", err, deleted)
		}
		if had && !blankEmpty {
			if !bytes.Equal(deleted, src) {
				t.Fatalf("put then delete changed the policy:\n%q\n%q", src, deleted)
			}
			return
		}
		// The section stays; a second round trip is exact.
		if err := again.Apply(m); err != nil {
			t.Fatal(err)
		}
		again.Delete(m.Key)
		if !bytes.Equal(again.Bytes(), deleted) {
			t.Fatalf("second round trip differs:\n%q\n%q", deleted, again.Bytes())
		}
	})
}

// A section that a put creates after a member set off by a blank line goes
// with its blank line when its delete removes it: adding and removing a
// route approver again and again leaves the file as it was (found by
// FuzzPutDelete, which once saw the file grow by a line break each time).
func TestPutDelete_createdSectionAfterABlankLine(t *testing.T) {
	for _, src := range []string{
		"{\"autoApprovers\": {\n\n  \"exitNode\": [] }}",
		"{\"autoApprovers\": {//\n\n\"exitNode\": [] }}",
		"{\"autoApprovers\": {\r\n\r\n  \"exitNode\": [] }}",
	} {
		doc, err := Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		m := Mutation{Key: RouteKey("10.250.0.0/16"), Value: raw(`["tag:fz"]`)}
		for round := 1; round <= 3; round++ {
			if err := doc.Apply(m); err != nil {
				t.Fatal(err)
			}
			if !doc.Delete(m.Key) {
				t.Fatalf("round %d: the delete found nothing", round)
			}
			if got := string(doc.Bytes()); got != src {
				t.Fatalf("round %d of %q: put then delete gave %q", round, src, got)
			}
		}
	}
}
