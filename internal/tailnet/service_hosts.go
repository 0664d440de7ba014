package tailnet

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// The approval levels of a host of a Tailscale Service, as the API
// reports them.
const (
	ApprovalNone   = "not-approved"
	ApprovalAuto   = "approved:auto"
	ApprovalManual = "approved:manual"
)

// ServiceHost is a device that advertises a Tailscale Service. It carries
// the Service's traffic only once it is approved, by an
// autoApprovers.services entry of the policy or by an admin.
type ServiceHost struct {
	// NodeID is the device's stable node ID.
	NodeID   string
	Hostname string
	// Approval is ApprovalNone, ApprovalAuto or ApprovalManual.
	Approval string
}

// Approved reports whether the host carries the Service's traffic.
func (h ServiceHost) Approved() bool {
	return h.Approval == ApprovalAuto || h.Approval == ApprovalManual
}

// ServiceHosts lists the devices that advertise the Tailscale Service
// name (svc:LABEL), with their approval (GET
// /tailnet/{tailnet}/services/{name}/devices, scope services:read). A
// missing Service is an error for which IsNotFound is true.
func (c *Client) ServiceHosts(ctx context.Context, name string) ([]ServiceHost, error) {
	_, body, err := c.send(ctx, http.MethodGet, c.tailnetURL("services", name, "devices"), nil, nil)
	if err != nil {
		return nil, err
	}
	var out struct {
		Devices []struct {
			StableNodeID  string `json:"stableNodeID"`
			Hostname      string `json:"hostname"`
			ApprovalLevel string `json:"approvalLevel"`
		} `json:"devices"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("tailscale API GET the hosts of %s: decoding the response: %w", name, err)
	}
	hosts := make([]ServiceHost, 0, len(out.Devices))
	for _, d := range out.Devices {
		hosts = append(hosts, ServiceHost{NodeID: d.StableNodeID, Hostname: d.Hostname, Approval: d.ApprovalLevel})
	}
	return hosts, nil
}

// UnapprovedHosts returns the hosts that are not approved.
func UnapprovedHosts(hosts []ServiceHost) []ServiceHost {
	var out []ServiceHost
	for _, h := range hosts {
		if !h.Approved() {
			out = append(out, h)
		}
	}
	return out
}
