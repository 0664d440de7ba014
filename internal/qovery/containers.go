package qovery

import (
	"context"
)

// ServiceTypeContainer is the service_type of a container.
const ServiceTypeContainer = "CONTAINER"

// ContainerRegistryRef names the container registry of a container's
// image.
type ContainerRegistryRef struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	URL  string `json:"url,omitempty"`
	// Kind is ECR, SCALEWAY_CR, DOCKER_HUB, GITHUB_CR, ...
	Kind string `json:"kind,omitempty"`
}

// Container is a container (a service run from an image of a container
// registry) as the API returns it.
type Container struct {
	Workload
	ImageName string `json:"image_name"`
	Tag       string `json:"tag"`
	// RegistryID is optional in answers; Registry.ID says the same.
	RegistryID string               `json:"registry_id,omitempty"`
	Registry   ContainerRegistryRef `json:"registry"`
}

// UnmarshalJSON decodes a container and keeps the body in Raw.
func (c *Container) UnmarshalJSON(b []byte) error {
	type plain Container
	return keepRaw(b, (*plain)(c), &c.Raw)
}

// GetContainer reads one container. A container that was deleted is an
// error for which IsNotFound is true, also when the API answers 403 for
// it, provided in names its environment (see GetHelm).
func (c *Client) GetContainer(ctx context.Context, id string, in ...Parent) (*Container, error) {
	return getService[Container](ctx, c, "container", id, in)
}

// ListContainers lists the containers of an environment.
func (c *Client) ListContainers(ctx context.Context, envID string) ([]Container, error) {
	return getList[Container](ctx, c, pathf("/environment/%s/container", envID), nil)
}

// SetContainerAnnotationsGroups attaches exactly the annotations groups
// groupIDs to a container (none detaches them all) and returns the
// container as edited. It works as SetApplicationAnnotationsGroups with a
// ContainerRequest, which also needs the image's registry_id: answers may
// give it only as registry.id.
func (c *Client) SetContainerAnnotationsGroups(ctx context.Context, containerID string, groupIDs []string) (*Container, error) {
	ctr, err := c.GetContainer(ctx, containerID)
	if err != nil {
		return nil, err
	}
	path := pathf("/container/%s", containerID)
	var req containerEdit
	if err := readEdit(path, ctr.Raw, &req, &req.workloadEdit, groupIDs); err != nil {
		return nil, err
	}
	if req.RegistryID == "" {
		req.RegistryID = ctr.Registry.ID
	}
	return putEdit[Container](ctx, c, path, &req)
}
