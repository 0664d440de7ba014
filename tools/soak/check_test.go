package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// testRegions are two regions of the checker's tests, the first with a
// connector.
func testRegions() []*region {
	return []*region{
		{name: "us-east-1", index: 0, environmentID: "env-us", apps: map[string]string{"billing-api": "app-us-b", "web": "app-us-w"}},
		{name: "eu-west-3", index: 1, environmentID: "env-eu", apps: map[string]string{"billing-api": "app-eu-b", "web": "app-eu-w"}},
	}
}

// applied is the sandbox's state once the regions are applied as
// configured, with the policy file written by policyfile as qtail writes
// it; the owner of each fragment is its own.
func applied(t *testing.T, hand string, regions ...*region) Snapshot {
	t.Helper()
	doc, err := policyfile.Parse([]byte(hand))
	if err != nil {
		t.Fatal(err)
	}
	s := Snapshot{Attached: map[string][]string{}}
	n := 0
	put := func(kind policyfile.Kind, name string, value any) {
		n++
		b, err := json.Marshal(value)
		if err != nil {
			t.Fatal(err)
		}
		if err := doc.Put(policyfile.Key{Kind: kind, Name: name, Owner: fmt.Sprintf("owner%05d", n)}, b); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range regions {
		e := r.expectation()
		for _, name := range sortedKeys(e.Grants) {
			put(policyfile.KindGrant, name, map[string]any{"src": []string{"group:platform-ops"}, "dst": []string{"tag:k8s-" + r.name}, "ip": e.Grants[name]})
		}
		for _, name := range e.Tests {
			put(policyfile.KindPolicyTest, name, map[string]any{"src": "carol@example.com", "deny": []string{"tag:k8s-" + r.name + ":80"}})
		}
		s.Devices = append(s.Devices, e.Devices...)
		s.Repositories = append(s.Repositories, e.Repositories...)
		s.OAuthClients = append(s.OAuthClients, "qtail operator prod-"+r.name)
		s.Helms = append(s.Helms, Helm{ID: "op-" + r.name, EnvironmentID: e.EnvironmentID, Name: "tailscale-operator", Chart: qoveryapi.TailscaleOperatorChart})
		if r.hasConnector() {
			s.Helms = append(s.Helms, Helm{ID: "vpc-" + r.name, EnvironmentID: e.EnvironmentID, Name: r.connectorName(), Chart: "tailnet-manifests"})
		}
		for _, app := range sortedKeys(e.Exposures) {
			host := e.Exposures[app]
			s.Groups = append(s.Groups, Group{ID: "g-" + host, Name: "tailscale-" + host,
				Annotations: map[string]string{"tailscale.com/expose": "true", "tailscale.com/hostname": host}})
			s.Attached[app] = []string{"g-" + host}
		}
	}
	s.Policy = doc.Bytes()
	return s
}

func expectations(regions ...*region) []Expectation {
	var out []Expectation
	for _, r := range regions {
		out = append(out, r.expectation())
	}
	return out
}

func TestCheckPassesTheAppliedState(t *testing.T) {
	rs := testRegions()
	hand := handWritten([]string{rs[0].name, rs[1].name})
	if f := Check(applied(t, hand, rs...), expectations(rs...), nil, []byte(hand)); len(f) != 0 {
		t.Errorf("findings on the state as configured: %v", f)
	}
	// One region gone, its objects with it.
	if f := Check(applied(t, hand, rs[0]), expectations(rs[0]), expectations(rs[1]), []byte(hand)); len(f) != 0 {
		t.Errorf("findings with eu-west-3 destroyed: %v", f)
	}
	// Nothing but the hand-written file.
	if f := Check(Snapshot{Policy: []byte(hand)}, nil, expectations(rs...), []byte(hand)); len(f) != 0 {
		t.Errorf("findings with every region destroyed: %v", f)
	}
}

func TestCheckFindsEachDefect(t *testing.T) {
	rs := testRegions()
	hand := handWritten([]string{rs[0].name, rs[1].name})
	editPolicy := func(s *Snapshot, edit func(*policyfile.Document)) {
		doc, err := policyfile.Parse(s.Policy)
		if err != nil {
			t.Fatal(err)
		}
		edit(doc)
		s.Policy = doc.Bytes()
	}
	ownerOf := func(s Snapshot, name string) string {
		doc, err := policyfile.Parse(s.Policy)
		if err != nil {
			t.Fatal(err)
		}
		return doc.Get(policyfile.Key{Kind: policyfile.KindGrant, Name: name}).Owner
	}
	for _, c := range []struct {
		name string
		// gone makes eu-west-3 a region destroyed.
		gone   bool
		defect func(s *Snapshot)
		kind   string
		want   string
	}{
		{"a grant lost", false, func(s *Snapshot) {
			editPolicy(s, func(d *policyfile.Document) {
				d.Delete(policyfile.Key{Kind: policyfile.KindGrant, Name: "us-east-1-oncall", Owner: ownerOf(*s, "us-east-1-oncall")})
			})
		}, Lost, `grant "us-east-1-oncall" is missing`},
		{"a grant's ports changed", false, func(s *Snapshot) {
			editPolicy(s, func(d *policyfile.Document) {
				k := policyfile.Key{Kind: policyfile.KindGrant, Name: "eu-west-3-ops-admin", Owner: ownerOf(*s, "eu-west-3-ops-admin")}
				if err := d.Put(k, json.RawMessage(`{"src":["group:platform-ops"],"dst":["tag:k8s"],"ip":["tcp:9999"]}`)); err != nil {
					t.Fatal(err)
				}
			})
		}, Lost, `grant "eu-west-3-ops-admin" has ip [tcp:9999]`},
		{"a policy test lost", false, func(s *Snapshot) {
			editPolicy(s, func(d *policyfile.Document) {
				for _, f := range d.Fragments() {
					if f.Key.Name == "us-east-1-web-everyone" && f.Key.Kind == policyfile.KindPolicyTest {
						d.Delete(f.Key)
					}
				}
			})
		}, Lost, `policy test "us-east-1-web-everyone" is missing`},
		{"a device lost", false, func(s *Snapshot) { s.Devices = s.Devices[1:] }, Lost, `device "tailscale-operator-us-east-1" is missing`},
		{"an annotation lost", false, func(s *Snapshot) {
			delete(s.Groups[0].Annotations, "tailscale.com/hostname")
		}, Lost, `annotations group "tailscale-billing-api-us-east-1" has the annotations`},
		{"a group detached", false, func(s *Snapshot) { s.Attached["app-eu-w"] = nil }, Lost, `the attachment of "tailscale-web-eu-west-3" to its application is missing`},
		{"a Helm service lost", false, func(s *Snapshot) { s.Helms = s.Helms[1:] }, Lost, `the operator's Helm service is missing`},
		{"a duplicate device", false, func(s *Snapshot) { s.Devices = append(s.Devices, "web-eu-west-3") }, Duplicated, `device "web-eu-west-3" is there 2 times`},
		{"a duplicate annotations group", false, func(s *Snapshot) {
			s.Groups = append(s.Groups, Group{ID: "g2", Name: "tailscale-web-us-east-1"})
		}, Duplicated, `annotations group "tailscale-web-us-east-1" is there 2 times`},
		{"a group attached twice", false, func(s *Snapshot) {
			s.Attached["app-us-b"] = append(s.Attached["app-us-b"], s.Attached["app-us-b"]...)
		}, Duplicated, `the attachment of "tailscale-billing-api-us-east-1" to its application is there 2 times`},
		{"a duplicate Helm service", false, func(s *Snapshot) {
			s.Helms = append(s.Helms, Helm{ID: "op2", EnvironmentID: "env-eu", Name: "tailscale-operator", Chart: qoveryapi.TailscaleOperatorChart})
		}, Duplicated, `the operator's Helm service is there 2 times`},
		{"a duplicate Helm repository", false, func(s *Snapshot) { s.Repositories = append(s.Repositories, "qtail-us-east-1") }, Duplicated, `Helm repository "qtail-us-east-1" is there 2 times`},
		{"a duplicate OAuth client", false, func(s *Snapshot) {
			s.OAuthClients = append(s.OAuthClients, "qtail operator prod-us-east-1")
		}, Duplicated, "the operator's OAuth client is there 2 times"},
		{"an OAuth client left of a region destroyed", true, func(s *Snapshot) {
			s.OAuthClients = append(s.OAuthClients, "qtail operator prod-eu-west-3")
		}, Orphan, `the OAuth client "qtail operator prod-eu-west-3" is on the tailnet`},
		{"two fragments of one owner", false, func(s *Snapshot) {
			owner := ownerOf(*s, "us-east-1-oncall")
			editPolicy(s, func(d *policyfile.Document) {
				k := policyfile.Key{Kind: policyfile.KindGrant, Name: "us-east-1-oncall-copy", Owner: owner}
				if err := d.Put(k, json.RawMessage(`{"src":["bob@example.com"],"dst":["tag:k8s"],"ip":["tcp:80"]}`)); err != nil {
					t.Fatal(err)
				}
			})
		}, Duplicated, "marks 2 fragments"},
		{"a grant left of a region destroyed", true, func(s *Snapshot) {
			editPolicy(s, func(d *policyfile.Document) {
				k := policyfile.Key{Kind: policyfile.KindGrant, Name: "eu-west-3-oncall", Owner: "left"}
				if err := d.Put(k, json.RawMessage(`{"src":["bob@example.com"],"dst":["tag:k8s"],"ip":["tcp:80"]}`)); err != nil {
					t.Fatal(err)
				}
			})
		}, Orphan, `grant "eu-west-3-oncall" is in the policy file`},
		{"a device left of a region destroyed", true, func(s *Snapshot) { s.Devices = append(s.Devices, "web-eu-west-3") }, Orphan, `device "web-eu-west-3" is on the tailnet`},
		{"a Helm service left of a region destroyed", true, func(s *Snapshot) {
			s.Helms = append(s.Helms, Helm{ID: "x", EnvironmentID: "env-eu", Name: "tailscale-operator"})
		}, Orphan, `Helm service "tailscale-operator" is in the environment`},
		{"a group left of a region destroyed", true, func(s *Snapshot) {
			s.Groups = append(s.Groups, Group{ID: "x", Name: "tailscale-web-eu-west-3"})
			s.Attached["app-eu-w"] = []string{"x"}
		}, Orphan, `annotations group "tailscale-web-eu-west-3" is in Qovery`},
		{"a repository left of a region destroyed", true, func(s *Snapshot) { s.Repositories = append(s.Repositories, "tailscale-eu-west-3") }, Orphan, `Helm repository "tailscale-eu-west-3" is in Qovery`},
		{"a stray grant of a live region", false, func(s *Snapshot) {
			editPolicy(s, func(d *policyfile.Document) {
				k := policyfile.Key{Kind: policyfile.KindGrant, Name: "us-east-1-old", Owner: "stray"}
				if err := d.Put(k, json.RawMessage(`{"src":["bob@example.com"],"dst":["tag:k8s"],"ip":["tcp:80"]}`)); err != nil {
					t.Fatal(err)
				}
			})
		}, Orphan, `grant "us-east-1-old" is in the policy file`},
		{"a hand-written line edited", false, func(s *Snapshot) {
			s.Policy = []byte(strings.Replace(string(s.Policy), `"ip": ["tcp:443"]}`, `"ip": ["tcp:444"]}`, 1))
		}, HandWritten, `- 		{"src": ["group:platform-ops"], "dst": ["tag:k8s-operator"], "ip": ["tcp:443"]},`},
		{"a hand-written comment lost", true, func(s *Snapshot) {
			s.Policy = []byte(strings.Replace(string(s.Policy), "\t// People, maintained by hand.\n", "", 1))
		}, HandWritten, "- \t// People, maintained by hand."},
	} {
		t.Run(c.name, func(t *testing.T) {
			live, gone := rs, []*region(nil)
			if c.gone {
				live, gone = rs[:1], rs[1:]
			}
			s := applied(t, hand, live...)
			c.defect(&s)
			findings := Check(s, expectations(live...), expectations(gone...), []byte(hand))
			if len(findings) == 0 {
				t.Fatal("no finding")
			}
			for _, f := range findings {
				if f.Kind == c.kind && strings.Contains(f.What, c.want) {
					return
				}
			}
			t.Errorf("no %s finding with %q; findings: %v", c.kind, c.want, findings)
		})
	}
}
