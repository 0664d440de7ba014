package tfx

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
)

// Replacing lists the top-level attributes of a resource whose change
// replaces the resource. The one list feeds both the schema, through
// AddTo, and ModifyPlan, through ReplacedBy, so that what Terraform
// replaces and what ModifyPlan plans as a replacement cannot disagree:
//
//	var widgetReplacing = tfx.Replacing{"environment_id", "name"}
//
//	// Schema, once the attributes are built:
//	widgetReplacing.AddTo(attrs)
//
//	// ModifyPlan:
//	if widgetReplacing.ReplacedBy(ctx, req, &resp.Diagnostics) { ... }
//
// A test of the resource calls Check on its schema.
type Replacing []string

// AddTo appends the RequiresReplace plan modifier of its type to every
// listed attribute of attrs. It panics when a listed attribute is missing
// or of a type it does not handle: a mistake in the code, which any test
// that builds the schema shows.
func (r Replacing) AddTo(attrs map[string]schema.Attribute) {
	for _, name := range r {
		switch a := attrs[name].(type) {
		case schema.StringAttribute:
			a.PlanModifiers = append(a.PlanModifiers, stringplanmodifier.RequiresReplace())
			attrs[name] = a
		case schema.BoolAttribute:
			a.PlanModifiers = append(a.PlanModifiers, boolplanmodifier.RequiresReplace())
			attrs[name] = a
		case schema.Int64Attribute:
			a.PlanModifiers = append(a.PlanModifiers, int64planmodifier.RequiresReplace())
			attrs[name] = a
		case schema.Float64Attribute:
			a.PlanModifiers = append(a.PlanModifiers, float64planmodifier.RequiresReplace())
			attrs[name] = a
		case schema.ListAttribute:
			a.PlanModifiers = append(a.PlanModifiers, listplanmodifier.RequiresReplace())
			attrs[name] = a
		case schema.SetAttribute:
			a.PlanModifiers = append(a.PlanModifiers, setplanmodifier.RequiresReplace())
			attrs[name] = a
		case schema.MapAttribute:
			a.PlanModifiers = append(a.PlanModifiers, mapplanmodifier.RequiresReplace())
			attrs[name] = a
		case schema.ObjectAttribute:
			a.PlanModifiers = append(a.PlanModifiers, objectplanmodifier.RequiresReplace())
			attrs[name] = a
		case nil:
			panic(fmt.Sprintf("tfx.Replacing: the schema has no attribute %q", name))
		default:
			panic(fmt.Sprintf("tfx.Replacing: attribute %q is a %T, which AddTo does not handle", name, a))
		}
	}
}

// ReplacedBy reports whether the plan of req changes a listed attribute
// of the state, so that Terraform replaces the resource. It is false for
// a creation and a destruction. An unknown planned value counts as a
// change, as it does for RequiresReplace.
func (r Replacing) ReplacedBy(ctx context.Context, req resource.ModifyPlanRequest, diags *diag.Diagnostics) bool {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() {
		return false
	}
	for _, name := range r {
		var planned, prior attr.Value
		diags.Append(req.Plan.GetAttribute(ctx, path.Root(name), &planned)...)
		diags.Append(req.State.GetAttribute(ctx, path.Root(name), &prior)...)
		if planned != nil && prior != nil && !planned.Equal(prior) {
			return true
		}
	}
	return false
}

// Check returns what differs between r and the attributes of s that carry
// a RequiresReplace plan modifier, nested attributes included; nil when
// they agree.
func (r Replacing) Check(ctx context.Context, s schema.Schema) error {
	var marked []string
	collectRequiresReplace(ctx, "", s.Attributes, &marked)
	sort.Strings(marked)
	var problems []string
	for _, name := range marked {
		if !slices.Contains(r, name) {
			problems = append(problems, name+" requires replacement in the schema but is not listed")
		}
	}
	for _, name := range r {
		if !slices.Contains(marked, name) {
			problems = append(problems, name+" is listed but does not require replacement in the schema")
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("replacing attributes: %s", strings.Join(problems, "; "))
	}
	return nil
}

// requiresReplaceDescription is the description of every type's
// RequiresReplace plan modifier.
var requiresReplaceDescription = stringplanmodifier.RequiresReplace().Description(context.Background())

// collectRequiresReplace appends to marked the paths, under prefix, of the
// attributes of attrs that carry a RequiresReplace plan modifier.
func collectRequiresReplace(ctx context.Context, prefix string, attrs map[string]schema.Attribute, marked *[]string) {
	for name, a := range attrs {
		at := prefix + name
		if slices.ContainsFunc(describedModifiers(a), func(m planmodifier.Describer) bool {
			return m.Description(ctx) == requiresReplaceDescription
		}) {
			*marked = append(*marked, at)
		}
		switch a := a.(type) {
		case schema.SingleNestedAttribute:
			collectRequiresReplace(ctx, at+".", a.Attributes, marked)
		case schema.ListNestedAttribute:
			collectRequiresReplace(ctx, at+"[*].", a.NestedObject.Attributes, marked)
		case schema.SetNestedAttribute:
			collectRequiresReplace(ctx, at+"[*].", a.NestedObject.Attributes, marked)
		case schema.MapNestedAttribute:
			collectRequiresReplace(ctx, at+"[*].", a.NestedObject.Attributes, marked)
		}
	}
}

// describedModifiers returns the plan modifiers of a.
func describedModifiers(a schema.Attribute) []planmodifier.Describer {
	switch a := a.(type) {
	case schema.StringAttribute:
		return describers(a.PlanModifiers)
	case schema.BoolAttribute:
		return describers(a.PlanModifiers)
	case schema.Int64Attribute:
		return describers(a.PlanModifiers)
	case schema.Float64Attribute:
		return describers(a.PlanModifiers)
	case schema.NumberAttribute:
		return describers(a.PlanModifiers)
	case schema.ListAttribute:
		return describers(a.PlanModifiers)
	case schema.SetAttribute:
		return describers(a.PlanModifiers)
	case schema.MapAttribute:
		return describers(a.PlanModifiers)
	case schema.ObjectAttribute:
		return describers(a.PlanModifiers)
	case schema.SingleNestedAttribute:
		return describers(a.PlanModifiers)
	case schema.ListNestedAttribute:
		return describers(a.PlanModifiers)
	case schema.SetNestedAttribute:
		return describers(a.PlanModifiers)
	case schema.MapNestedAttribute:
		return describers(a.PlanModifiers)
	}
	return nil
}

// describers converts a list of plan modifiers of one type.
func describers[M planmodifier.Describer](ms []M) []planmodifier.Describer {
	out := make([]planmodifier.Describer, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}
