// Command noop is a Terraform provider with two resources that call no
// API: noop_grant has the attributes of a qtail_grant, and noop_grants the
// attributes of a qtail_grants. They are the cost of a resource of that
// shape served by terraform-plugin-framework over gRPC, which
// tools/benchpolicy measures next to qtail's.
package main

import (
	"context"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func main() {
	err := providerserver.Serve(context.Background(), func() provider.Provider { return noopProvider{} },
		providerserver.ServeOpts{Address: "registry.terraform.io/qtail/noop"})
	if err != nil {
		log.Fatal(err)
	}
}

type noopProvider struct{}

func (noopProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "noop"
}

func (noopProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}

func (noopProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (noopProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource { return grant{} }, func() resource.Resource { return grants{} }}
}

func (noopProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

type grant struct{}

type grantModel struct {
	ID   types.String `tfsdk:"id"`
	Name types.String `tfsdk:"name"`
	Src  types.List   `tfsdk:"src"`
	Dst  types.List   `tfsdk:"dst"`
	IP   types.List   `tfsdk:"ip"`
}

func (grant) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_grant"
}

func (grant) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{Attributes: map[string]schema.Attribute{
		"id":   schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
		"name": schema.StringAttribute{Required: true},
		"src":  schema.ListAttribute{Required: true, ElementType: types.StringType},
		"dst":  schema.ListAttribute{Required: true, ElementType: types.StringType},
		"ip":   schema.ListAttribute{Optional: true, ElementType: types.StringType},
	}}
}

func (grant) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m grantModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	m.ID = m.Name
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (grant) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m grantModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (grant) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m grantModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (grant) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

type grants struct{}

type grantsModel struct {
	ID     types.String `tfsdk:"id"`
	Grants types.Map    `tfsdk:"grants"`
}

func (grants) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_grants"
}

func (grants) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	list := func(required bool) schema.ListAttribute {
		return schema.ListAttribute{Required: required, Optional: !required, ElementType: types.StringType}
	}
	resp.Schema = schema.Schema{Attributes: map[string]schema.Attribute{
		"id": schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
		"grants": schema.MapNestedAttribute{Required: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"src": list(true), "dst": list(true), "ip": list(false), "via": list(false), "src_posture": list(false),
			"app": schema.StringAttribute{Optional: true},
		}}},
	}}
}

func (grants) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m grantsModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	m.ID = types.StringValue("grants")
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (grants) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m grantsModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (grants) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m grantsModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (grants) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}
