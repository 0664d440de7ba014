package cluster

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/policy"
)

// TagsCheck asks whether the operator of a cluster owns the tags of the
// devices that a planned resource makes it bring up.
type TagsCheck struct {
	Tags []string
	// At is the attribute that holds the tags.
	At path.Path
	// Device names the devices: "proxy", "connector".
	Device string
	// Resource names the resource being planned: "exposure", "connector".
	Resource string
	// Replicas is set when the operator mints one auth key per replica.
	Replicas bool
}

// CheckOperatorOwnsTags refuses each tag that the operator's tags do not
// own in the policy as it will be after this plan: the operator mints auth
// keys with its own OAuth client, which can only apply tags its tag owns.
// The error shows the qtail_tag_owner that would fix it.
func CheckOperatorOwnsTags(ctx context.Context, c *conn.Clients, ops *Lookup, check TagsCheck, diags *diag.Diagnostics) {
	if len(check.Tags) == 0 || c.TailnetOrNil() == nil {
		return
	}
	env := ops.Env
	op, err := ops.Operator(ctx)
	if err != nil {
		diags.AddWarning("Operator Lookup Failed", "qtail could not look for the Tailscale operator of cluster "+env.ClusterID+
			", and checks the tags against the default operator tag "+DefaultOperatorTag+": "+err.Error())
	}
	body, pd := c.PlannedPolicy(ctx)
	if pd.HasError() {
		for _, e := range pd.Errors() {
			diags.AddWarning("Tags Not Checked", "qtail could not check that the operator owns the tags: "+e.Summary()+". "+e.Detail())
		}
		return
	}
	doc, err := policy.Parse(body)
	if err != nil {
		diags.AddWarning("Tags Not Checked", "qtail could not parse the tailnet policy: "+err.Error())
		return
	}
	keys := "the " + check.Device + "'s auth key"
	if check.Replicas {
		keys += "s"
	}
	for _, tag := range check.Tags {
		owned, declared, owners := doc.TagOwnedBy(tag, op.Tags)
		if owned {
			continue
		}
		opTags := strings.Join(op.Tags, ", ")
		problem := fmt.Sprintf("%s is not declared in tagOwners, so the operator's tag %s does not own it", tag, opTags)
		if declared {
			problem = fmt.Sprintf("%s is owned by [%s] in tagOwners, not by the operator's tag %s", tag, strings.Join(owners, ", "), opTags)
		}
		diags.AddAttributeError(check.At, "Tag Not Owned by the Operator",
			fmt.Sprintf("%s (%s). The operator mints %s with its own credentials, so it can only apply "+
				"tags that its tag owns: no %s device would appear.\n\n"+
				"Declare the tag with a qtail_tag_owner, and reference it from tags so that it is planned before this %s:\n\n"+
				"  resource \"qtail_tag_owner\" %q {\n    tag    = %q\n    owners = [%q]\n  }\n\n"+
				"  tags = [qtail_tag_owner.%s.tag]",
				problem, op.Describe(env), keys, check.Device, check.Resource, TagOwnerResourceName(tag), tag, op.Tags[0],
				TagOwnerResourceName(tag)))
	}
}

// TagOwnerResourceName turns a tag into the name of the qtail_tag_owner
// resource that diagnostics suggest: tag:k8s-web gives k8s_web.
func TagOwnerResourceName(tag string) string {
	name := strings.TrimPrefix(tag, "tag:")
	var b strings.Builder
	for _, c := range strings.ToLower(name) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		} else {
			b.WriteRune('_')
		}
	}
	return b.String()
}
