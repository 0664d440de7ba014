// Package badinput tries the mistakes a careless user (or a module that
// composes others) makes, on every resource, data source and the provider
// block, and checks that each is refused at plan, with no change to
// Qovery or the tailnet, and on the attribute that caused it.
//
// QTAIL_BADINPUT_TABLE=FILE writes the table of the cases (what is wrong,
// where it is refused, on which attribute) as Markdown.
package badinput_test

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"text/template"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/qtail/terraform-provider-qtail/internal/acctest"
	"github.com/qtail/terraform-provider-qtail/internal/manifest"
	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// fixture holds the IDs a case's configuration refers to.
type fixture struct {
	Org, Env, OtherEnv, App, OtherApp, ManifestsRepo, OperatorRepo, OperatorHost string
}

// badInput is one mistake.
type badInput struct {
	// block is the resource or data source type ("provider" for the
	// provider block); what says what is wrong.
	block, what string
	// config is a text/template over a fixture.
	config string
	// attr is the attribute whose line Terraform shows with the error,
	// as the configuration writes it; "" when the error is on the whole
	// block.
	attr string
	// want is a part of the error message.
	want string
	// operator installs an operator in the fixture's region first.
	operator bool
}

const gitChart = `chart = {
    git_repository = {
      url       = "https://github.com/qtail/terraform-provider-qtail.git"
      root_path = "/examples/charts/tailnet-manifests"
    }
  }`

