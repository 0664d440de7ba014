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

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/qtail/terraform-provider-qtail/internal/provider"
	"github.com/qtail/terraform-provider-qtail/internal/review"
)

// version is set by the release build (goreleaser ldflags).
var version = "dev"

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

	var opts []tf6server.ServeOpt
	if debug {
		opts = append(opts, tf6server.WithManagedDebug())
	}
	server, err := provider.Server(provider.New(version))()
	if err == nil {
		err = tf6server.Serve("registry.terraform.io/qtail/qtail", func() tfprotov6.ProviderServer { return server }, opts...)
	}
	stopProfile()
	if err != nil {
		log.Fatal(err)
	}
}
