package review

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// maxEdges keeps the graph readable; the tables hold the rest.
const maxEdges = 40

// edge is gained or lost access of one source to one target, on ports.
type edge struct {
	source, target string
	gained         bool
	ports          []string
}

// mermaid draws the gained (solid, green) and lost (dotted, red) access
// of the report's targets as a Mermaid flowchart, which GitHub and GitLab
// render inline: source -> target, labelled with the ports. It is empty
// when no access changes.
func mermaid(r *Report) string {
	byKey := map[string]*edge{}
	var edges []*edge
	addLabel := func(source, target string, gained bool, ports string) {
		k := fmt.Sprintf("%s\x00%s\x00%t", source, target, gained)
		e, ok := byKey[k]
		if !ok {
			e = &edge{source: source, target: target, gained: gained}
			byKey[k] = e
			edges = append(edges, e)
		}
		e.ports = append(e.ports, ports)
	}
	add := func(source, target string, gained bool, port uint16) {
		addLabel(source, target, gained, strconv.Itoa(int(port)))
	}
	for _, ta := range r.Access {
		for _, p := range ta.Ports {
			for _, s := range p.Gained {
				add(s, ta.Name, true, p.Port)
			}
			for _, s := range p.Lost {
				add(s, ta.Name, false, p.Port)
			}
		}
	}
	// A target without an address (a service created by the plans) has
	// no answer of its own: draw what the users gain or lose on its tags.
	for _, ta := range r.Access {
		if ta.IP != "" || len(ta.Tags) == 0 {
			continue
		}
		for _, u := range r.Users {
			for _, d := range u.Gained {
				if ports, ok := onTags(d, ta.Tags); ok {
					addLabel(u.User, ta.Name, true, ports)
				}
			}
			for _, d := range u.Lost {
				if ports, ok := onTags(d, ta.Tags); ok {
					addLabel(u.User, ta.Name, false, ports)
				}
			}
		}
	}
	if len(edges) == 0 {
		return ""
	}
	sort.SliceStable(edges, func(i, j int) bool { return edges[i].gained && !edges[j].gained })
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	ids := map[string]string{}
	node := func(prefix, label string) string {
		if id, ok := ids[prefix+label]; ok {
			return id
		}
		id := fmt.Sprintf("%s%d", prefix, len(ids)+1)
		ids[prefix+label] = id
		fmt.Fprintf(&b, "  %s[\"%s\"]\n", id, mermaidText(label))
		return id
	}
	shown := edges[:min(len(edges), maxEdges)]
	type line struct{ from, to, arrow, label string }
	var lines []line
	for _, e := range shown {
		from, to := node("s", e.source), node("t", e.target)
		arrow, verb := "-->", "gains "
		if !e.gained {
			arrow, verb = "-.->", "loses "
		}
		lines = append(lines, line{from, to, arrow, verb + strings.Join(e.ports, ", ")})
	}
	for _, l := range lines {
		fmt.Fprintf(&b, "  %s %s|\"%s\"| %s\n", l.from, l.arrow, mermaidText(l.label), l.to)
	}
	for i, e := range shown {
		if e.gained {
			fmt.Fprintf(&b, "  linkStyle %d stroke:#1a7f37,stroke-width:2px\n", i)
		} else {
			fmt.Fprintf(&b, "  linkStyle %d stroke:#cf222e,stroke-width:2px\n", i)
		}
	}
	if len(edges) > maxEdges {
		fmt.Fprintf(&b, "  more[\"%d more changes: see the table\"]\n", len(edges)-maxEdges)
	}
	return b.String()
}

// mermaidText escapes a label for a quoted Mermaid string.
func mermaidText(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;").Replace(s)
}

// onTags returns the ports part of a rule destination ("tag:web:tcp:443"
// gives "tcp:443") when its destination is one of tags.
func onTags(dest string, tags []string) (string, bool) {
	dest, _, _ = strings.Cut(dest, " ") // qualifiers
	for _, t := range tags {
		if rest, ok := strings.CutPrefix(strings.ToLower(dest), strings.ToLower(t)+":"); ok {
			return rest, true
		}
	}
	return "", false
}
