// Command terraform-provider-qtail serves the qtail Terraform provider.
//
// Run as `terraform-provider-qtail review [flags] PLAN.json...` it reviews
// saved plans instead (see internal/review); Terraform never starts it
// with that argument. `terraform-provider-qtail -version` prints the
// version the release build set.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime/debug"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/qtail/terraform-provider-qtail/internal/provider"
	"github.com/qtail/terraform-provider-qtail/internal/review"
)

// version is set by the release build (goreleaser ldflags).
var version = "dev"

// providerOptions are the provider's settings: the production defaults,
// which a build with the bench tag changes (see main_bench.go).
var providerOptions provider.Options

// stopProfile ends the CPU profile that a build with the pprof tag starts
// (see main_pprof.go).
var stopProfile = func() {}

func main() {
	if len(os.Args) > 1 && os.Args[1] == review.Command {
		os.Exit(review.Main(context.Background(), os.Args[2:], review.Env{
			Version: version, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv,
		}))
	}

	var debug, showVersion bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.BoolVar(&showVersion, "version", false, "print the provider's version and exit")
	flag.Parse()
	if showVersion {
		fmt.Println("terraform-provider-qtail " + version)
		return
	}

	quietLogs(os.Environ(), os.Setenv)
	tuneGC(os.Getenv)
	var opts []tf6server.ServeOpt
	if debug {
		opts = append(opts, tf6server.WithManagedDebug())
	}
	server, err := provider.Server(provider.NewWithOptions(version, providerOptions))()
	if err == nil {
		err = tf6server.Serve("registry.terraform.io/qtail/qtail", func() tfprotov6.ProviderServer { return server }, opts...)
	}
	stopProfile()
	if err != nil {
		log.Fatal(err)
	}
}

// providerGCPercent is the garbage collector's target of the provider
// process, which lives for one Terraform command and allocates mostly
// short-lived values: converting a resource of a thousand grants between
// Terraform's values and the framework's allocates far more than it keeps,
// and at the default of 100 the collector takes a fifth of the time. A
// GOGC variable overrides it.
const providerGCPercent = 400

// tuneGC sets the collector's target to providerGCPercent unless GOGC is
// set.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(providerGCPercent)
	}
}

// sdkLogVariables are the variables that set the log levels of the plugin
// SDK's loggers and of the provider's own.
var sdkLogVariables = []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_PROVIDER"}

// quietLogs turns the provider's logs off when Terraform's logging is
// off: no TF_LOG* variable is set, so Terraform drops every line a
// provider writes, yet the plugin SDK would still format and send each
// one (about a fifth of the time of a plan of hundreds of resources). With
// any TF_LOG* variable set, nothing changes.
func quietLogs(environ []string, setenv func(key, value string) error) {
	for _, kv := range environ {
		if strings.HasPrefix(kv, "TF_LOG") {
			return
		}
	}
	for _, v := range sdkLogVariables {
		_ = setenv(v, "OFF")
	}
}