func cases() []badInput {
	grant := func(body string) string {
		return "resource \"qtail_grant\" \"g\" {\n  name = \"ops\"\n  " + body + "\n}\n"
	}
	connector := func(body string) string {
		return "resource \"qtail_connector\" \"c\" {\n  environment_id = \"{{.Env}}\"\n  name = \"homelab\"\n  " + body + "\n}\n"
	}
	operator := func(body string) string {
		return "resource \"qtail_operator\" \"o\" {\n  environment_id = \"{{.Env}}\"\n  helm_repository_id = \"{{.OperatorRepo}}\"\n  create_oauth_client = true\n  " + body + "\n}\n"
	}
	exposure := func(body string) string {
		return "resource \"qtail_exposed_service\" \"e\" {\n  " + body + "\n}\n"
	}
	return []badInput{
		{block: "provider", what: "tailscale_tailnet is a URL", attr: "tailscale_tailnet", want: "a URL is not a tailnet",
			config: "provider \"qtail\" {\n  tailscale_tailnet = \"https://login.tailscale.com/admin\"\n}\n" + grant(`src = ["*"]
  dst = ["*"]
  ip = ["*"]`)},
		{block: "provider", what: "tailscale_tailnet has a path", attr: "tailscale_tailnet", want: "a tailnet name has no /",
			config: "provider \"qtail\" {\n  tailscale_tailnet = \"example.com/acl\"\n}\n" + grant(`src = ["*"]
  dst = ["*"]
  ip = ["*"]`)},

		{block: "qtail_grant", what: "name with a space", attr: "name", want: "names start with a letter or a digit",
			config: `resource "qtail_grant" "g" {
  name = "ops to db"
  src  = ["*"]
  dst  = ["*"]
  ip   = ["*"]
}`},
		{block: "qtail_grant", what: "empty src", attr: "src", want: "at least 1",
			config: grant(`src = []
  dst = ["*"]
  ip = ["*"]`)},
		{block: "qtail_grant", what: "src given as jsonencode of a list", attr: "src", want: "is JSON text, not one value",
			config: grant(`src = [jsonencode(["tag:a", "tag:b"])]
  dst = ["*"]
  ip = ["*"]`)},
		{block: "qtail_grant", what: "two selectors in one src string", attr: "src", want: "separated by commas",
			config: grant(`src = ["tag:a,tag:b"]
  dst = ["*"]
  ip = ["*"]`)},
		{block: "qtail_grant", what: "a port in dst", attr: "dst", want: "put ports in",
			config: grant(`src = ["*"]
  dst = ["tag:web:443"]
  ip = ["*"]`)},
		{block: "qtail_grant", what: "dst 0.0.0.0/0", attr: "dst", want: "autogroup:internet",
			config: grant(`src = ["*"]
  dst = ["0.0.0.0/0"]
  ip = ["*"]`)},
		{block: "qtail_grant", what: "port out of range", attr: "ip", want: "invalid first integer",
			config: grant(`src = ["*"]
  dst = ["*"]
  ip = ["tcp:70000"]`)},
		{block: "qtail_grant", what: "neither ip nor app (the error is on ip, absent from the configuration)", attr: "", want: "Missing Access",
			config: grant(`src = ["*"]
  dst = ["*"]`)},
		{block: "qtail_grant", what: "app is not JSON", attr: "app", want: "JSON object",
			config: grant(`src = ["*"]
  dst = ["*"]
  app = "tailscale.com/cap/kubernetes"`)},
		{block: "qtail_grant", what: "via is a group", attr: "via", want: "via can only be a tag",
			config: grant(`src = ["*"]
  dst = ["*"]
  ip = ["*"]
  via = ["group:ops"]`)},
		{block: "qtail_grant", what: "src_posture without posture:", attr: "src_posture", want: "posture:NAME",
			config: grant(`src = ["*"]
  dst = ["*"]
  ip = ["*"]
  src_posture = ["latest-os"]`)},
		{block: "qtail_grant", what: "src tag with no owner in the policy", attr: "src", want: "tag not found",
			config: grant(`src = ["tag:nobody-owns-this"]
  dst = ["*"]
  ip = ["*"]`)},
		{block: "qtail_grant", what: "dst group missing from the policy", attr: "dst", want: "group not found",
			config: grant(`src = ["*"]
  dst = ["group:ghosts"]
  ip = ["*"]`)},
		{block: "qtail_grant", what: "two grants with one name", attr: "", want: "Two Resources Claim One Policy Entry",
			config: grant(`src = ["*"]
  dst = ["*"]
  ip = ["*"]`) + `resource "qtail_grant" "h" {
  name = "ops"
  src  = ["*"]
  dst  = ["*"]
  ip   = ["tcp:22"]
}`},

		{block: "qtail_tag_owner", what: "tag without tag:", attr: "tag", want: "tag:",
			config: `resource "qtail_tag_owner" "t" {
  tag    = "k8s"
  owners = []
}`},
		{block: "qtail_tag_owner", what: "owner is a tag nobody declares", attr: "owners", want: "tag not found",
			config: `resource "qtail_tag_owner" "t" {
  tag    = "tag:web"
  owners = ["group:platform-ops", "tag:undeclared"]
}`},
		{block: "qtail_tag_owner", what: "owner is JSON", attr: "owners", want: "is JSON text",
			config: `resource "qtail_tag_owner" "t" {
  tag    = "tag:web"
  owners = [jsonencode(["group:admins"])]
}`},

		{block: "qtail_auto_approver", what: "route with host bits", attr: "route", want: "",
			config: `resource "qtail_auto_approver" "a" {
  route     = "10.0.0.1/8"
  approvers = ["group:admins"]
}`},
		{block: "qtail_auto_approver", what: "approver tag with no owner", attr: "approvers", want: "tag not found",
			config: `resource "qtail_auto_approver" "a" {
  route     = "10.20.0.0/16"
  approvers = ["group:platform-ops", "tag:unowned"]
}`},
		{block: "qtail_auto_approver", what: "two exit-node approver resources", attr: "", want: "Two Resources Claim One Policy Entry",
			config: `resource "qtail_auto_approver" "a" {
  exit_node = true
  approvers = ["group:platform-ops"]
}
resource "qtail_auto_approver" "b" {
  exit_node = true
  approvers = ["alice@example.com"]
}`},

		{block: "qtail_policy_test", what: "accept without a port", attr: "accept", want: "port",
			config: `resource "qtail_policy_test" "p" {
  name   = "ops"
  src    = "group:admins"
  accept = ["tag:db"]
}`},
		{block: "qtail_policy_test", what: "src is a wildcard", attr: "src", want: "wildcards",
			config: `resource "qtail_policy_test" "p" {
  name   = "ops"
  src    = "*"
  accept = ["tag:db:22"]
}`},

		{block: "qtail_helm_repository", what: "http:// URL", attr: "url", want: "over HTTPS only",
			config: `resource "qtail_helm_repository" "r" {
  organization_id = "{{.Org}}"
  name            = "ts"
  url             = "http://pkgs.tailscale.com/helmcharts"
}`},
		{block: "qtail_helm_repository", what: "organization that does not exist", attr: "organization_id", want: "Organization Not Found",
			config: `resource "qtail_helm_repository" "r" {
  organization_id = "00000000-0000-4000-8000-000000000000"
  name            = "ts"
}`},
		{block: "qtail_helm_repository", what: "organization ID is a name", attr: "organization_id", want: "Qovery ID",
			config: `resource "qtail_helm_repository" "r" {
  organization_id = "acme"
  name            = "ts"
}`},

		{block: "qtail_operator", what: "chart_version latest", attr: "chart_version", want: "exact",
			config: operator(`chart_version = "latest"
  hostname = "ts-operator"`)},
		{block: "qtail_operator", what: "chart version not published", attr: "chart_version", want: "Chart Version Not Published",
			config: operator(`chart_version = "1.0.99"
  hostname = "ts-operator"`)},
		{block: "qtail_operator", what: "all-digit hostname", attr: "hostname", want: "YAML integer",
			config: operator(`chart_version = "1.102.4"
  hostname = "12345"`)},
		{block: "qtail_operator", what: "default tag without tag:", attr: "default_tags", want: "tag:",
			config: operator(`chart_version = "1.102.4"
  hostname = "ts-operator"
  default_tags = ["k8s-operator"]`)},
		{block: "qtail_operator", what: "extra_values set workload identity (oauth.audience)", attr: "extra_values", want: "set oauth_audience",
			config: operator(`chart_version = "1.102.4"
  hostname = "ts-operator"
  extra_values = "oauth:\n  audience: sts.example.com\n"`)},
		{block: "qtail_operator", what: "oauth_audience with create_oauth_client", attr: "oauth_audience", want: "cannot be set with create_oauth_client = true",
			config: operator(`chart_version = "1.102.4"
  hostname = "ts-operator"
  oauth_audience = "sts.example.com"`)},
		{block: "qtail_operator", what: "blank oauth_audience", attr: "oauth_audience", want: "blank",
			config: operator(`chart_version = "1.102.4"
  hostname = "ts-operator"
  oauth_audience = " "`)},
		{block: "qtail_operator", what: "extra_values set the Funnel annotation", attr: "extra_values", want: "Tailscale Funnel",
			config: operator(`chart_version = "1.102.4"
  hostname = "ts-operator"
  extra_values = "operatorConfig:\n  podAnnotations:\n    tailscale.com/funnel: \"true\"\n"`)},
		{block: "qtail_operator", what: "extra_values is not YAML", attr: "extra_values", want: "YAML",
			config: operator(`chart_version = "1.102.4"
  hostname = "ts-operator"
  extra_values = "a: [b"`)},
		{block: "qtail_operator", what: "malformed timeout", attr: "timeouts.create", want: "decimal numbers",
			config: operator(`chart_version = "1.102.4"
  hostname = "ts-operator"
  timeouts = { create = "twenty minutes" }`)},
		{block: "qtail_operator", what: "timeout under a second", attr: "timeouts.create", want: "use at least 1s",
			config: operator(`chart_version = "1.102.4"
  hostname = "ts-operator"
  timeouts = { create = "10ms" }`)},
		{block: "qtail_operator", what: "default tags with no owner in the policy", attr: "default_tags", want: "Missing Tag Owners",
			config: operator(`chart_version = "1.102.4"
  hostname = "ts-operator"
  default_tags = ["tag:unowned-operator"]`)},

		{block: "qtail_exposed_service", what: "hostname with capitals and underscore", attr: "hostname", want: "",
			config: exposure(`application_id = "{{.App}}"
  hostname = "Billing_API"`), operator: true},
		{block: "qtail_exposed_service", what: "application ID is a name", attr: "application_id", want: "Qovery ID",
			config: exposure(`application_id = "billing-api"
  hostname = "billing"`), operator: true},
		{block: "qtail_exposed_service", what: "hostname is the operator's device", attr: "hostname", want: "operator",
			config: exposure(`application_id = "{{.App}}"
  hostname = "{{.OperatorHost}}"`), operator: true},
		{block: "qtail_exposed_service", what: "no operator on the application's cluster", attr: "application_id", want: "No Tailscale Operator on the Cluster",
			config: exposure(`application_id = "{{.OtherApp}}"
  hostname = "billing-eu"`), operator: true},
		{block: "qtail_exposed_service", what: "one application exposed twice", attr: "application_id", want: "Exposed Twice",
			config: exposure(`application_id = "{{.App}}"
  hostname = "billing-a"`) + `resource "qtail_exposed_service" "f" {
  application_id = "{{.App}}"
  hostname       = "billing-b"
}`, operator: true},

		{block: "qtail_exposed_service", what: "a ProxyGroup no Helm service renders", attr: "proxy_group", want: "ProxyGroup Not on the Cluster",
			config: exposure(`application_id = "{{.App}}"
  hostname = "billing"
  proxy_group = "ingress"
  wait_for_device = false`), operator: true},
		{block: "qtail_egress_service", what: "a ProxyGroup no Helm service renders", attr: "proxy_group", want: "ProxyGroup Not on the Cluster",
			config: `resource "qtail_egress_service" "e" {
  environment_id = "{{.Env}}"
  name = "db"
  tailnet_fqdn = "db.tail1234.ts.net"
  ports = ["tcp:5432"]
  proxy_group = "egress"
  ` + gitChart + `
}`, operator: true},

		{block: "qtail_ingress", what: "a backend port the application does not declare", attr: "backend_port", want: "Backend Port Not Declared",
			config: `resource "qtail_ingress" "i" {
  environment_id = "{{.Env}}"
  application_id = "{{.App}}"
  hostname = "billing-https"
  backend_port = 9000
  ` + gitChart + `
}`, operator: true},
		{block: "qtail_ingress", what: "an environment other than the application's", attr: "environment_id", want: "Ingress Outside the Application's Environment",
			config: `resource "qtail_ingress" "i" {
  environment_id = "{{.OtherEnv}}"
  application_id = "{{.App}}"
  hostname = "billing-https"
  backend_port = 8080
  ` + gitChart + `
}`, operator: true},
		{block: "qtail_ingress", what: "backend port out of range", attr: "backend_port", want: "",
			config: `resource "qtail_ingress" "i" {
  environment_id = "{{.Env}}"
  application_id = "{{.App}}"
  hostname = "billing-https"
  backend_port = 70000
  ` + gitChart + `
}`},

		{block: "qtail_connector", what: "Git chart over http://", attr: "chart.git_repository.url", want: "reach Git repositories over HTTPS only",
			config: connector(`chart = {
    git_repository = {
      url = "http://github.com/qtail/terraform-provider-qtail.git"
    }
  }
  exit_node = true`)},
		{block: "qtail_connector", what: "chart the repository does not publish", attr: "chart.helm_repository.chart_name", want: "Chart Not in the Repository",
			config: connector(`chart = {
    helm_repository = {
      repository_id = "{{.ManifestsRepo}}"
      chart_name    = "manifests"
      chart_version = "0.1.0"
    }
  }
  exit_node = true`), operator: true},
		{block: "qtail_connector", what: "chart version not published", attr: "chart.helm_repository.chart_version", want: "Chart Version Not Published",
			config: connector(`chart = {
    helm_repository = {
      repository_id = "{{.ManifestsRepo}}"
      chart_version = "9.9.9"
    }
  }
  exit_node = true`), operator: true},
		{block: "qtail_connector", what: "11 replicas", attr: "replicas", want: "between 0 and 10",
			config: connector(gitChart + `
  exit_node = true
  hostname_prefix = "homelab"
  replicas = 11`)},
		{block: "qtail_connector", what: "hostname with 2 replicas", attr: "replicas", want: "Hostname With Several Replicas",
			config: connector(gitChart + `
  exit_node = true
  hostname = "homelab"
  replicas = 2`)},
		{block: "qtail_connector", what: "route with host bits", attr: "subnet_routes", want: "",
			config: connector(gitChart + `
  subnet_routes = ["10.0.0.1/8"]`)},
		{block: "qtail_connector", what: "no operator on the cluster", attr: "environment_id", want: "No Tailscale Operator on the Cluster",
			config: connector(gitChart + `
  exit_node = true`)},

		{block: "qtail_proxy_group", what: "unknown type", attr: "type", want: "ingress",
			config: `resource "qtail_proxy_group" "p" {
  environment_id = "{{.Env}}"
  name = "ingress"
  type = "both"
  ` + gitChart + `
}`},
		{block: "qtail_proxy_group", what: "kube-apiserver without kube_apiserver", attr: "type", want: "Missing kube_apiserver",
			config: `resource "qtail_proxy_group" "p" {
  environment_id = "{{.Env}}"
  name = "kubeapi"
  type = "kube-apiserver"
  ` + gitChart + `
}`},
		{block: "qtail_proxy_group", what: "kube_apiserver mode not auth or noauth", attr: "kube_apiserver.mode", want: "the mode must be",
			config: `resource "qtail_proxy_group" "p" {
  environment_id = "{{.Env}}"
  name = "kubeapi"
  type = "kube-apiserver"
  kube_apiserver = { mode = "true" }
  ` + gitChart + `
}`},
		{block: "qtail_dns_config", what: "headless cluster_ip", attr: "cluster_ip", want: "headless",
			config: `resource "qtail_dns_config" "d" {
  environment_id = "{{.Env}}"
  cluster_ip = "None"
  ` + gitChart + `
}`},
		{block: "qtail_dns_config", what: "image_repo with a tag", attr: "image_repo", want: "carries a tag",
			config: `resource "qtail_dns_config" "d" {
  environment_id = "{{.Env}}"
  image_repo = "tailscale/k8s-nameserver:stable"
  ` + gitChart + `
}`},
		{block: "qtail_dns_config", what: "no operator on the cluster", attr: "environment_id", want: "No Tailscale Operator on the Cluster",
			config: `resource "qtail_dns_config" "d" {
  environment_id = "{{.Env}}"
  ` + gitChart + `
}`},
		{block: "qtail_egress_service", what: "port without protocol", attr: "ports", want: "",
			config: `resource "qtail_egress_service" "e" {
  environment_id = "{{.Env}}"
  name = "db"
  tailnet_fqdn = "db.tail1234.ts.net"
  ports = ["5432"]
  ` + gitChart + `
}`},
		{block: "qtail_egress_service", what: "tailnet_ip not an IP address", attr: "tailnet_ip", want: "",
			config: `resource "qtail_egress_service" "e" {
  environment_id = "{{.Env}}"
  name = "db"
  tailnet_ip = "not-an-ip"
  ports = ["tcp:5432"]
  ` + gitChart + `
}`},

		{block: "data.qtail_device", what: "empty hostname", attr: "hostname", want: "",
			config: `data "qtail_device" "d" {
  hostname = ""
}`},
		{block: "data.qtail_route_status", what: "connector ID is a name", attr: "connector_id", want: "Qovery ID",
			config: `data "qtail_route_status" "r" {
  connector_id = "homelab"
}`},
		{block: "data.qtail_egress_status", what: "source tag without tag:", attr: "source_tags", want: "tag",
			config: `data "qtail_egress_status" "r" {
  egress_service_id = "00000000-0000-4000-8000-000000000000"
  source_tags = ["k8s"]
}`},
	}
}

