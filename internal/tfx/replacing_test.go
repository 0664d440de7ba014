package tfx

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

func replacingTestSchema() schema.Schema {
	attrs := map[string]schema.Attribute{
		"id": schema.StringAttribute{Computed: true,
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
		"name": schema.StringAttribute{Required: true},
		"tags": schema.ListAttribute{ElementType: types.StringType, Optional: true},
		"size": schema.Int64Attribute{Optional: true},
	}
	Replacing{"name", "tags"}.AddTo(attrs)
	return schema.Schema{Attributes: attrs}
}

var replacingTestType = tftypes.Object{AttributeTypes: map[string]tftypes.Type{
	"id": tftypes.String, "name": tftypes.String, "tags": tftypes.List{ElementType: tftypes.String}, "size": tftypes.Number,
}}

func replacingTestValue(name any, tags []string, size int64) tftypes.Value {
	var tagsValue tftypes.Value
	if tags == nil {
		tagsValue = tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, nil)
	} else {
		elems := make([]tftypes.Value, len(tags))
		for i, t := range tags {
			elems[i] = tftypes.NewValue(tftypes.String, t)
		}
		tagsValue = tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, elems)
	}
	return tftypes.NewValue(replacingTestType, map[string]tftypes.Value{
		"id": tftypes.NewValue(tftypes.String, "1"), "name": tftypes.NewValue(tftypes.String, name),
		"tags": tagsValue, "size": tftypes.NewValue(tftypes.Number, size),
	})
}

func TestReplacingAddTo(t *testing.T) {
	s := replacingTestSchema()
	if err := (Replacing{"name", "tags"}).Check(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if id, ok := s.Attributes["id"].(schema.StringAttribute); !ok || len(id.PlanModifiers) != 1 {
		t.Errorf("id is %#v, want its own one plan modifier", s.Attributes["id"])
	}
	err := (Replacing{"name", "size"}).Check(context.Background(), s)
	if err == nil || !strings.Contains(err.Error(), "tags requires replacement in the schema but is not listed") ||
		!strings.Contains(err.Error(), "size is listed but does not require replacement") {
		t.Errorf("Check of a wrong list = %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("AddTo of a missing attribute did not panic")
		}
	}()
	Replacing{"missing"}.AddTo(map[string]schema.Attribute{})
}

func TestReplacingReplacedBy(t *testing.T) {
	ctx := context.Background()
	s := replacingTestSchema()
	state := replacingTestValue("a", []string{"tag:x"}, 1)
	r := Replacing{"name", "tags"}
	for _, c := range []struct {
		name        string
		state, plan tftypes.Value
		want        bool
	}{
		{"no change", state, replacingTestValue("a", []string{"tag:x"}, 1), false},
		{"an attribute not listed", state, replacingTestValue("a", []string{"tag:x"}, 2), false},
		{"name", state, replacingTestValue("b", []string{"tag:x"}, 1), true},
		{"tags", state, replacingTestValue("a", []string{"tag:y"}, 1), true},
		{"tags removed", state, replacingTestValue("a", nil, 1), true},
		{"name unknown", state, replacingTestValue(tftypes.UnknownValue, []string{"tag:x"}, 1), true},
		{"creation", tftypes.NewValue(replacingTestType, nil), replacingTestValue("b", nil, 1), false},
		{"destruction", state, tftypes.NewValue(replacingTestType, nil), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := resource.ModifyPlanRequest{
				State: tfsdk.State{Schema: s, Raw: c.state},
				Plan:  tfsdk.Plan{Schema: s, Raw: c.plan},
			}
			var diags diag.Diagnostics
			if got := r.ReplacedBy(ctx, req, &diags); got != c.want || diags.HasError() {
				t.Errorf("ReplacedBy = %v (%v), want %v", got, diags, c.want)
			}
		})
	}
}
