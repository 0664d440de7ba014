package policyfragment

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/fragment"
	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
	"github.com/qtail/terraform-provider-qtail/internal/tfx"
)

// The schemas and the models of the fragment resources are made from
// their descriptions (internal/fragment): this file turns a description
// into the framework's schema attributes and types, and attribute values
// into the plain values the descriptions' codecs read.

// kindSchema is the schema of the resource that k describes.
func kindSchema(k *fragment.Kind) schema.Schema {
	return schema.Schema{MarkdownDescription: k.Description, Attributes: schemaAttributes(k.Attrs)}
}

// schemaAttributes are the schema attributes of attrs.
func schemaAttributes(attrs []fragment.Attr) map[string]schema.Attribute {
	out := make(map[string]schema.Attribute, len(attrs))
	for _, a := range attrs {
		out[a.Name] = schemaAttribute(a)
	}
	return out
}

// schemaAttribute is the schema attribute that a describes.
func schemaAttribute(a fragment.Attr) schema.Attribute {
	var check validator.String
	if a.Check != nil {
		check = tfx.StringCheck{Rule: a.Rule, Check: a.Check}
	}
	switch a.Type {
	case fragment.Bool:
		s := schema.BoolAttribute{Required: a.Required, Optional: a.Optional, Computed: a.Computed, MarkdownDescription: a.Description}
		if d, ok := a.Default.(bool); ok {
			s.Default = booldefault.StaticBool(d)
		}
		if a.Replaces {
			s.PlanModifiers = append(s.PlanModifiers, boolplanmodifier.RequiresReplace())
		}
		if a.Kept {
			s.PlanModifiers = append(s.PlanModifiers, boolplanmodifier.UseStateForUnknown())
		}
		return s
	case fragment.List:
		s := schema.ListAttribute{Required: a.Required, Optional: a.Optional, Computed: a.Computed, MarkdownDescription: a.Description,
			ElementType: types.StringType}
		if a.MinItems > 0 {
			s.Validators = append(s.Validators, listvalidator.SizeAtLeast(a.MinItems))
		}
		if a.Unique {
			s.Validators = append(s.Validators, listvalidator.UniqueValues())
		}
		if check != nil {
			s.Validators = append(s.Validators, listvalidator.ValueStringsAre(check))
		}
		return s
	}
	s := schema.StringAttribute{Required: a.Required, Optional: a.Optional, Computed: a.Computed, MarkdownDescription: a.Description}
	if a.Type == fragment.JSON {
		s.CustomType = jsonType{}
	}
	if a.Replaces {
		s.PlanModifiers = append(s.PlanModifiers, stringplanmodifier.RequiresReplace())
	}
	if a.Kept {
		s.PlanModifiers = append(s.PlanModifiers, stringplanmodifier.UseStateForUnknown())
	}
	if check != nil {
		s.Validators = []validator.String{check}
	}
	return s
}

// attrType is the framework type of the values of t.
func attrType(t fragment.Type) attr.Type {
	switch t {
	case fragment.Bool:
		return types.BoolType
	case fragment.List:
		return types.ListType{ElemType: types.StringType}
	case fragment.JSON:
		return jsonType{}
	}
	return types.StringType
}

// objectType is the type of an object of attrs.
func objectType(attrs []fragment.Attr) types.ObjectType {
	t := types.ObjectType{AttrTypes: make(map[string]attr.Type, len(attrs))}
	for _, a := range attrs {
		t.AttrTypes[a.Name] = attrType(a.Type)
	}
	return t
}

// plainValue is the plain value of v (see fragment.Values).
func plainValue(v attr.Value) any {
	if v == nil || v.IsNull() {
		return nil
	}
	if v.IsUnknown() {
		return fragment.Unknown
	}
	switch t := v.(type) {
	case types.String:
		return t.ValueString()
	case jsonValue:
		return t.ValueString()
	case types.Bool:
		return t.ValueBool()
	case types.List:
		ss, ok := tfx.Strings(t)
		if !ok {
			return fragment.Unknown
		}
		return ss
	}
	return fragment.Unknown
}

// attrValue is the framework value of the plain value v of type t.
func attrValue(t fragment.Type, v any) attr.Value {
	switch t {
	case fragment.Bool:
		switch b := v.(type) {
		case bool:
			return types.BoolValue(b)
		case nil:
			return types.BoolNull()
		}
		return types.BoolUnknown()
	case fragment.List:
		switch ss := v.(type) {
		case []string:
			return tfx.StringList(ss)
		case nil:
			return types.ListNull(types.StringType)
		}
		return types.ListUnknown(types.StringType)
	}
	s := types.StringUnknown()
	switch str := v.(type) {
	case string:
		s = types.StringValue(str)
	case nil:
		s = types.StringNull()
	}
	if t == fragment.JSON {
		return jsonValue{StringValue: s}
	}
	return s
}