// result is one row of the table.
type result struct {
	block, what, attr, where string
}

func TestBadInputsAreRefusedAtPlanOnTheirAttribute(t *testing.T) {
	var mu sync.Mutex
	var rows []result
	for _, c := range cases() {
		t.Run(c.block+"/"+c.what, func(t *testing.T) {
			t.Parallel()
			env := acctest.New(t)
			f := newFixture(t, env, c.operator)
			var buf bytes.Buffer
			if err := template.Must(template.New("").Parse(c.config)).Execute(&buf, f); err != nil {
				t.Fatal(err)
			}
			env.Faults.ResetCalls()
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: env.Factories(),
				Steps: []resource.TestStep{{
					Config:      buf.String(),
					ExpectError: acctest.ErrorOn(c.attr, c.want),
				}},
			})
			calls := env.Faults.Calls()
			if changed := acctest.MutatingRoutes(calls); len(changed) > 0 {
				t.Errorf("the plan changed something: %v", changed)
			}
			where := "validation (no API call)"
			if n := total(calls); n > 0 {
				where = fmt.Sprintf("plan (%d API reads)", n)
			}
			attr := "the block"
			if c.attr != "" {
				attr = "`" + c.attr + "`"
			}
			mu.Lock()
			rows = append(rows, result{c.block, c.what, attr, where})
			mu.Unlock()
		})
	}
	t.Cleanup(func() { writeTable(t, rows) })
}

