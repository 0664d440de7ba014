package helmrepository

import (
	"net/url"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

type helmRepositoryModel struct {
	ID                  types.String `tfsdk:"id"`
	OrganizationID      types.String `tfsdk:"organization_id"`
	Name                types.String `tfsdk:"name"`
	URL                 types.String `tfsdk:"url"`
	AllowUnstable       types.Bool   `tfsdk:"allow_unstable"`
	SkipTLSVerification types.Bool   `tfsdk:"skip_tls_verification"`
}

// isUnstableChannel reports whether u points at Tailscale's unstable
// channel, whatever its trailing slash or case.
func isUnstableChannel(u string) bool {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil {
		return false
	}
	return strings.EqualFold(p.Hostname(), "pkgs.tailscale.com") &&
		strings.HasPrefix(strings.Trim(strings.ToLower(p.Path), "/"), "unstable")
}

func (m *helmRepositoryModel) request() *qovery.HelmRepositoryRequest {
	return &qovery.HelmRepositoryRequest{
		Name:                m.Name.ValueString(),
		Kind:                qovery.HelmRepositoryKindHTTPS,
		URL:                 m.URL.ValueString(),
		SkipTLSVerification: m.SkipTLSVerification.ValueBool(),
	}
}

func (m *helmRepositoryModel) fill(repo *qovery.HelmRepository, orgID string) {
	m.ID = types.StringValue(repo.ID)
	m.OrganizationID = types.StringValue(orgID)
	m.Name = types.StringValue(repo.Name)
	m.URL = types.StringValue(repo.URL)
	m.SkipTLSVerification = types.BoolValue(repo.SkipTLSVerification)
	if m.AllowUnstable.IsNull() || m.AllowUnstable.IsUnknown() {
		m.AllowUnstable = types.BoolValue(isUnstableChannel(repo.URL))
	}
}