// values are the plain values of attrs, as the descriptions read them.
func values(kindAttrs []fragment.Attr, attrs map[string]attr.Value) fragment.Values {
	v := make(fragment.Values, len(kindAttrs))
	for _, a := range kindAttrs {
		v[a.Name] = plainValue(attrs[a.Name])
	}
	return v
}

// model is the value of a fragment resource, attribute by attribute.
type model struct {
	kind  *fragment.Kind
	attrs map[string]attr.Value
}

// newModel returns the model of k with every attribute null.
func newModel(k *fragment.Kind) *model {
	m := &model{kind: k, attrs: make(map[string]attr.Value, len(k.Attrs))}
	for _, a := range k.Attrs {
		m.attrs[a.Name] = attrValue(a.Type, nil)
	}
	return m
}

// getter is a plan, a state or a configuration.
type getter interface {
	Get(ctx context.Context, target any) diag.Diagnostics
}

// readModel reads the model of k from a plan, a state or a configuration.
func readModel(ctx context.Context, k *fragment.Kind, from getter) (*model, diag.Diagnostics) {
	var obj types.Object
	diags := from.Get(ctx, &obj)
	if diags.HasError() {
		return nil, diags
	}
	m := newModel(k)
	for name, v := range obj.Attributes() {
		m.attrs[name] = v
	}
	return m, diags
}

// object is the value of m.
func (m *model) object() (types.Object, diag.Diagnostics) {
	return types.ObjectValue(objectType(m.kind.Attrs).AttrTypes, m.attrs)
}

// save sets a plan or a state to m.
func (m *model) save(ctx context.Context, to interface {
	Set(ctx context.Context, val any) diag.Diagnostics
}) diag.Diagnostics {
	obj, diags := m.object()
	if diags.HasError() {
		return diags
	}
	diags.Append(to.Set(ctx, obj)...)
	return diags
}

// values are the plain values of m.
func (m *model) values() fragment.Values { return values(m.kind.Attrs, m.attrs) }

// set sets the attribute name to the plain value v.
func (m *model) set(name string, v any) {
	if a, ok := m.kind.Attr(name); ok {
		m.attrs[name] = attrValue(a.Type, v)
	}
}

// str returns the string attribute name: "" when null or unknown.
func (m *model) str(name string) string {
	s, _ := plainValue(m.attrs[name]).(string)
	return s
}

// fragmentKey returns the key of the fragment; ok is false while the
// attributes that make it are unknown.
func (m *model) fragmentKey() (policyfile.Key, bool) { return m.kind.Key(m.values()) }

// entry returns the JSON value of the policy entry; ok is false when a
// value is unknown, or missing (as after an import).
func (m *model) entry() (json.RawMessage, bool) { return m.kind.Entry(m.values()) }

// setEntry fills the model from the standardized value of the entry of
// key.
func (m *model) setEntry(key policyfile.Key, value json.RawMessage) diag.Diagnostics {
	var diags diag.Diagnostics
	v, problems := m.kind.Decode(key, value)
	for _, p := range problems {
		diags.AddError("Unexpected Policy Entry", p)
	}
	if diags.HasError() {
		return diags
	}
	for _, a := range m.kind.Content() {
		m.set(a.Name, v[a.Name])
	}
	for name, val := range v {
		m.set(name, val)
	}
	return diags
}

// markerText is the marker comment of key without its leading "//", as the
// marker attribute holds it.
func markerText(key policyfile.Key) string {
	return strings.TrimPrefix(key.Marker(), "// ")
}

// setComputed sets id and marker to the values qtail keeps for key. The
// marker attribute of a grant, a tag owner or a test leaves the owner
// out: the owner attribute holds it.
func (m *model) setComputed(key policyfile.Key, marked bool) {
	m.set(fragment.IDAttr, key.ImportID())
	m.set(fragment.MarkerAttr, "")
	if key.Kind != policyfile.KindAutoApprover {
		key = key.List()
	}
	if marked {
		m.set(fragment.MarkerAttr, markerText(key))
	}
}

// kindOf returns the description of the fragments of kind.
func kindOf(kind policyfile.Kind) *fragment.Kind {
	if k, ok := fragment.ByKind(kind); ok {
		return k
	}
	panic(fmt.Sprintf("policyfragment: no description of the fragments of kind %q", kind))
}

// describeKey names the entry of key the way the policy file shows it.
func describeKey(key policyfile.Key) string { return fragment.Where(key) }

// readModel reads plans, states and configurations.
var (
	_ getter = tfsdk.Plan{}
	_ getter = tfsdk.State{}
	_ getter = tfsdk.Config{}
)
