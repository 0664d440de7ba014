package policyfile

import (
	"fmt"
	"strings"
	"testing"
)

// The costs that grow with the number of fragments N, measured at N = 100,
// 1,000 and 5,000 (go test -bench . -run '^$' ./internal/policyfile/, or make
// bench-policy-go). Each reports ns/fragment: flat when the cost is linear
// in N. A write sends the whole file, so a write costs time in proportion
// to the document: the wave benchmark reports its time per fragment of the
// document it rewrites.

var benchSizes = []int{100, 1000, 5000}

// benchPolicy is a policy file with n marked grants, a comment between
// each, as qtail writes them.
func benchPolicy(n int) []byte {
	var b strings.Builder
	b.WriteString("// Policy of the benchmark.\n{\n\t\"groups\": {\"group:ops\": [\"alice@example.com\"]},\n\t\"grants\": [\n")
	for i := range n {
		fmt.Fprintf(&b, "\t\t// qtail:grant:g%d\n\t\t{\"src\": [\"group:ops\"], \"dst\": [\"10.0.%d.%d\"], \"ip\": [\"tcp:%d\"]},\n", i, i/250, i%250, 1000+i%50000)
	}
	b.WriteString("\t],\n}\n")
	return []byte(b.String())
}

func perFragment(b *testing.B, n int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/fragment")
}

// eachSize runs, for each N of benchSizes, the operation that op returns
// for a policy file of N grants (its bytes and its parsed document), and
// reports its time per fragment.
func eachSize(b *testing.B, op func(b *testing.B, n int, file []byte, d *Document) func()) {
	for _, n := range benchSizes {
		file := benchPolicy(n)
		d, err := Parse(file)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprint("N=", n), func(b *testing.B) {
			run := op(b, n, file, d)
			for b.Loop() {
				run()
			}
			perFragment(b, n)
		})
	}
}

// Parsing the file and indexing its markers, once per provider process.
func BenchmarkParseAndIndex(b *testing.B) {
	eachSize(b, func(b *testing.B, _ int, file []byte, _ *Document) func() {
		return func() {
			d, err := Parse(file)
			if err != nil {
				b.Fatal(err)
			}
			if f := d.Get(Key{Kind: KindGrant, Name: "g0"}); !f.Found {
				b.Fatal("g0 not found")
			}
		}
	})
}

// The refresh of N fragments: one lookup each in one parsed document.
func BenchmarkLookupEveryFragment(b *testing.B) {
	eachSize(b, func(b *testing.B, n int, _ []byte, d *Document) func() {
		return func() {
			for i := range n {
				if f := d.Get(Key{Kind: KindGrant, Name: fmt.Sprint("g", i)}); !f.Found {
					b.Fatalf("g%d not found", i)
				}
			}
		}
	})
}

// One write of a wave of 10 new grants into a document of N: the changes
// and the rendering of the whole file.
func BenchmarkWaveWrite(b *testing.B) {
	eachSize(b, func(b *testing.B, _ int, _ []byte, d *Document) func() {
		return func() {
			c := d.Clone()
			for i := range 10 {
				if err := c.Apply(Mutation{Key: Key{Kind: KindGrant, Name: fmt.Sprint("new", i)}, Value: grantValue(fmt.Sprint("n", i))}); err != nil {
					b.Fatal(err)
				}
			}
			if len(c.Bytes()) == 0 {
				b.Fatal("empty document")
			}
		}
	})
}

// The plan or the apply of one qtail_grants of N new grants: N puts into
// a policy file that holds none of them, then the rendering of the file.
func BenchmarkPutEveryFragment(b *testing.B) {
	for _, n := range benchSizes {
		muts := make([]Mutation, n)
		for i := range muts {
			muts[i] = Mutation{Key: Key{Kind: KindGrant, Name: fmt.Sprint("g", i), Owner: "0123456789"},
				Value: fmt.Appendf(nil, `{"dst":["10.0.%d.%d"],"ip":["tcp:443"],"src":["group:ops"]}`, i/250, i%250)}
		}
		d, err := Parse(benchPolicy(0))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprint("N=", n), func(b *testing.B) {
			for b.Loop() {
				c := d.Clone()
				for _, m := range muts {
					if err := c.Apply(m); err != nil {
						b.Fatal(err)
					}
				}
				if len(c.Bytes()) == 0 {
					b.Fatal("empty document")
				}
			}
			perFragment(b, n)
		})
	}
}
