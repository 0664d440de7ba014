package review

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/tailnet"
)

// Command is the name of the subcommand of the provider binary.
const Command = "review"

// Env is what the command gets from its process.
type Env struct {
	// Version is the provider's version, sent in the User-Agent.
	Version        string
	Stdout, Stderr io.Writer
	// Getenv reads the environment (os.Getenv).
	Getenv func(string) string
}

// Usage is the command's help text.
const Usage = `Usage: terraform-provider-qtail review [flags] PLAN.json...

Reviews saved Terraform plans of qtail configurations before they are
applied: the fragments of the tailnet policy file they add, change and
remove (with a diff of the policy file), who gains or loses access to the
exposed services, routes and devices they touch (computed by Tailscale's
/acl/preview on the current and the planned policy file), the verdict of
/acl/validate on the planned policy file (which runs its tests), and
findings. Give one plan per Terraform root (one per region, say); they are
reviewed together, as they share one policy file:

  terraform plan -out=plan.out
  terraform show -json plan.out > plan.json
  terraform-provider-qtail review plan.json

A plan that fails (Tailscale refuses its policy change, say) can still be
reviewed: give its machine-readable log instead of its plan,

  terraform plan -json -out=plan.out > plan.failed.json

and the report gives each of its errors as a finding, on the resource
Terraform names, and the exit code is 1.

The Tailscale credentials are the provider's environment variables:
TAILSCALE_API_KEY, or TAILSCALE_OAUTH_CLIENT_ID with
TAILSCALE_OAUTH_CLIENT_SECRET, or TAILSCALE_OAUTH_CLIENT_ID (a federated
identity) with TAILSCALE_IDENTITY_TOKEN, or with TAILSCALE_AUDIENCE to use
the identity token of the running GitHub Actions job; and TAILSCALE_TAILNET
and TAILSCALE_BASE_URL. The review reads the policy file, validates and
previews policies, and lists devices: the scopes policy_file:read and
devices:core:read are enough.

Exit codes:
  0  no access change (the policy file may still change: tests, tag owners)
  2  access changes: someone gains or loses access
  1  error: the review could not be made, a plan failed, or Tailscale
     refuses the planned policy file (the apply would fail)

Flags:
`

// flags declares the command's flags.
type flags struct {
	format  string
	out     string
	timeout time.Duration
}

// newFlagSet returns the command's flag set; the CI examples are checked
// against it.
func newFlagSet(f *flags, output io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(Command, flag.ContinueOnError)
	fs.SetOutput(output)
	fs.StringVar(&f.format, "format", "markdown", "report format: markdown (for a pull request comment) or json")
	fs.StringVar(&f.out, "o", "", "write the report to this file instead of standard output")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Minute, "give up on the Tailscale API after this long")
	fs.Usage = func() {}
	return fs
}

// printUsage writes the help text and the flags to w.
func printUsage(fs *flag.FlagSet, w io.Writer) {
	_, _ = io.WriteString(w, Usage)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// Main runs the command with the arguments that follow "review" and
// returns its exit code.
func Main(ctx context.Context, args []string, env Env) int {
	var f flags
	fs := newFlagSet(&f, env.Stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs, env.Stdout)
			return ExitNoAccessChange
		}
		printUsage(fs, env.Stderr)
		return ExitError
	}
	fail := func(err error) int {
		fmt.Fprintf(env.Stderr, "qtail review: %v\n", err)
		return ExitError
	}
	if f.format != "markdown" && f.format != "json" {
		return fail(fmt.Errorf("-format %q: use markdown or json", f.format))
	}
	if fs.NArg() == 0 {
		printUsage(fs, env.Stderr)
		return fail(errors.New("give at least one plan, written by `terraform show -json PLANFILE`"))
	}
	var plans []Plan
	var failed []FailedPlan
	for _, path := range fs.Args() {
		p, fp, err := ReadInput(path)
		if err != nil {
			return fail(err)
		}
		if fp != nil {
			failed = append(failed, *fp)
		} else {
			plans = append(plans, p)
		}
	}
	cfg := tailnet.ConfigFromEnv(env.Getenv, nil)
	cfg.UserAgent = "terraform-provider-qtail/" + env.Version + " (review)"
	client, err := tailnet.New(cfg)
	if err != nil {
		return fail(fmt.Errorf("%v (the review reads the same environment variables as the provider)", err))
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	rep, err := Run(ctx, client, plans)
	if err != nil {
		return fail(err)
	}
	rep.AddFailedPlans(failed)
	rep.Tailnet = client.Tailnet()
	var out []byte
	if f.format == "json" {
		if out, err = rep.JSON(); err != nil {
			return fail(err)
		}
	} else {
		out = []byte(rep.Markdown())
	}
	if f.out == "" {
		if _, err := env.Stdout.Write(out); err != nil {
			return fail(err)
		}
	} else if err := os.WriteFile(f.out, out, 0o644); err != nil {
		return fail(err)
	}
	code := rep.ExitCode()
	fmt.Fprintf(env.Stderr, "qtail review: %s (exit code %d)\n", summary(rep), code)
	return code
}

// summary is the one-line outcome for the logs.
func summary(r *Report) string {
	if len(r.FailedPlans) > 0 {
		return plural(len(r.FailedPlans), "plan", "plans") + " failed"
	}
	if !r.Validation.Passed {
		return "Tailscale refuses the planned policy file"
	}
	if r.AccessChanged {
		return "access changes"
	}
	return "no access change"
}