func total(calls map[string]int) int {
	n := 0
	for route, c := range calls {
		if !strings.Contains(route, "/oauth/token") {
			n += c
		}
	}
	return n
}

func newFixture(t *testing.T, env *acctest.Env, operator bool) fixture {
	t.Helper()
	seed := env.Seed()
	f := fixture{
		Org:      seed.OrganizationID,
		Env:      seed.Regions[acctest.Region].EnvironmentID,
		OtherEnv: seed.Regions["eu-west-3"].EnvironmentID,
		App:      env.ApplicationID(t, acctest.Region, "billing-api"),
		OtherApp: env.ApplicationID(t, "eu-west-3", "billing-api"),
	}
	q := env.QoveryClient(t)
	ctx := acctest.Background(t)
	repo, err := q.CreateHelmRepository(ctx, f.Org, &qovery.HelmRepositoryRequest{
		Name: "manifests", Kind: qovery.HelmRepositoryKindHTTPS, URL: manifest.ManifestsChartRepositoryURL,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.ManifestsRepo = repo.ID
	f.OperatorRepo = env.CreateOperatorRepository(t, "tailscale")
	if operator {
		op := env.InstallOperator(t, acctest.Region)
		f.OperatorHost = op.Hostname
	}
	return f
}

func writeTable(t *testing.T, rows []result) {
	file := os.Getenv("QTAIL_BADINPUT_TABLE")
	if file == "" || t.Failed() {
		return
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].block != rows[j].block {
			return rows[i].block < rows[j].block
		}
		return rows[i].what < rows[j].what
	})
	var b strings.Builder
	b.WriteString("| Block | Bad input | Refused at | On |\n|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.block, r.what, r.where, r.attr)
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Error(err)
	}
}
