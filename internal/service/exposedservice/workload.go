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

// redeploy asks for a redeployment with the current configuration and
// returns the API's answer: the status of the request, queued or started.
func (w workload) redeploy(ctx context.Context, q *qovery.Client) (*qovery.Status, error) {
	if w.kind == kindContainer {
		return q.RedeployContainer(ctx, w.id)
	}
	return q.RedeployApplication(ctx, w.id)
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
