// Command benchdeploy measures what the Qovery deployments of one region
// cost: a configuration of an operator, a connector, two ProxyGroups and
// five exposed applications in one environment, applied with a real
// Terraform CLI (through a dev_overrides CLI configuration) against a
// sandbox served on loopback whose deployments take -deploy-time and queue
// per environment, as the environment's deployment queue does.
//
// It applies the configuration twice, each time in a fresh sandbox: with
// each service deployed on its own (the provider's gathering turned off),
// then with the deployments of an environment gathered into one action.
// For each it prints the wall time of the apply, the Qovery deploy actions
// per environment and dependency level (the operator is the first level;
// what needs it, the second), and the floor: one deployment time per
// level. Target: the gathered apply within 1.3 times the floor, and one
// deploy action per environment per level.
//
//	go run ./tools/benchdeploy [-deploy-time 10s] [-latency 20ms] [-poll 1s] [-parallelism 10]
//
// The provider is built with the bench tag, which reads the poll interval
// of its waits from the environment (-poll): the simulated deployments take
// seconds where real ones take minutes, and the production interval of 5s
// would measure the interval rather than the deployments.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/qoveryapi"
	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
	"github.com/qtail/terraform-provider-qtail/tools/internal/tfrun"
)

type options struct {
	deployTime  time.Duration
	latency     time.Duration
	poll        time.Duration
	parallelism int
	terraform   string
	keep        bool
}

func main() {
	var o options
	flag.DurationVar(&o.deployTime, "deploy-time", 10*time.Second, "how long a simulated Qovery deployment takes")
	flag.DurationVar(&o.latency, "latency", 20*time.Millisecond, "latency the sandbox adds to every API call")
	flag.DurationVar(&o.poll, "poll", time.Second, "the provider's poll interval while it waits")
	flag.IntVar(&o.parallelism, "parallelism", 10, "terraform -parallelism")
	flag.StringVar(&o.terraform, "terraform", "", "terraform binary (default: the one on PATH)")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory")
	flag.Parse()
	log.SetFlags(0)
	if err := run(o); err != nil {
		log.Fatalf("benchdeploy: %v", err)
	}
}

// levels is the number of dependency levels that deploy: the operator,
// then what needs it.
const levels = 2

// exposures is the number of exposed applications.
const exposures = 5

// target is the most the gathered apply may take, as a multiple of the
// floor.
const target = 1.3

// result is what one apply cost.
type result struct {
	name string
	wall time.Duration
	// actions counts the deploy actions by environment and level.
	actions map[string][levels]int
	// services counts the services deployed by level.
	services [levels]int
}

func run(o options) error {
	tf, err := tfrun.Terraform(o.terraform)
	if err != nil {
		return err
	}
	o.terraform = tf
	root, err := tfrun.ModuleRoot("run benchdeploy from inside the qtail module (make bench-deploy)")
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "qtail-benchdeploy-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Printf("work directory: %s\n", work)
	} else {
		defer func() { _ = os.RemoveAll(work) }()
	}
	ctx := context.Background()
	rc, err := setup(ctx, root, work)
	if err != nil {
		return err
	}
	var results []result
	for _, c := range []struct {
		name    string
		batched bool
	}{{"each service on its own (before)", false}, {"gathered per environment (after)", true}} {
		fmt.Printf("applying: %s ...\n", c.name)
		r, err := apply(ctx, o, rc, filepath.Join(work, fmt.Sprint(len(results))), c.batched)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		r.name = c.name
		results = append(results, r)
	}
	if !report(os.Stdout, o, results) {
		return errors.New("a target was missed")
	}
	return nil
}

// setup builds the provider with the bench tag and writes the CLI
// configuration.
func setup(ctx context.Context, root, work string) (string, error) {
	bin := filepath.Join(work, "bin")
	fmt.Println("building the provider ...")
	if err := tfrun.BuildProvider(ctx, root, bin, "bench"); err != nil {
		return "", err
	}
	rc := filepath.Join(work, "terraformrc")
	return rc, tfrun.WriteCLIConfig(rc, map[string]string{"qtail/qtail": bin})
}

// apply serves a fresh sandbox, applies the configuration and reads the
// deploy actions the fake ran.
func apply(ctx context.Context, o options, rc, dir string, batched bool) (result, error) {
	var r result
	world, err := sandbox.New(sandbox.Options{Latency: o.latency, DeployTime: o.deployTime, QueuePerEnvironment: true})
	if err != nil {
		return r, err
	}
	defer world.Qovery.Close()
	region := sandbox.Regions[0]
	seed := world.Seed()
	env := seed.Regions[region].EnvironmentID
	apps := []string{seed.Regions[region].Applications["billing-api"], seed.Regions[region].Applications["web"]}
	for i := len(apps); i < exposures; i++ {
		id, err := world.Qovery.SeedApplication(env, fmt.Sprintf("app-%d", i+1), qoveryapi.Port{Name: "http", InternalPort: 8080, Protocol: "HTTP"})
		if err != nil {
			return r, err
		}
		apps = append(apps, id)
	}
	base, stop, err := tfrun.Serve(ctx, world.Handler())
	if err != nil {
		return r, err
	}
	defer stop()

	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config(seed.OrganizationID, env, apps)), 0o600); err != nil {
		return r, err
	}
	settings := world.Env(base)
	settings["QTAIL_BENCH_POLL_INTERVAL"] = o.poll.String()
	if !batched {
		settings["QTAIL_BENCH_DEPLOY_BATCH"] = "off"
	}
	start := time.Now()
	code, out, err := tfrun.Run(ctx, o.terraform, dir, tfrun.Env(rc, settings), "apply", "-auto-approve", "-input=false", fmt.Sprintf("-parallelism=%d", o.parallelism))
	r.wall = time.Since(start)
	_ = os.WriteFile(filepath.Join(dir, "apply.log"), out, 0o600)
	if err == nil && code != 0 {
		err = fmt.Errorf("exit status %d", code)
	}
	if err != nil {
		return r, fmt.Errorf("terraform apply: %w:\n%s", err, tfrun.Tail(out, 40))
	}
	// The operator's Helm service is the first level; the rest need it.
	operators := map[string]bool{}
	world.Qovery.Do(func(st *qoveryapi.State) {
		for id, h := range st.Helms {
			if h.Source.Repository != nil && h.Source.Repository.ChartName == qoveryapi.TailscaleOperatorChart {
				operators[id] = true
			}
		}
	})
	r.actions = map[string][levels]int{}
	for _, a := range world.Qovery.Actions() {
		if a.Kind != "DEPLOY" {
			continue
		}
		level := 1
		if len(a.Services) == 1 && operators[a.Services[0]] {
			level = 0
		}
		counts := r.actions[a.EnvironmentID]
		counts[level]++
		r.actions[a.EnvironmentID] = counts
		r.services[level] += len(a.Services)
	}
	return r, nil
}

