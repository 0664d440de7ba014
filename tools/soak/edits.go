package main

import (
	"encoding/json"
	"fmt"
	"math/rand"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// consoleEdit is a change a person makes by hand in the Qovery console or
// the Tailscale admin console, which the next apply must repair.
type consoleEdit struct {
	name string
	do   func(w *sandbox.World, r *region) error
}

// edits are the console edits a round picks from.
var edits = []consoleEdit{
	{"grant ports changed", func(w *sandbox.World, r *region) error {
		return editFragment(w, policyfile.KindGrant, r.name+"-ops-admin", func(v map[string]any) { v["ip"] = []string{"tcp:8081"} })
	}},
	{"grant removed", func(w *sandbox.World, r *region) error {
		return editFragment(w, policyfile.KindGrant, r.name+"-oncall", nil)
	}},
	{"policy test removed", func(w *sandbox.World, r *region) error {
		return editFragment(w, policyfile.KindPolicyTest, r.name+"-web-everyone", nil)
	}},
	{"annotation removed", func(w *sandbox.World, r *region) error {
		g, err := group(w, "tailscale-"+r.serviceHostname("web"))
		if err != nil {
			return err
		}
		var kept []qoveryapi.Annotation
		for _, a := range g.Annotations {
			if a.Key != "tailscale.com/hostname" {
				kept = append(kept, a)
			}
		}
		return w.Qovery.SetAnnotations(g.ID, kept...)
	}},
	{"group detached", func(w *sandbox.World, r *region) error {
		g, err := group(w, "tailscale-"+r.serviceHostname("billing-api"))
		if err != nil {
			return err
		}
		return w.Console(sandbox.ConsoleAction{Action: "qovery.detach_group", ID: r.apps["billing-api"], GroupID: g.ID})
	}},
	{"device deleted", func(w *sandbox.World, r *region) error {
		return w.Console(sandbox.ConsoleAction{Action: "tailscale.remove_device", Host: r.serviceHostname("web")})
	}},
	{"connector routes revoked", func(w *sandbox.World, r *region) error {
		return w.Console(sandbox.ConsoleAction{Action: "tailscale.set_routes", Host: r.connectorName(), Routes: []string{}})
	}},
	{"annotations group deleted", func(w *sandbox.World, r *region) error {
		g, err := group(w, "tailscale-"+r.serviceHostname("web"))
		if err != nil {
			return err
		}
		return w.Console(sandbox.ConsoleAction{Action: "qovery.delete_group", ID: g.ID})
	}},
	{"operator chart version changed", func(w *sandbox.World, r *region) error {
		id, err := helm(w, r, true)
		if err != nil {
			return err
		}
		return w.Console(sandbox.ConsoleAction{Action: "qovery.set_chart_version", ID: id, Value: "1.100.0"})
	}},
	{"connector deleted", func(w *sandbox.World, r *region) error {
		id, err := helm(w, r, false)
		if err != nil {
			return err
		}
		return w.Console(sandbox.ConsoleAction{Action: "qovery.delete_service", ID: id})
	}},
}

// connectorOnly are the edits of the regions with a connector.
var connectorOnly = map[string]bool{"connector routes revoked": true, "connector deleted": true}

// pickEdit picks a console edit that applies to the region.
func pickEdit(rng *rand.Rand, r *region) consoleEdit {
	for {
		e := edits[rng.Intn(len(edits))]
		if connectorOnly[e.name] && !r.hasConnector() {
			continue
		}
		return e
	}
}

// editFragment changes (change non-nil) or removes one of qtail's fragments
// in the policy file, by hand.
func editFragment(w *sandbox.World, kind policyfile.Kind, name string, change func(map[string]any)) error {
	return w.Tailnet.EditPolicyDirect(func(body []byte) ([]byte, error) {
		doc, err := policyfile.Parse(body)
		if err != nil {
			return nil, err
		}
		f := doc.Get(policyfile.Key{Kind: kind, Name: name})
		if !f.Found {
			return nil, fmt.Errorf("no %s %q in the policy file", kind, name)
		}
		key := policyfile.Key{Kind: kind, Name: name, Owner: f.Owner}
		if change == nil {
			doc.Delete(key)
			return doc.Bytes(), nil
		}
		var v map[string]any
		if err := json.Unmarshal(f.Value, &v); err != nil {
			return nil, err
		}
		change(v)
		value, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		if err := doc.Put(key, value); err != nil {
			return nil, err
		}
		return doc.Bytes(), nil
	})
}

// helm finds the region's operator (operator true) or connector Helm
// service.
func helm(w *sandbox.World, r *region, operator bool) (string, error) {
	for _, h := range w.Qovery.Helms() {
		isOperator := h.Source.Repository != nil && h.Source.Repository.ChartName == qoveryapi.TailscaleOperatorChart
		if h.EnvironmentID == r.environmentID && isOperator == operator {
			return h.ID, nil
		}
	}
	return "", fmt.Errorf("no such Helm service in the environment of %s", r.name)
}

// group finds an annotations group by name.
func group(w *sandbox.World, name string) (qoveryapi.AnnotationsGroup, error) {
	for _, g := range w.Qovery.AnnotationsGroups() {
		if g.Name == name {
			return g, nil
		}
	}
	return qoveryapi.AnnotationsGroup{}, fmt.Errorf("no annotations group %q", name)
}
