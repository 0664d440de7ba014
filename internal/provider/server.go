package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/qtail/terraform-provider-qtail/internal/conn"
	"github.com/qtail/terraform-provider-qtail/internal/service/policyfragment"
)

// Server returns the protocol 6 server of p, whose diagnostics name the
// nested attribute they are about. Terraform shows the line of a
// top-level attribute that an error is about, but for an attribute nested
// in another (chart.git_repository.url, timeouts.create) it shows only
// the resource block: the detail then says which attribute it is.
//
// The requests of a qtail_grants that change nothing are answered by
// policyfragment.GrantsFastPath, without the framework's conversions.
func Server(p func() provider.Provider) func() (tfprotov6.ProviderServer, error) {
	prov := p()
	inner := providerserver.NewProtocol6WithError(prov)
	fast := policyfragment.NewGrantsFastPath(context.Background())
	clients := func() *conn.Clients { return nil }
	if qp, ok := prov.(*qtailProvider); ok {
		clients = qp.configuredClients
	}
	return func() (tfprotov6.ProviderServer, error) {
		s, err := inner()
		if err != nil {
			return nil, err
		}
		return fastPathServer{attributeNamingServer: attributeNamingServer{s}, fast: fast, clients: clients}, nil
	}
}

// fastPathServer answers the requests that GrantsFastPath can answer, and
// hands the others on.
type fastPathServer struct {
	attributeNamingServer
	fast    *policyfragment.GrantsFastPath
	clients func() *conn.Clients
}

func (s fastPathServer) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	if resp, ok := s.fast.UpgradeResourceState(ctx, s.clients(), req); ok {
		return resp, nil
	}
	return s.attributeNamingServer.UpgradeResourceState(ctx, req)
}

func (s fastPathServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	if resp, ok := s.fast.ReadResource(ctx, s.clients(), req); ok {
		return resp, nil
	}
	return s.attributeNamingServer.ReadResource(ctx, req)
}

func (s fastPathServer) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	if resp, ok := s.fast.ValidateResourceConfig(ctx, s.clients(), req); ok {
		return resp, nil
	}
	return s.attributeNamingServer.ValidateResourceConfig(ctx, req)
}

func (s fastPathServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	if resp, ok := s.fast.ApplyResourceChange(ctx, s.clients(), req); ok {
		nameAttributes(resp.Diagnostics)
		return resp, nil
	}
	return s.attributeNamingServer.ApplyResourceChange(ctx, req)
}

func (s fastPathServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	if resp, ok := s.fast.PlanResourceChange(ctx, s.clients(), req); ok {
		nameAttributes(resp.Diagnostics)
		return resp, nil
	}
	return s.attributeNamingServer.PlanResourceChange(ctx, req)
}

// attributeNamingServer adds the path of a nested attribute to the
// diagnostics about it.
type attributeNamingServer struct {
	tfprotov6.ProviderServer
}

func (s attributeNamingServer) ValidateProviderConfig(ctx context.Context, req *tfprotov6.ValidateProviderConfigRequest) (*tfprotov6.ValidateProviderConfigResponse, error) {
	resp, err := s.ProviderServer.ValidateProviderConfig(ctx, req)
	if resp != nil {
		nameAttributes(resp.Diagnostics)
	}
	return resp, err
}

func (s attributeNamingServer) ConfigureProvider(ctx context.Context, req *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	resp, err := s.ProviderServer.ConfigureProvider(ctx, req)
	if resp != nil {
		nameAttributes(resp.Diagnostics)
	}
	return resp, err
}

func (s attributeNamingServer) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	resp, err := s.ProviderServer.ValidateResourceConfig(ctx, req)
	if resp != nil {
		nameAttributes(resp.Diagnostics)
	}
	return resp, err
}

func (s attributeNamingServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	resp, err := s.ProviderServer.PlanResourceChange(ctx, req)
	if resp != nil {
		nameAttributes(resp.Diagnostics)
	}
	return resp, err
}

func (s attributeNamingServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	resp, err := s.ProviderServer.ApplyResourceChange(ctx, req)
	if resp != nil {
		nameAttributes(resp.Diagnostics)
	}
	return resp, err
}

func (s attributeNamingServer) ValidateDataResourceConfig(ctx context.Context, req *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	resp, err := s.ProviderServer.ValidateDataResourceConfig(ctx, req)
	if resp != nil {
		nameAttributes(resp.Diagnostics)
	}
	return resp, err
}

func (s attributeNamingServer) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	resp, err := s.ProviderServer.ReadDataSource(ctx, req)
	if resp != nil {
		nameAttributes(resp.Diagnostics)
	}
	return resp, err
}

// nameAttributes ends the detail of each diagnostic about a nested
// attribute with the attribute's path.
func nameAttributes(diags []*tfprotov6.Diagnostic) {
	for _, d := range diags {
		if d == nil || d.Attribute == nil {
			continue
		}
		if p, nested := attributePath(d.Attribute); nested {
			d.Detail = strings.TrimRight(d.Detail, "\n") + "\n\nAttribute: " + p
		}
	}
}

// attributePath writes a path as the configuration would refer to it
// (chart.git_repository.url, ports[0].name), and reports whether it goes
// through a nested attribute, which Terraform cannot point at.
func attributePath(p *tftypes.AttributePath) (string, bool) {
	var b strings.Builder
	names := 0
	for _, step := range p.Steps() {
		switch s := step.(type) {
		case tftypes.AttributeName:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(string(s))
			names++
		case tftypes.ElementKeyInt:
			fmt.Fprintf(&b, "[%d]", int64(s))
		case tftypes.ElementKeyString:
			fmt.Fprintf(&b, "[%q]", string(s))
		case tftypes.ElementKeyValue:
			b.WriteString("[...]")
		}
	}
	return b.String(), names > 1
}
