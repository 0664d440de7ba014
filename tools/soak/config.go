package main

import (
	"fmt"
	"strings"

	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
)

// regionNames are the regions the soak can run, in the order it takes
// them. No name is part of another, so that an object whose name carries
// one region's name is that region's.
var regionNames = []string{
	"us-east-1", "eu-west-3", "ap-south-1", "sa-east-1",
	"us-west-2", "eu-central-1", "ap-northeast-1", "ca-central-1",
}

// region is one region configuration: a Terraform root of its own, with
// its own state, and what its apply must leave in the sandbox.
type region struct {
	name string
	// index is the region's place in regionNames; the regions of even
	// index have a connector.
	index int
	dir   string
	// environmentID and the applications' IDs by name, from the seed.
	environmentID string
	apps          map[string]string
}

func (r *region) hasConnector() bool { return r.index%2 == 0 }

// operatorHostname, the hostnames of the exposed applications and the
// connector's name, as the configuration sets them.
func (r *region) operatorHostname() string { return "tailscale-operator-" + r.name }
func (r *region) serviceHostname(app string) string {
	return app + "-" + r.name
}
func (r *region) connectorName() string { return "vpc-" + r.name }

// exposed are the applications the configuration exposes, by name.
var exposed = []string{"billing-api", "web"}

// expectation is what a region's configuration must leave in the sandbox,
// derived from the configuration alone.
func (r *region) expectation() Expectation {
	e := Expectation{
		Region:        r.name,
		EnvironmentID: r.environmentID,
		Grants: map[string][]string{
			r.name + "-billing-api-platform-ops": {"tcp:443", "tcp:8080"},
			r.name + "-web-everyone":             {"tcp:80"},
			r.name + "-ops-admin":                {"tcp:8080"},
			r.name + "-oncall":                   {"tcp:80"},
		},
		Tests: []string{
			r.name + "-billing-api-platform-ops",
			r.name + "-web-everyone",
			r.name + "-billing-api-denies-carol-example.com",
		},
		Devices:      []string{r.operatorHostname()},
		Repositories: []string{"tailscale-" + r.name, "qtail-" + r.name},
		Helms:        1,
		Exposures:    map[string]string{},
	}
	for _, app := range exposed {
		e.Devices = append(e.Devices, r.serviceHostname(app))
		e.Exposures[r.apps[app]] = r.serviceHostname(app)
	}
	if r.hasConnector() {
		e.Grants[r.name+"-connector-routes"] = []string{"*"}
		e.Devices = append(e.Devices, r.connectorName())
		e.Helms++
	}
	return e
}

// config is the region's root module. moduleSource is the path of
// examples/modules/region from the root's directory.
func (r *region) config(orgID, moduleSource string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `terraform {
  required_providers {
    qtail = { source = "qtail/qtail" }
  }
}

provider "qtail" {}

resource "qtail_helm_repository" "operator" {
  organization_id = %[2]q
  name            = "tailscale-%[1]s"
}

resource "qtail_helm_repository" "manifests" {
  organization_id = %[2]q
  name            = "qtail-%[1]s"
  url             = "https://qtail.github.io/terraform-provider-qtail"
}

module "region" {
  source = %[3]q

  region         = %[1]q
  environment_id = %[4]q
  tailnet = {
    operator_helm_repository_id  = qtail_helm_repository.operator.id
    manifests_helm_repository_id = qtail_helm_repository.manifests.id
    operator_tag                 = "tag:k8s-operator"
    proxy_tag                    = "tag:k8s"
    service_tags                 = ["tag:k8s-billing"]
    regions = {
      %[1]q = {
        proxy_tag    = "tag:k8s-%[1]s"
        service_tags = { "tag:k8s-billing" = "tag:k8s-billing-%[1]s" }
      }
    }
  }

  services = {
    billing-api = {
      application_id = %[5]q
      tags           = ["tag:k8s-billing"]
      access = {
        platform-ops = { src = ["group:platform-ops"] }
      }
      denied = ["carol@example.com"]
    }
    web = {
      application_id = %[6]q
      access = {
        everyone = { src = ["autogroup:member"], test_src = "carol@example.com" }
      }
    }
  }
`, r.name, orgID, moduleSource, r.environmentID, r.apps["billing-api"], r.apps["web"])
	if r.hasConnector() {
		fmt.Fprintf(&b, `
  connector = {
    subnet_routes = ["10.%d.0.0/16"]
    users         = ["group:platform-ops"]
  }
`, 100+r.index)
	}
	fmt.Fprintf(&b, `}

# Grants of the region in one resource, beside the module's.
resource "qtail_grants" "extra" {
  grants = {
    "%[1]s-ops-admin" = {
      src = ["group:platform-ops"]
      dst = ["tag:k8s-billing-%[1]s"]
      ip  = ["tcp:8080"]
    }
    "%[1]s-oncall" = {
      src = ["bob@example.com"]
      dst = ["tag:k8s-%[1]s"]
      ip  = ["tcp:80"]
    }
  }
  depends_on = [module.region]
}
`, r.name)
	return b.String()
}

// handWritten is the tailnet policy file the soak starts with: what the
// platform team wrote by hand (comments, groups, tag owners, a grant and a
// test). Every byte of it must stay as it is outside qtail's fragments.
func handWritten(regions []string) string {
	var owners strings.Builder
	for _, r := range regions {
		fmt.Fprintf(&owners, "\t\t%q: [\"tag:k8s-operator\"],\n", "tag:k8s-"+r)
		fmt.Fprintf(&owners, "\t\t%q: [\"tag:k8s-operator\"],\n", "tag:k8s-billing-"+r)
	}
	return `// Policy file of the soak tailnet, written by hand by the platform team.
// qtail adds its own fragments; it must keep every byte of this.
{
	// People, maintained by hand.
	"groups": {
		"group:platform-ops": ["alice@example.com", "bob@example.com"],
	},

	// The operators own the tags of their proxies.
	"tagOwners": {
		"tag:k8s-operator": [],
		"tag:k8s":          ["tag:k8s-operator"],
		"tag:k8s-billing":  ["tag:k8s-operator"],
` + owners.String() + `	},

	"grants": [
		// Platform operations reach the operators' API server proxies.
		{"src": ["group:platform-ops"], "dst": ["tag:k8s-operator"], "ip": ["tcp:443"]},
	],

	"tests": [
		// Carol never reaches an operator.
		{"src": "carol@example.com", "deny": ["tag:k8s-operator:443"]},
	],

	"ssh": [
		{
			"action": "check",
			"src":    ["autogroup:member"],
			"dst":    ["autogroup:self"],
			"users":  ["autogroup:nonroot", "root"],
		},
	],
}
`
}

// seedRegion reads a region's IDs from the sandbox's seed.
func seedRegion(seed sandbox.Seed, name string, index int, dir string) *region {
	s := seed.Regions[name]
	return &region{name: name, index: index, dir: dir, environmentID: s.EnvironmentID, apps: s.Applications}
}