// report prints the results and reports whether the targets are met.
func report(w *os.File, o options, results []result) bool {
	floor := time.Duration(levels) * o.deployTime
	fmt.Fprintf(w, "\none region: an operator, a connector, two ProxyGroups and %d exposed applications in one environment\n", exposures)
	fmt.Fprintf(w, "deployments take %s and queue per environment; poll interval %s; latency %s; floor %s (%d levels x %s)\n\n",
		o.deployTime, o.poll, o.latency, floor, levels, o.deployTime)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "apply\twall\tx floor\tdeploy actions per environment (level 1 / level 2)\tservices deployed (level 1 / level 2)")
	ok := true
	for i, r := range results {
		var envs []string
		for env, c := range r.actions {
			envs = append(envs, fmt.Sprintf("%s: %d / %d", env[:8], c[0], c[1]))
		}
		sort.Strings(envs)
		ratio := float64(r.wall) / float64(floor)
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%s\t%d / %d\n", r.name, r.wall.Round(10*time.Millisecond), ratio, strings.Join(envs, ", "), r.services[0], r.services[1])
		if i == len(results)-1 {
			if ratio > target {
				ok = false
			}
			for _, c := range r.actions {
				if c[0] != 1 || c[1] != 1 {
					ok = false
				}
			}
		}
	}
	_ = tw.Flush()
	verdict := "met"
	if !ok {
		verdict = "MISSED"
	}
	fmt.Fprintf(w, "\ntarget (gathered): wall within %.1fx the floor, one deploy action per environment per level: %s\n", target, verdict)
	return ok
}

// config is the region's configuration.
func config(orgID, envID string, apps []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `terraform {
  required_providers {
    qtail = { source = "qtail/qtail" }
  }
}

provider "qtail" {}

resource "qtail_tag_owner" "k8s_operator" {
  tag    = "tag:k8s-operator"
  owners = []
}

resource "qtail_tag_owner" "k8s" {
  tag    = "tag:k8s"
  owners = [qtail_tag_owner.k8s_operator.tag]
}

resource "qtail_helm_repository" "tailscale" {
  organization_id = %[1]q
  name            = "tailscale"
}

resource "qtail_helm_repository" "qtail" {
  organization_id = %[1]q
  name            = "qtail"
  url             = "https://qtail.github.io/terraform-provider-qtail"
}

resource "qtail_operator" "this" {
  environment_id      = %[2]q
  helm_repository_id  = qtail_helm_repository.tailscale.id
  chart_version       = "1.102.4"
  hostname            = "tailscale-operator-bench"
  default_tags        = [qtail_tag_owner.k8s_operator.tag]
  proxy_default_tags  = [qtail_tag_owner.k8s.tag]
  create_oauth_client = true
}

locals {
  chart = {
    helm_repository = {
      repository_id = qtail_helm_repository.qtail.id
      chart_version = "0.1.0"
    }
  }
}

resource "qtail_connector" "this" {
  environment_id = qtail_operator.this.environment_id
  operator_id    = qtail_operator.this.id
  name           = "bench"
  chart          = local.chart
  hostname       = "bench-connector"
  subnet_routes  = ["10.244.0.0/16"]
  tags           = [qtail_tag_owner.k8s.tag]
}

resource "qtail_proxy_group" "ingress" {
  environment_id  = qtail_operator.this.environment_id
  operator_id     = qtail_operator.this.id
  name            = "ingress"
  type            = "ingress"
  chart           = local.chart
  hostname_prefix = "bench-ingress"
  replicas        = 2
}

resource "qtail_proxy_group" "egress" {
  environment_id  = qtail_operator.this.environment_id
  operator_id     = qtail_operator.this.id
  name            = "egress"
  type            = "egress"
  chart           = local.chart
  hostname_prefix = "bench-egress"
}
`, orgID, envID)
	for i, app := range apps {
		fmt.Fprintf(&b, `
resource "qtail_exposed_service" "app_%[1]d" {
  application_id = %[2]q
  hostname       = "bench-app-%[1]d"
  operator_id    = qtail_operator.this.id
}
`, i+1, app)
	}
	return b.String()
}
