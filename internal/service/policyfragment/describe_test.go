package policyfragment

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"

	"github.com/qtail/terraform-provider-qtail/internal/fragment"
)

// Every fragment resource's schema is its description: each schema
// attribute is described and each described attribute is in the schema,
// with the same type, optionality and documentation, and the replacing
// attributes are those that require a replacement.
func TestSchemasAreTheirDescriptions(t *testing.T) {
	ctx := context.Background()
	schemaOf := func(r resource.Resource) schema.Schema {
		var resp resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &resp)
		return resp.Schema
	}
	grants, ok := schemaOf(NewGrantsResource()).Attributes["grants"].(schema.MapNestedAttribute)
	if !ok {
		t.Fatal("the grants of qtail_grants are not a map of objects")
	}
	replaces := stringplanmodifier.RequiresReplace().Description(ctx)
	for _, tc := range []struct {
		name  string
		attrs map[string]schema.Attribute
		desc  []fragment.Attr
	}{
		{"qtail_grant", schemaOf(NewGrantResource()).Attributes, fragment.Grant.Attrs},
		{"qtail_grants.grants", grants.NestedObject.Attributes, fragment.Grant.Content()},
		{"qtail_tag_owner", schemaOf(NewTagOwnerResource()).Attributes, fragment.TagOwner.Attrs},
		{"qtail_auto_approver", schemaOf(NewAutoApproverResource()).Attributes, fragment.AutoApprover.Attrs},
		{"qtail_policy_test", schemaOf(NewPolicyTestResource()).Attributes, fragment.PolicyTest.Attrs},
		{"qtail_allow_all_removal", schemaOf(NewAllowAllRemovalResource()).Attributes, fragment.AllowAllRemoval.Attrs},
	} {
		described := map[string]bool{}
		for _, d := range tc.desc {
			described[d.Name] = true
			a, ok := tc.attrs[d.Name]
			if !ok {
				t.Errorf("%s.%s is described but not in the schema", tc.name, d.Name)
				continue
			}
			if !a.GetType().Equal(attrType(d.Type)) || a.IsRequired() != d.Required || a.IsOptional() != d.Optional || a.IsComputed() != d.Computed ||
				a.GetMarkdownDescription() != d.Description {
				t.Errorf("%s.%s: the schema has %s required %v optional %v computed %v, the description %s %v %v %v",
					tc.name, d.Name, a.GetType(), a.IsRequired(), a.IsOptional(), a.IsComputed(), attrType(d.Type), d.Required, d.Optional, d.Computed)
			}
			if got := slices.Contains(planModifiers(ctx, a), replaces); got != d.Replaces {
				t.Errorf("%s.%s: requires replacement %v, replacing %v", tc.name, d.Name, got, d.Replaces)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(tc.attrs)) {
			if !described[name] {
				t.Errorf("%s.%s is in the schema but not described", tc.name, name)
			}
		}
	}
}

// planModifiers returns the descriptions of the plan modifiers of a.
func planModifiers(ctx context.Context, a schema.Attribute) []string {
	var out []string
	switch t := a.(type) {
	case schema.StringAttribute:
		for _, m := range t.PlanModifiers {
			out = append(out, m.Description(ctx))
		}
	case schema.BoolAttribute:
		for _, m := range t.PlanModifiers {
			out = append(out, m.Description(ctx))
		}
	case schema.ListAttribute:
		for _, m := range t.PlanModifiers {
			out = append(out, m.Description(ctx))
		}
	}
	return out
}
