// Package planned is what the plan of one provider instance tells the
// checks of the resources planned after it: the plan-time state that lets
// one resource's plan see another's.
//
// # What it knows
//
// A World holds, for one provider instance:
//
//   - the tailnet hostnames that exposures, connectors and ProxyGroups of
//     the plan claim, and the names of the cluster-scoped objects
//     (Connector, ProxyGroup) they render, so that two resources of one
//     configuration cannot plan the same one;
//   - the objects (annotations groups, Helm services, devices) of the
//     resources that the plan replaces: the replacement may take their
//     hostname or name;
//   - the Helm services and devices of operators whose creation failed
//     (tainted), and the clusters on which the plan installs or keeps an
//     operator, with the values file and the OAuth client it will run
//     with, where known;
//   - the ProxyGroups that qtail_proxy_group resources declare, with their
//     type, and the cluster of each environment read so far;
//   - the manifest services (connector, ProxyGroup, egress Service) that
//     Read refreshed, with their devices;
//   - during an apply, the Deletes in progress of the objects that need an
//     operator (exposures, connectors, ProxyGroups, egress Services), so
//     that an operator's Delete waits for those that Terraform destroys
//     in parallel with it.
//
// The fragment changes of the tailnet policy file planned so far are kept
// by the policy.Planner of the same provider instance (conn.Clients).
//
// # In what order Terraform fills it
//
// Terraform configures one provider instance per operation and walks the
// resources in dependency order, several at once (up to -parallelism).
// For each resource it calls Read (the refresh), then ModifyPlan. So a
// resource's plan sees what its own Read recorded, and what the resources
// it depends on (directly or not) recorded in their plans; a resource it
// does not depend on may be planned before or after it. That is why the
// diagnostics of qtail ask for a reference (environment_id =
// qtail_operator.NAME.environment_id, tags = [qtail_tag_owner.NAME.tag])
// or a depends_on whenever a check needs another resource's plan. A claim
// is symmetric: whichever of two exposures of the same hostname is planned
// second fails.
//
// Terraform plans a replacement as a delete (planned with the old state)
// followed by a creation planned again without state; a tainted resource is
// refreshed, then planned as a creation. The World is how such a creation
// learns that the objects it meets are its predecessor's.
//
// An apply plans every resource again (with the values now known) in a new
// provider instance, so the World is filled again from empty.
//
// # Limits
//
//   - With -target, only the targeted resources and their dependencies are
//     planned: a conflict with another resource of the configuration is
//     seen only once that resource exists on the APIs (its annotations
//     group, its device, its Helm service), and an operator that is not
//     targeted does not count as planned.
//   - A refresh-only plan (terraform plan -refresh-only) calls Read and
//     never ModifyPlan: only the refresh records (failed operators,
//     refreshed manifest services) are made, and nothing is checked.
//   - Two separate runs (two configurations sharing a tailnet, or two
//     plans of one configuration) share nothing here: each sees what the
//     other has applied through the APIs, never what it plans. Two plans
//     made at the same time can both pass and collide at apply; the policy
//     file is protected by If-Match, and the other conflicts surface as
//     errors of the apply (a suffixed MagicDNS name, a Helm name taken).
package planned
