package fragment

import (
	"errors"
	"fmt"
	"strings"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// The attributes every fragment resource has.
const (
	// IDAttr is the import ID of the resource.
	IDAttr = "id"
	// MarkerAttr is the marker comment of the entry, without its "//".
	MarkerAttr = "marker"
	// OwnerAttr is the owner of the entry (of the approvers, for an auto
	// approver), written after "#" in its marker.
	OwnerAttr = "owner"
)

// entryOwner is the owner attribute of a grant, a tag owner or a policy
// test: what names the kind, and marker is an example of its marker.
func entryOwner(what, marker string) Attr {
	return Attr{Name: OwnerAttr, Type: String, Computed: true, Kept: true,
		Description: "Owner of the " + what + ", drawn at random when this resource creates it (or first reads an entry " +
			"marked before markers named their owner): lower-case letters and digits, written after `#` in its marker comment, " +
			"as in `// " + marker + "#p7mv2rt4ha`. Another configuration that declares the same entry is refused at plan, " +
			"and a destroy removes the entry only while it carries this owner."}
}

// selectorRule says what a source or a destination must be.
const selectorRule = "must be a valid selector"

// ownerRule says what an owner or an approver must be.
const ownerRule = "must be a user email, group:, autogroup: or tag:"

// namedKey is the key of a kind of fragment found by its marker, named by
// its name attribute.
func namedKey(kind policyfile.Kind) func(Values) (policyfile.Key, bool) {
	return func(v Values) (policyfile.Key, bool) {
		name, ok := v.str("name")
		owner, _ := v.str(OwnerAttr)
		return policyfile.Key{Kind: kind, Name: name, Owner: owner}, ok
	}
}

func nameValues(key policyfile.Key) Values { return withOwner(Values{"name": key.Name}, key) }

// withOwner adds to v the owner of key, null when it has none.
func withOwner(v Values, key policyfile.Key) Values {
	v[OwnerAttr] = nil
	if key.Owner != "" {
		v[OwnerAttr] = key.Owner
	}
	return v
}

// namedImport is the key of an import ID that is the name of a fragment of
// kind; what says what that name is.
func namedImport(kind policyfile.Kind, what string) func(string) (policyfile.Key, error) {
	return func(id string) (policyfile.Key, error) {
		if !NameRE.MatchString(id) {
			return policyfile.Key{}, errors.New(what)
		}
		return policyfile.Key{Kind: kind, Name: id}, nil
	}
}

// emptyList reports whether v is null or an empty list.
func emptyList(v any) bool {
	ss, _ := v.([]string)
	return v == nil || len(ss) == 0
}

// Grant describes qtail_grant; its content is also each grant of a
// qtail_grants.
var Grant = &Kind{
	Kind: policyfile.KindGrant,
	Type: "qtail_grant",
	What: "grant",
	Description: "One grant of the tailnet policy file: who (`src`) may reach what (`dst`), on which ports (`ip`) " +
		"or with which application capabilities (`app`). qtail writes it as one element of `grants`, marked by the comment " +
		"`// qtail:grant:NAME#OWNER` on the line above it, where `OWNER` is this resource's `owner`, and never touches the rest " +
		"of the policy file, so that several Terraform configurations can share one tailnet policy.\n\n" +
		"The grant is this resource's alone: another configuration that declares the same name is refused at plan, even with " +
		"the same content, and a destroy removes the grant only while its marker names this resource's owner. A marker " +
		"written before markers named their owner gets it on the next refresh, in place, with no change in the plan.\n\n" +
		"At plan time qtail checks the values locally, then asks Tailscale to validate the policy file as it would be " +
		"with this grant, and warns while the default allow-all rule of a new tailnet is still in the file.",
	Attrs: []Attr{
		{Name: IDAttr, Type: String, Computed: true, Description: "Import ID of the grant: its `name`."},
		{Name: "name", Type: String, Required: true, Replaces: true, Rule: NameRule, Check: CheckName,
			Description: "Name of the grant, written in its marker comment `// qtail:grant:NAME`. It must be unique among " +
				"all the configurations that share the policy file. Letters, digits, `.`, `_` and `-`, starting with a letter or a digit. " +
				"Changing it replaces the grant."},
		{Name: "src", Type: List, Required: true, MinItems: 1, Rule: selectorRule, Check: selector(policyfile.GrantSrc), Member: "src",
			Description: "Sources: `*`, user emails, `group:`, `tag:`, `autogroup:` names, hosts, IPs or CIDRs. " +
				"At least one."},
		{Name: "dst", Type: List, Required: true, MinItems: 1, Rule: selectorRule, Check: selector(policyfile.GrantDst), Member: "dst",
			Description: "Destinations: `*`, user emails, `group:`, `tag:`, `autogroup:`, `svc:` names, hosts, IPs or CIDRs, " +
				"without ports (ports go in `ip`). At least one."},
		{Name: "ip", Type: List, Optional: true, Member: "ip",
			Rule: "must be a port, a port range or \"*\", optionally after a protocol", Check: policyfile.ValidIPPort,
			Description: "Network access, one port or port range per entry, optionally after a protocol: `*`, `443`, " +
				"`80-443`, `tcp:443`, `udp:53`, `icmp:*`. At least one of `ip` and `app` must be set."},
		{Name: "app", Type: JSON, Optional: true, Member: "app",
			Rule: "must be a JSON object of capability names to lists of objects", Check: CheckAppJSON,
			Description: "Application capabilities, as a JSON object (use `jsonencode`) that maps each capability name, " +
				"of the form `{domain}/{path}`, to a list of objects, for example " +
				"`jsonencode({ \"tailscale.com/cap/kubernetes\" = [{ impersonate = { groups = [\"system:masters\"] } }] })`. " +
				"Formatting and member order do not matter: a value that means the same JSON shows no difference."},
		{Name: "via", Type: List, Optional: true, Member: "via", Rule: "must be a tag", Check: policyfile.ValidVia,
			Description: "Tags of the devices (subnet routers, exit nodes, app connectors) through which the access is routed."},
		{Name: "src_posture", Type: List, Optional: true, Member: "srcPosture", Rule: "must be a posture:NAME", Check: CheckPosture,
			Description: "Device posture conditions the source must meet, as `posture:NAME` names from the `postures` section of the policy file."},
		{Name: MarkerAttr, Type: String, Computed: true,
			Description: "Marker comment that identifies the grant in the policy file, without the leading `//`, " +
				"for example `qtail:grant:web-to-billing`, which the policy file follows with `#` and the `owner`. It reads as an empty " +
				"string when the grant is in the policy file without its marker (a person removed the comment): the next apply puts it back."},
		entryOwner("grant", "qtail:grant:web-to-billing"),
	},
	ImportHint: "A grant is known by its marker only. To take over a grant written by hand, put the line " +
		"`// qtail:grant:NAME` on its own line just above it and import again, " +
		"or declare a grant with the same content: qtail then marks the existing grant instead of adding a copy.",
	DuplicateAdvice: "Give one of them another name, or remove one of them.",
	key:             namedKey(policyfile.KindGrant),
	keyValues:       nameValues,
	importKey:       namedImport(policyfile.KindGrant, "the name of a grant (the NAME of its marker // qtail:grant:NAME)"),
	validate: func(v Values) []Problem {
		if !v.known("ip", "app") || !emptyList(v["ip"]) || v["app"] != nil {
			return nil
		}
		return []Problem{{Attr: "ip", Summary: "Missing Access",
			Detail: "A grant needs at least one of ip and app: Tailscale refuses a grant whose ip and app are both empty. " +
				"Set ip (for example [\"tcp:443\"]) or app."}}
	},
}

// TagOwner describes qtail_tag_owner.
var TagOwner = &Kind{
	Kind: policyfile.KindTagOwner,
	Type: "qtail_tag_owner",
	What: "tag owner",
	Description: "One tag of the tailnet policy file's `tagOwners`: the tag and who may apply it to devices. " +
		"qtail writes it as the member `\"TAG\": [owners]` of `tagOwners`, marked by the comment " +
		"`// qtail:tag_owner:TAG#OWNER` on the line above it, where `OWNER` is this resource's `owner`, and never touches the " +
		"other tags. Another configuration that declares the same tag is refused at plan, and a destroy removes the tag only " +
		"while its marker names this resource's owner.\n\n" +
		"A tag that already exists in `tagOwners` without qtail's marker is not taken over silently: if its owners differ, " +
		"the plan fails and tells how to import it; if they are the same, qtail adopts it.",
	Attrs: []Attr{
		{Name: IDAttr, Type: String, Computed: true, Description: "Import ID of the tag owner: its `tag`."},
		{Name: "tag", Type: String, Required: true, Replaces: true, Rule: "must be a tag", Check: policyfile.ValidTag,
			Description: "The tag, `tag:` then a letter, then letters, digits or dashes, for example `tag:k8s-operator`. " +
				"Changing it replaces the tag owner."},
		{Name: "owners", Type: List, Required: true, Rule: ownerRule, Check: CheckOwner,
			Description: "Who may apply the tag: user emails, `group:` names, `autogroup:` names or other tags " +
				"(a device with an owner tag may apply this tag, as the Tailscale operator does with `tag:k8s`). " +
				"May be empty (`[]`), as for `tag:k8s-operator`: then only admins can apply the tag."},
		{Name: MarkerAttr, Type: String, Computed: true,
			Description: "Marker comment that identifies the tag owner in the policy file, without the leading `//`, " +
				"for example `qtail:tag_owner:tag:k8s`, which the policy file follows with `#` and the `owner`. It reads as an empty " +
				"string when the tag is in the policy file without its marker: the next apply puts the marker back."},
		entryOwner("tag owner", "qtail:tag_owner:tag:k8s"),
	},
	ListAttr:        "owners",
	ImportHint:      "Declare the tag in tagOwners first, or create it with a qtail_tag_owner resource.",
	DuplicateAdvice: "Give one of them another tag, or remove one of them.",
	key: func(v Values) (policyfile.Key, bool) {
		tag, ok := v.str("tag")
		owner, _ := v.str(OwnerAttr)
		return policyfile.Key{Kind: policyfile.KindTagOwner, Name: tag, Owner: owner}, ok
	},
	keyValues: func(key policyfile.Key) Values { return withOwner(Values{"tag": key.Name}, key) },
	importKey: func(id string) (policyfile.Key, error) {
		if err := policyfile.ValidTag(id); err != nil {
			return policyfile.Key{}, fmt.Errorf("a tag such as tag:k8s (%v)", err)
		}
		return policyfile.Key{Kind: policyfile.KindTagOwner, Name: id}, nil
	},
}

// AutoApprover describes qtail_auto_approver.
var AutoApprover = &Kind{
	Kind: policyfile.KindAutoApprover,
	Type: "qtail_auto_approver",
	What: "auto approver",
	Description: "Approvers of the tailnet policy file's `autoApprovers`: who may advertise a subnet route (`route`), " +
		"exit nodes (`exit_node = true`) or a Tailscale Service (`service`), approved without an admin. qtail adds each " +
		"approver to the list `autoApprovers.routes[\"CIDR\"]`, `autoApprovers.exitNode` or " +
		"`autoApprovers.services[\"svc:NAME\"]`, marked by the comment `// qtail:auto_approver:route:CIDR#OWNER`, " +
		"`// qtail:auto_approver:exitNode#OWNER` or `// qtail:auto_approver:service:svc:NAME#OWNER` on the line above it, " +
		"where `OWNER` is this resource's `owner`, and never touches the rest.\n\n" +
		"A Tailscale Service carries traffic only once its hosts are approved: an application exposed through an ingress " +
		"ProxyGroup (`qtail_exposed_service` with `proxy_group`) is the Service `svc:HOSTNAME`, hosted by the ProxyGroup's " +
		"devices, and needs a `qtail_auto_approver` with `service = \"svc:HOSTNAME\"` whose approvers include the " +
		"ProxyGroup's tags (or an admin's approval in the console).\n\n" +
		"The list is shared: other configurations that use the same tailnet (one per region, say) may add their own " +
		"approvers to the same route, exit nodes or Service, each with its own owner, and an approver that two of them need is " +
		"marked by both and stays until the last one removes it. An approver already in the list without a marker is " +
		"adopted. Inside one configuration, one resource lists all the approvers of a route: a second one for the same " +
		"route (or a second one for exit nodes, or for one Service) fails the plan. Lists and sections that qtail created go " +
		"when qtail removes their last approver.",
	Attrs: []Attr{
		{Name: IDAttr, Type: String, Computed: true,
			Description: "Import ID of the auto approver: `route:CIDR#OWNER` for a route, `exitNode#OWNER` for exit nodes, " +
				"`service:svc:NAME#OWNER` for a Tailscale Service. Import `route:CIDR`, `exitNode` or `service:svc:NAME`, without " +
				"an owner, to take over the approvers of the list that no owner marked."},
		{Name: "route", Type: String, Optional: true, Replaces: true, Rule: "must be a CIDR in canonical form", Check: policyfile.ValidCanonicalCIDR,
			Description: "The route, a CIDR in canonical form (no address bits set beyond the prefix length, " +
				"IPv6 in lower case), for example `10.20.0.0/16` or `fd7a:115c:a1e0:b1a::/64`. Exactly one of `route`, " +
				"`exit_node = true` and `service` must be set. Changing it replaces the auto approver."},
		{Name: "exit_node", Type: Bool, Optional: true, Computed: true, Default: false, Replaces: true,
			Description: "Set to `true` to manage the approvers of exit nodes (`autoApprovers.exitNode`) instead of a route. " +
				"Default `false`. Changing it replaces the auto approver."},
		{Name: "service", Type: String, Optional: true, Replaces: true,
			Rule: "must be svc:NAME (a lower-case DNS label) or a tag", Check: policyfile.ValidServiceApproverKey,
			Description: "The Tailscale Service whose hosts are approved (`autoApprovers.services`): `svc:NAME`, such as " +
				"`svc:billing-api` for an application exposed through an ingress ProxyGroup at the hostname `billing-api`, or a " +
				"tag, such as `tag:web`, for every Service that carries it. Exactly one of `route`, `exit_node = true` and " +
				"`service` must be set. Changing it replaces the auto approver."},
		{Name: "approvers", Type: List, Required: true, MinItems: 1, Unique: true, Rule: ownerRule, Check: CheckOwner,
			Description: "Who may advertise the route, exit node or Service with it approved: user emails, `group:` names, " +
				"`autogroup:` names or tags (the usual choice for a subnet router or the devices of a ProxyGroup, such as " +
				"`tag:k8s`). At least one."},
		{Name: "owner", Type: String, Computed: true, Kept: true,
			Description: "Owner of the approvers this resource adds, drawn at random when it is created: lower-case letters " +
				"and digits, written after `#` in the marker of each approver."},
		{Name: MarkerAttr, Type: String, Computed: true,
			Description: "Marker comment that stands above each approver this resource adds, without the leading `//`, " +
				"for example `qtail:auto_approver:route:10.20.0.0/16#k3x9q2mfa7`. It reads as an empty string for approvers " +
				"that no owner marked (after an import of `route:CIDR`): the next apply marks them."},
	},
	ListAttr:   "approvers",
	ImportHint: "Declare it in autoApprovers first, or create it with a qtail_auto_approver resource.",
	DuplicateAdvice: "List every approver in one of them (approvers = [...]) and remove the other. " +
		"Other configurations sharing the policy file may add their own approvers to the same list; inside one configuration, one resource owns it.",
	key: func(v Values) (policyfile.Key, bool) {
		if !v.known("route", "exit_node", "service") {
			return policyfile.Key{}, false
		}
		route, hasRoute := v.str("route")
		service, hasService := v.str("service")
		exitNode := v["exit_node"] == true
		var key policyfile.Key
		switch {
		case exitNode && v["route"] == nil && v["service"] == nil:
			key = policyfile.ExitNodeKey()
		case !exitNode && hasRoute && v["service"] == nil:
			key = policyfile.RouteKey(route)
		case !exitNode && hasService && v["route"] == nil:
			key = policyfile.ServiceKey(service)
		default:
			return policyfile.Key{}, false
		}
		key.Owner, _ = v.str("owner")
		return key, true
	},
	keyValues: func(key policyfile.Key) Values {
		v := Values{"route": nil, "exit_node": true, "service": nil, "owner": nil}
		if cidr, ok := strings.CutPrefix(key.Name, policyfile.RoutePrefix); ok {
			v["route"], v["exit_node"] = cidr, false
		}
		if svc, ok := strings.CutPrefix(key.Name, policyfile.ServicePrefix); ok {
			v["service"], v["exit_node"] = svc, false
		}
		if key.Owner != "" {
			v["owner"] = key.Owner
		}
		return v
	},
	importKey: func(id string) (policyfile.Key, error) {
		const want = "route:CIDR (such as route:10.20.0.0/16), exitNode or service:svc:NAME (such as service:svc:billing-api), " +
			"each optionally followed by #OWNER"
		name, owner, hasOwner := strings.Cut(id, "#")
		key := policyfile.Key{Kind: policyfile.KindAutoApprover, Name: name, Owner: owner}
		if hasOwner && owner == "" {
			return policyfile.Key{}, errors.New(want + " (the owner is empty)")
		}
		if svc, ok := strings.CutPrefix(name, policyfile.ServicePrefix); ok {
			if err := policyfile.ValidServiceApproverKey(svc); err != nil {
				return policyfile.Key{}, fmt.Errorf("%s (%v)", want, err)
			}
		} else if name != policyfile.ExitNodeName {
			cidr, ok := strings.CutPrefix(name, policyfile.RoutePrefix)
			if !ok {
				return policyfile.Key{}, errors.New(want)
			}
			if err := policyfile.ValidCanonicalCIDR(cidr); err != nil {
				return policyfile.Key{}, fmt.Errorf("%s (%v)", want, err)
			}
		}
		if err := key.Validate(); err != nil {
			return policyfile.Key{}, fmt.Errorf("%s (%v)", want, err)
		}
		return key, nil
	},
	validate: func(v Values) []Problem {
		if !v.known("route", "exit_node", "service") {
			return nil
		}
		exitNode := v["exit_node"] == true
		switch {
		case v["service"] != nil && (exitNode || v["route"] != nil):
			return []Problem{{Attr: "service", Summary: "Conflicting Attributes",
				Detail: "Set one of route (the approvers of one route), exit_node = true (the approvers of exit nodes) and " +
					"service (the approvers of the hosts of a Tailscale Service), not two: one qtail_auto_approver for each."}}
		case exitNode && v["route"] != nil:
			return []Problem{{Attr: "route", Summary: "Conflicting Attributes",
				Detail: "Set either route (the approvers of one route) or exit_node = true (the approvers of exit nodes), not both. " +
					"Exit nodes can also be approved as the routes 0.0.0.0/0 and ::/0."}}
		case !exitNode && v["route"] == nil && v["service"] == nil:
			return []Problem{{Attr: "route", Summary: "Missing Route",
				Detail: "Set route to the CIDR whose approvers this is, exit_node = true for the approvers of exit nodes, or " +
					"service to the Tailscale Service (svc:NAME) whose hosts it approves."}}
		}
		return nil
	},
}

// PolicyTest describes qtail_policy_test.
var PolicyTest = &Kind{
	Kind: policyfile.KindPolicyTest,
	Type: "qtail_policy_test",
	What: "policy test",
	Description: "One test of the tailnet policy file: from a source, which destinations must be reachable (`accept`) " +
		"and which must not (`deny`). qtail writes it as one element of `tests`, marked by the comment " +
		"`// qtail:policy_test:NAME#OWNER` on the line above it, where `OWNER` is this resource's `owner` (another configuration " +
		"that declares the same name is refused at plan, and a destroy removes only this resource's test). From then on Tailscale itself refuses every change of the policy " +
		"file that breaks the test, whoever makes it: another Terraform run, the admin console or a GitOps push.",
	// proto comes last: a rejection that quotes a destination is blamed
	// on it rather than on the protocol.
	Attrs: []Attr{
		{Name: IDAttr, Type: String, Computed: true, Description: "Import ID of the policy test: its `name`."},
		{Name: "name", Type: String, Required: true, Replaces: true, Rule: NameRule, Check: CheckName,
			Description: "Name of the test, written in its marker comment `// qtail:policy_test:NAME`. It must be unique among " +
				"all the configurations that share the policy file. Letters, digits, `.`, `_` and `-`, starting with a letter or a digit. " +
				"Changing it replaces the test."},
		// "user" and "allow" are the legacy names of src and accept.
		{Name: "src", Type: String, Required: true, Rule: selectorRule, Check: selector(policyfile.TestSrc), Member: "src", Aliases: []string{"user"},
			Description: "The source the test runs from: one user email, `group:`, `tag:`, host name or IP. " +
				"Wildcards are not allowed."},
		{Name: "accept", Type: List, Optional: true, Rule: selectorRule, Check: selector(policyfile.TestDst), Member: "accept", Aliases: []string{"allow"},
			Description: "Destinations that `src` must reach, each a host, tag, user or IP followed by one port, " +
				"such as `tag:billing:443` or `100.64.0.10:22`. At least one of `accept` and `deny` must be set."},
		{Name: "deny", Type: List, Optional: true, Rule: selectorRule, Check: selector(policyfile.TestDst), Member: "deny",
			Description: "Destinations that `src` must not reach, in the form of `accept`."},
		{Name: "proto", Type: String, Optional: true, Rule: "must be an IP protocol name or number", Check: CheckProto, Member: "proto",
			Description: "IP protocol of the test, such as `tcp`, `udp` or `icmp`, or an IANA protocol number. " +
				"When unset, the test covers TCP, UDP and ICMP as Tailscale does."},
		{Name: MarkerAttr, Type: String, Computed: true,
			Description: "Marker comment that identifies the test in the policy file, without the leading `//`, " +
				"for example `qtail:policy_test:ops-reach-billing`, which the policy file follows with `#` and the `owner`. It reads " +
				"as an empty string when the test is in the policy file without its marker: the next apply puts the marker back."},
		entryOwner("policy test", "qtail:policy_test:ops-reach-billing"),
	},
	ImportHint: "A policy test is known by its marker only. To take over a test written by hand, put the line " +
		"`// qtail:policy_test:NAME` on its own line just above it and import again, " +
		"or declare a qtail_policy_test with the same content: qtail then marks the existing test instead of adding a copy.",
	DuplicateAdvice: "Give one of them another name, or remove one of them.",
	key:             namedKey(policyfile.KindPolicyTest),
	keyValues:       nameValues,
	importKey:       namedImport(policyfile.KindPolicyTest, "the name of a policy test (the NAME of its marker // qtail:policy_test:NAME)"),
	validate: func(v Values) []Problem {
		if !v.known("accept", "deny") || !emptyList(v["accept"]) || !emptyList(v["deny"]) {
			return nil
		}
		return []Problem{{Attr: "accept", Summary: "Missing Destinations",
			Detail: "A policy test needs at least one destination in accept or deny: Tailscale refuses a test with neither. " +
				"Add a destination such as \"tag:web:443\" to accept or deny."}}
	},
}

// AllowAllID is the ID (and import ID) of qtail_allow_all_removal: a
// tailnet has one policy file, so one such resource.
const AllowAllID = "allow_all"

// AllowAllRemoval describes qtail_allow_all_removal, which removes the
// default allow-all rule: it writes no entry.
var AllowAllRemoval = &Kind{
	Kind: policyfile.KindAllowAll,
	Type: "qtail_allow_all_removal",
	What: "allow-all removal",
	Description: "Removes the default allow-all rule that every new tailnet ships with " +
		"(the grant `{\"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"*\"]}`, or the ACL `{\"action\": \"accept\", \"src\": [\"*\"], \"dst\": [\"*:*\"]}`), " +
		"and keeps it removed: if someone puts it back by hand, the next plan shows this resource to be created again. " +
		"While that rule exists, every device reaches every proxy the operator creates and no grant restricts anything.\n\n" +
		"Only the rule is removed: every other byte of the policy file stays as it was. Before the change is written, " +
		"Tailscale validates the policy file without the rule, so a `qtail_policy_test` (or any test) that still relies on it " +
		"fails the plan. Make the grants that replace the rule dependencies of this resource.\n\n" +
		"Destroying this resource changes nothing in the policy file: qtail never writes the allow-all rule back.",
	Attrs: []Attr{
		{Name: IDAttr, Type: String, Computed: true, Kept: true, Description: "Always `" + AllowAllID + "`: a tailnet has one policy file."},
	},
	key:       func(Values) (policyfile.Key, bool) { return policyfile.AllowAllKey(), true },
	keyValues: func(policyfile.Key) Values { return Values{} },
	importKey: func(id string) (policyfile.Key, error) {
		if id != AllowAllID {
			return policyfile.Key{}, fmt.Errorf("%q, the only ID of qtail_allow_all_removal (a tailnet has one policy file)", AllowAllID)
		}
		return policyfile.AllowAllKey(), nil
	},
}
