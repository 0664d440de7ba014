package review

import (
	"fmt"
	"strings"
	"testing"
)

// TestMermaid: one edge per source, target and direction, labelled with
// its ports, gains first; at most 40 edges, and a note counts the rest.
func TestMermaid(t *testing.T) {
	if got := mermaid(&Report{Access: []TargetAccess{{Name: "web", IP: "100.64.0.10", Ports: []PortAccess{{Port: 443, Before: []string{"a"}, After: []string{"a"}}}}}}); got != "" {
		t.Errorf("a graph without changes:\n%s", got)
	}

	r := &Report{
		Access: []TargetAccess{
			{Name: "web", IP: "100.64.0.10", Ports: []PortAccess{
				{Port: 443, Gained: []string{"bob@example.com"}, Lost: []string{`group:"ops"`}},
				{Port: 8443, Gained: []string{"bob@example.com"}},
			}},
			{Name: "api<eu>", Tags: []string{"tag:api"}},
			{Name: "db", Tags: []string{"tag:db"}, IP: "100.64.0.11"},
		},
		Users: []UserAccess{
			{User: "carol@example.com", Gained: []string{"tag:api:tcp:443 via tag:router", "tag:db:tcp:5432", "tag:other:tcp:1"}, Lost: []string{"TAG:API:udp:53"}},
		},
	}
	want := `flowchart LR
  s1["bob@example.com"]
  t2["web"]
  s3["carol@example.com"]
  t4["api#lt;eu#gt;"]
  s5["group:#quot;ops#quot;"]
  s1 -->|"gains 443, 8443"| t2
  s3 -->|"gains tcp:443"| t4
  s5 -.->|"loses 443"| t2
  s3 -.->|"loses udp:53"| t4
  linkStyle 0 stroke:#1a7f37,stroke-width:2px
  linkStyle 1 stroke:#1a7f37,stroke-width:2px
  linkStyle 2 stroke:#cf222e,stroke-width:2px
  linkStyle 3 stroke:#cf222e,stroke-width:2px
`
	if got := mermaid(r); got != want {
		t.Errorf("graph:\n%s\nwant:\n%s", got, want)
	}

	for _, n := range []int{40, 41, 43} {
		var gained []string
		for i := range n - 1 {
			gained = append(gained, fmt.Sprintf("u%02d", i))
		}
		r := &Report{Access: []TargetAccess{{Name: "web", IP: "100.64.0.10", Ports: []PortAccess{{Port: 443, Gained: gained, Lost: []string{"group:ops"}}}}}}
		got := mermaid(r)
		more := fmt.Sprintf("  more[\"%d more changes: see the table\"]\n", n-40)
		if strings.Count(got, " -->|")+strings.Count(got, " -.->|") != min(n, 40) || strings.Count(got, "linkStyle") != min(n, 40) ||
			strings.Contains(got, "group:ops") != (n <= 40) || strings.HasSuffix(got, more) != (n > 40) || strings.Contains(got, "more[") != (n > 40) {
			t.Errorf("%d edges:\n%s", n, got)
		}
	}
}
