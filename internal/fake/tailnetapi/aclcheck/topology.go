package aclcheck

// User is a member of the fake tailnet, in the shape of the SaaS captures'
// topology.users entries.
type User struct {
	ID    int    `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// Node is a device of the fake tailnet, in the shape of the SaaS captures'
// topology.nodes values. User is the owning user's Name; tagged nodes have
// no user.
type Node struct {
	Hostname       string   `json:"hostname"`
	IPv4           string   `json:"ipv4"`
	IPv6           string   `json:"ipv6"`
	Tags           []string `json:"tags"`
	User           string   `json:"user,omitempty"`
	RoutableIPs    []string `json:"routable_ips"`
	ApprovedRoutes []string `json:"approved_routes"`
}

// Topology is the set of users and nodes that policy validation and policy
// tests are evaluated against.
type Topology struct {
	Users []User          `json:"users"`
	Nodes map[string]Node `json:"nodes"`
}
