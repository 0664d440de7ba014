// Package acctest wires provider factories to fresh in-process fakes.
package acctest

import (
	_ "github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	_ "github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	_ "github.com/hashicorp/terraform-plugin-log/tflog"
	_ "github.com/hashicorp/terraform-plugin-testing/helper/resource"
	_ "github.com/tailscale/hujson"
	_ "go.yaml.in/yaml/v3"
	_ "golang.org/x/oauth2/clientcredentials"
	_ "tailscale.com/client/tailscale/v2"
)
