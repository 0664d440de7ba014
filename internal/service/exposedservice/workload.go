package exposedservice

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/qtail/terraform-provider-qtail/internal/qovery"
)

// workload is the Qovery service that an exposure annotates: an
// application (application_id) or a container (container_id). The API
// serves them at routes of their own and treats them alike: both take
// annotations groups, have ports, and are redeployed to apply them.
type workload struct {
	// kind is "application" or "container".
	kind string
	id   string
}

const (
	kindApplication = "application"
	kindContainer   = "container"
)

// workload returns the service that m exposes. id is "" while unknown.
func (m *exposedServiceModel) workload() workload {
	if !m.ContainerID.IsNull() {
		return workload{kind: kindContainer, id: m.ContainerID.ValueString()}
	}
	return workload{kind: kindApplication, id: m.ApplicationID.ValueString()}
}

// known reports whether the service is known at plan time.
func (m *exposedServiceModel) workloadKnown() bool {
	return !m.ApplicationID.IsUnknown() && !m.ContainerID.IsUnknown()
}

// attr is the attribute that names the service.
func (w workload) attr() path.Path { return path.Root(w.kind + "_id") }

// String is "application ID" or "container ID".
func (w workload) String() string { return w.kind + " " + w.id }

// get reads the service; envID, when known, lets a deleted service's 403
// be proven gone (qovery.InEnvironment).
func (w workload) get(ctx context.Context, q *qovery.Client, envID string) (*qovery.Workload, error) {
	in := qovery.InEnvironment(envID)
	if w.kind == kindContainer {
		c, err := q.GetContainer(ctx, w.id, in)
		if err != nil {
			return nil, err
		}
		return &c.Workload, nil
	}
	a, err := q.GetApplication(ctx, w.id, in)
	if err != nil {
		return nil, err
	}
	return &a.Workload, nil
}

// setGroups attaches exactly the annotations groups ids to the service.
func (w workload) setGroups(ctx context.Context, q *qovery.Client, ids []string) error {
	var err error
	if w.kind == kindContainer {
		_, err = q.SetContainerAnnotationsGroups(ctx, w.id, ids)
	} else {
		_, err = q.SetApplicationAnnotationsGroups(ctx, w.id, ids)
	}
	return err
}

// deployment is the redeployment of the service, of the environment
// envID, with its current configuration.
func (w workload) deployment(envID string) qovery.ServiceDeploy {
	if w.kind == kindContainer {
		return qovery.ServiceDeploy{Kind: qovery.ServiceContainer, ID: w.id, EnvironmentID: envID}
	}
	return qovery.ServiceDeploy{Kind: qovery.ServiceApplication, ID: w.id, EnvironmentID: envID}
}

// status reads the deployment status.
func (w workload) status(ctx context.Context, q *qovery.Client) (*qovery.Status, error) {
	if w.kind == kindContainer {
		return q.GetContainerStatus(ctx, w.id)
	}
	return q.GetApplicationStatus(ctx, w.id)
}

// resourceID is the id attribute: APPLICATION_ID/ANNOTATIONS_GROUP_ID, or
// container/CONTAINER_ID/ANNOTATIONS_GROUP_ID.
func resourceID(w workload, groupID string) string {
	if w.kind == kindContainer {
		return kindContainer + "/" + w.id + "/" + groupID
	}
	return w.id + "/" + groupID
}

// creationKey names the redeployment of the creation of m
// (qovery.Client.ExpectDeploy), "" when it makes none, when it awaits the
// operator first, or while its service or hostname is unknown.
func (m *exposedServiceModel) creationKey() string {
	if m.OperatorID.IsNull() || m.Redeploy.IsUnknown() || !m.Redeploy.ValueBool() || !m.attaches() || !m.workloadKnown() ||
		m.Hostname.IsUnknown() {
		return ""
	}
	w := m.workload()
	return "exposure:" + w.kind + "/" + w.id + "/" + m.Hostname.ValueString()
}
