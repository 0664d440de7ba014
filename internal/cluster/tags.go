package cluster

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// TagsCheck asks whether the operator of a cluster can apply the tags of
// the devices that a planned resource makes it bring up.
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

// CheckOperatorOwnsTags refuses each tag that the operator of the cluster
// cannot apply, in the policy as it will be after this plan: the operator
// mints each auth key with its OAuth client, which can only apply its own
// tags and those they own in tagOwners. The error shows the
// qtail_tag_owner that would fix it.
func CheckOperatorOwnsTags(ctx context.Context, c *conn.Clients, ops *Lookup, check TagsCheck, diags *diag.Diagnostics) {
	if len(check.Tags) == 0 || c.TailnetOrNil() == nil {
		return
	}
	env := ops.UsePlan(c.Planned()).Env
	op, err := ops.Operator(ctx)
	if err == nil && op.HelmID == "" && !op.Planned {
		// No operator: the plan says so on its own, and there are no
		// tags of an operator to check against.
		return
	}
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
	doc, err := policyfile.Parse(body)
	if err != nil {
		diags.AddWarning("Tags Not Checked", "qtail could not parse the tailnet policy: "+err.Error())
		return
	}
	client := ops.OAuthClient(ctx, c.TailnetOrNil())
	keys := "the " + check.Device + "'s auth key"
	if check.Replicas {
		keys += "s"
	}
	for _, tag := range unownedTags(doc, check.Tags, client.Tags) {
		// Without the client's own tags, those of the operator stand for
		// them (the recipe tags the client like the operator).
		whose := "the operator's tag " + strings.Join(client.Tags, ", ")
		if client.Known {
			whose = "the OAuth client's tag " + strings.Join(client.Tags, ", ")
		}
		_, declared, owners := doc.TagOwnedBy(tag, client.Tags)
		problem := fmt.Sprintf("%s is not declared in tagOwners, so %s does not own it", tag, whose)
		if near := policyfile.Nearest(tag, doc.DeclaredNames("tagOwners"), 3); !declared && len(near) > 0 {
			problem += fmt.Sprintf("; did you mean %s, which tagOwners declares?", strings.Join(near, " or "))
		}
		if declared {
			problem = fmt.Sprintf("%s is owned by [%s] in tagOwners, not by %s", tag, strings.Join(owners, ", "), whose)
		}
		diags.AddAttributeError(check.At, "Tag Not Owned by the Operator",
			fmt.Sprintf("%s (%s; %s). The operator mints %s with its OAuth client, so it can only apply "+
				"tags that the client's tags are or own: the operator runs, but no %s device would appear.\n\n"+
				"If the tag is new, declare it with a qtail_tag_owner in the configuration that manages this tailnet's tag owners "+
				"(its platform root, when several configurations share the tailnet). In this configuration, reference it from tags "+
				"so that it is planned before this %s:\n\n"+
				"  resource \"qtail_tag_owner\" %q {\n    tag    = %q\n    owners = [%q]\n  }\n\n"+
				"  tags = [qtail_tag_owner.%s.tag]",
				problem, op.Describe(env), client.describe(), keys, check.Device, check.Resource, TagOwnerResourceName(tag), tag,
				client.Tags[0], TagOwnerResourceName(tag)))
	}
}

// unownedTags returns the tags that are neither one of by nor owned by one
// of them in doc.
func unownedTags(doc *policyfile.Document, tags, by []string) []string {
	var out []string
	for _, tag := range tags {
		if owned, _, _ := doc.TagOwnedBy(tag, by); !owned {
			out = append(out, tag)
		}
	}
	return out
}

// OperatorCanApply reports whether the operator of the cluster could give
// a device every tag of tags: its OAuth client's tags are or own each of
// them in the policy as it will be after this plan. An exposure takes a
// device it finds under its hostname for its own proxy when so.
func OperatorCanApply(ctx context.Context, c *conn.Clients, ops *Lookup, tags []string) bool {
	body, d := c.PlannedPolicy(ctx)
	if d.HasError() {
		return false
	}
	doc, err := policyfile.Parse(body)
	if err != nil {
		return false
	}
	client := ops.UsePlan(c.Planned()).OAuthClient(ctx, c.TailnetOrNil())
	return len(unownedTags(doc, tags, client.Tags)) == 0
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
