package policyfragment

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/qtail/terraform-provider-qtail/internal/fragment"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

var (
	_ resource.Resource                   = &grantResource{}
	_ resource.ResourceWithConfigure      = &grantResource{}
	_ resource.ResourceWithImportState    = &grantResource{}
	_ resource.ResourceWithModifyPlan     = &grantResource{}
	_ resource.ResourceWithValidateConfig = &grantResource{}
)

// NewGrantResource returns the qtail_grant resource, described by
// fragment.Grant.
func NewGrantResource() resource.Resource {
	return &grantResource{fragmentResource{kind: fragment.Grant, ext: ownedEntry{}}}
}

type grantResource struct {
	fragmentResource
}

// jsonType is the type of an attribute of type fragment.JSON, such as a
// grant's app: a JSON string whose formatting and member order do not
// matter.
type jsonType struct {
	basetypes.StringType
}

var _ basetypes.StringTypable = jsonType{}

func (t jsonType) Equal(o attr.Type) bool {
	_, ok := o.(jsonType)
	return ok
}

func (t jsonType) String() string { return "jsonType" }

func (t jsonType) ValueFromString(_ context.Context, in basetypes.StringValue) (basetypes.StringValuable, diag.Diagnostics) {
	return jsonValue{StringValue: in}, nil
}

func (t jsonType) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	v, err := t.StringType.ValueFromTerraform(ctx, in)
	if err != nil {
		return nil, err
	}
	s, ok := v.(basetypes.StringValue)
	if !ok {
		return nil, fmt.Errorf("unexpected value type %T", v)
	}
	return jsonValue{StringValue: s}, nil
}

func (t jsonType) ValueType(context.Context) attr.Value { return jsonValue{} }

// jsonValue is a value of jsonType. Two values are semantically equal
// when they are the same JSON in canonical form.
type jsonValue struct {
	basetypes.StringValue
}

var _ basetypes.StringValuableWithSemanticEquals = jsonValue{}

func (v jsonValue) Equal(o attr.Value) bool {
	other, ok := o.(jsonValue)
	return ok && v.StringValue.Equal(other.StringValue)
}

func (v jsonValue) Type(context.Context) attr.Type { return jsonType{} }

func (v jsonValue) StringSemanticEquals(_ context.Context, newValuable basetypes.StringValuable) (bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	other, ok := newValuable.(jsonValue)
	if !ok {
		diags.AddError("Semantic Equality Check Error", fmt.Sprintf("qtail compared a JSON value with a %T. Please report this issue to the qtail developers.", newValuable))
		return false, diags
	}
	return policyfile.SameJSON(json.RawMessage(v.ValueString()), json.RawMessage(other.ValueString())), diags
}
