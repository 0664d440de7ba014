package tailnetapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/qtail/terraform-provider-qtail/internal/fake/tailnetapi/aclcheck"
)

// Device is a device of the fake tailnet.
type Device struct {
	// ID is the legacy numeric id, NodeID the preferred one
	// ("n...CNTRL"). Both address the device in /device/{id}.
	ID     string
	NodeID string
	// Name is the MagicDNS name, "label.MagicDNSSuffix", without a
	// trailing dot. The label is the hostname, with "-1", "-2", ... added
	// when another device already uses it.
	Name     string
	Hostname string
	// User is the owner's login name (an email); empty for a tagged
	// device that has no owner in the topology.
	User               string
	OS                 string
	ClientVersion      string
	Addresses          []string
	Tags               []string
	AdvertisedRoutes   []string
	EnabledRoutes      []string
	Authorized         bool
	ConnectedToControl bool
	IsEphemeral        bool
	Created            time.Time
	LastSeen           time.Time

	// topoKey is the key of the device in Topology().Nodes.
	topoKey string
}

// DeviceSpec describes a device to add.
type DeviceSpec struct {
	Hostname string
	// User is the owner's login name; leave empty for tagged devices.
	User             string
	Tags             []string
	AdvertisedRoutes []string
	EnabledRoutes    []string
	// OS defaults to "linux".
	OS string
	// IPv4 and IPv6 fix the device's addresses; empty ones are assigned
	// (100.64.0.0/10 and fd7a:115c:a1e0::/48).
	IPv4, IPv6 string
	// Offline makes the device not connected to the control plane.
	Offline   bool
	Ephemeral bool
}

func (d *Device) clone() Device {
	c := *d
	c.Addresses = slices.Clone(d.Addresses)
	c.Tags = slices.Clone(d.Tags)
	c.AdvertisedRoutes = slices.Clone(d.AdvertisedRoutes)
	c.EnabledRoutes = slices.Clone(d.EnabledRoutes)
	return c
}

// AddDevice adds a device and returns it.
func (s *Server) AddDevice(spec DeviceSpec) Device {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addDeviceLocked(spec, "").clone()
}

func (s *Server) addDeviceLocked(spec DeviceSpec, topoKey string) *Device {
	s.deviceSeq++
	n := s.deviceSeq
	now := s.now().UTC().Truncate(time.Second)
	label := s.freeLabelLocked(dnsLabel(spec.Hostname), nil)
	if topoKey == "" {
		topoKey = label
		for i := 1; slices.ContainsFunc(s.devices, func(d *Device) bool { return d.topoKey == topoKey }); i++ {
			topoKey = label + "-" + strconv.Itoa(i)
		}
	}
	v4, v6 := spec.IPv4, spec.IPv6
	if v4 == "" {
		// 100.64.0.0/10, skipping .0 and .255 host octets.
		m := n - 1
		v4 = fmt.Sprintf("100.%d.%d.%d", 64+(m/(254*256))%64, (m/254)%256, m%254+1)
	}
	if v6 == "" {
		if a, err := netip.ParseAddr(v4); err == nil && a.Is4() {
			b := a.As4()
			v6 = fmt.Sprintf("fd7a:115c:a1e0::%x:%x", uint16(b[0])<<8|uint16(b[1]), uint16(b[2])<<8|uint16(b[3]))
		} else {
			v6 = fmt.Sprintf("fd7a:115c:a1e0::%x", n)
		}
	}
	osName := spec.OS
	if osName == "" {
		osName = "linux"
	}
	d := &Device{
		ID:                 strconv.FormatInt(5_000_000_000_000_000+int64(n)*7_919, 10),
		NodeID:             "n" + strconv.FormatInt(int64(n)*1_234_567+890_123, 36) + "CNTRL",
		Name:               label + "." + s.opts.MagicDNSSuffix,
		Hostname:           spec.Hostname,
		User:               spec.User,
		OS:                 osName,
		ClientVersion:      "1.84.0-fake",
		Addresses:          []string{v4, v6},
		Tags:               slices.Clone(spec.Tags),
		AdvertisedRoutes:   slices.Clone(spec.AdvertisedRoutes),
		Authorized:         true,
		ConnectedToControl: !spec.Offline,
		IsEphemeral:        spec.Ephemeral,
		Created:            now,
		LastSeen:           now,
		topoKey:            topoKey,
	}
	s.setEnabledLocked(d, spec.EnabledRoutes)
	s.devices = append(s.devices, d)
	return d
}

// dnsLabel turns a hostname into a MagicDNS label: lower case, characters
// other than letters, digits and '-' replaced by '-'.
func dnsLabel(hostname string) string {
	b := []byte(strings.ToLower(hostname))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			b[i] = '-'
		}
	}
	l := strings.Trim(string(b), "-")
	if l == "" {
		l = "device"
	}
	return l
}

// freeLabelLocked returns label, or label-N for the smallest N that no
// device other than self uses.
func (s *Server) freeLabelLocked(label string, self *Device) string {
	used := map[string]bool{}
	for _, d := range s.devices {
		if d != self {
			used[strings.TrimSuffix(d.Name, "."+s.opts.MagicDNSSuffix)] = true
		}
	}
	if !used[label] {
		return label
	}
	for i := 1; ; i++ {
		if c := label + "-" + strconv.Itoa(i); !used[c] {
			return c
		}
	}
}

// RemoveDevice removes the device with this id or node id and reports
// whether it existed.
func (s *Server) RemoveDevice(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.deviceIndexLocked(id)
	if i < 0 {
		return false
	}
	s.devices = slices.Delete(s.devices, i, i+1)
	return true
}

// RemoveDevicesByHostname removes every device with this hostname and
// returns how many there were.
func (s *Server) RemoveDevicesByHostname(hostname string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	before := len(s.devices)
	s.devices = slices.DeleteFunc(s.devices, func(d *Device) bool { return d.Hostname == hostname })
	return before - len(s.devices)
}

// Devices returns a copy of every device, in the order they were added.
func (s *Server) Devices() []Device {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Device, 0, len(s.devices))
	for _, d := range s.devices {
		out = append(out, d.clone())
	}
	return out
}

// SetTopology replaces the tailnet's users and devices. Each node becomes a
// device: its key in Nodes stays its key in Topology(), routable_ips are
// the advertised routes and approved_routes the enabled ones, and a node's
// user (a user Name) becomes that user's email.
func (s *Server) SetTopology(t aclcheck.Topology) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setTopologyLocked(t)
}

func (s *Server) setTopologyLocked(t aclcheck.Topology) {
	s.users = slices.Clone(t.Users)
	// deviceSeq keeps counting: ids of removed devices are never reused.
	s.devices = nil
	keys := make([]string, 0, len(t.Nodes))
	for k := range t.Nodes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		n := t.Nodes[k]
		host := n.Hostname
		if host == "" {
			host = k
		}
		user := n.User
		for _, u := range s.users {
			if u.Name == n.User && u.Email != "" {
				user = u.Email
			}
		}
		s.addDeviceLocked(DeviceSpec{
			Hostname:         host,
			User:             user,
			Tags:             n.Tags,
			AdvertisedRoutes: n.RoutableIPs,
			EnabledRoutes:    n.ApprovedRoutes,
			IPv4:             n.IPv4,
			IPv6:             n.IPv6,
		}, k)
	}
}

// Topology returns the users and devices in the shape policy checks use:
// a device's approved routes are its enabled routes, its user is the
// matching user's Name.
func (s *Server) Topology() aclcheck.Topology {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.topologyLocked()
}

func (s *Server) topologyLocked() aclcheck.Topology {
	t := aclcheck.Topology{Users: slices.Clone(s.users), Nodes: map[string]aclcheck.Node{}}
	for _, d := range s.devices {
		n := aclcheck.Node{
			Hostname:       d.Hostname,
			Tags:           nonNil(d.Tags),
			RoutableIPs:    nonNil(d.AdvertisedRoutes),
			ApprovedRoutes: nonNil(d.EnabledRoutes),
		}
		for _, a := range d.Addresses {
			if ip, err := netip.ParseAddr(a); err == nil {
				if ip.Is4() {
					n.IPv4 = a
				} else {
					n.IPv6 = a
				}
			}
		}
		if d.User != "" {
			n.User = d.User
			for _, u := range s.users {
				if u.Email == d.User || u.Name == d.User {
					n.User = u.Name
				}
			}
		}
		t.Nodes[d.topoKey] = n
	}
	return t
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

func (s *Server) deviceIndexLocked(id string) int {
	if id == "" {
		return -1
	}
	return slices.IndexFunc(s.devices, func(d *Device) bool { return d.ID == id || d.NodeID == id })
}

// deviceJSON is the wire shape of a device. Route lists and client
// connectivity are only sent with fields=all.
type deviceJSON struct {
	Addresses                 []string            `json:"addresses"`
	Authorized                bool                `json:"authorized"`
	BlocksIncomingConnections bool                `json:"blocksIncomingConnections"`
	ClientVersion             string              `json:"clientVersion"`
	Created                   time.Time           `json:"created"`
	Expires                   time.Time           `json:"expires"`
	Hostname                  string              `json:"hostname"`
	ID                        string              `json:"id"`
	IsEphemeral               bool                `json:"isEphemeral"`
	IsExternal                bool                `json:"isExternal"`
	KeyExpiryDisabled         bool                `json:"keyExpiryDisabled"`
	LastSeen                  *time.Time          `json:"lastSeen,omitempty"`
	ConnectedToControl        bool                `json:"connectedToControl"`
	MachineKey                string              `json:"machineKey"`
	Name                      string              `json:"name"`
	NodeID                    string              `json:"nodeId"`
	NodeKey                   string              `json:"nodeKey"`
	OS                        string              `json:"os"`
	Tags                      []string            `json:"tags,omitempty"`
	TailnetLockError          string              `json:"tailnetLockError"`
	TailnetLockKey            string              `json:"tailnetLockKey"`
	UpdateAvailable           bool                `json:"updateAvailable"`
	User                      string              `json:"user"`
	AdvertisedRoutes          *[]string           `json:"advertisedRoutes,omitempty"`
	EnabledRoutes             *[]string           `json:"enabledRoutes,omitempty"`
	ClientConnectivity        *clientConnectivity `json:"clientConnectivity,omitempty"`
}

type clientConnectivity struct {
	Endpoints             []string        `json:"endpoints"`
	DERP                  string          `json:"derp"`
	MappingVariesByDestIP bool            `json:"mappingVariesByDestIP"`
	Latency               map[string]any  `json:"latency"`
	ClientSupports        map[string]bool `json:"clientSupports"`
}

// routesJSON is the body of GET and POST /device/{id}/routes.
type routesJSON struct {
	AdvertisedRoutes []string `json:"advertisedRoutes"`
	EnabledRoutes    []string `json:"enabledRoutes"`
}

func (d *Device) wire(all bool) deviceJSON {
	out := deviceJSON{
		Addresses:          slices.Clone(d.Addresses),
		Authorized:         d.Authorized,
		ClientVersion:      d.ClientVersion,
		Created:            d.Created,
		Expires:            d.Created.Add(180 * 24 * time.Hour),
		Hostname:           d.Hostname,
		ID:                 d.ID,
		IsEphemeral:        d.IsEphemeral,
		KeyExpiryDisabled:  len(d.Tags) > 0,
		ConnectedToControl: d.ConnectedToControl,
		MachineKey:         "mkey:" + fakeKeyHex("machine", d.NodeID),
		Name:               d.Name,
		NodeID:             d.NodeID,
		NodeKey:            "nodekey:" + fakeKeyHex("node", d.NodeID),
		OS:                 d.OS,
		Tags:               slices.Clone(d.Tags),
		User:               d.User,
	}
	if out.User == "" && len(d.Tags) > 0 {
		// Tagged devices are owned by the tailnet, not by a person.
		out.User = "tagged-devices"
	}
	if !d.ConnectedToControl {
		ls := d.LastSeen
		out.LastSeen = &ls
	}
	if all {
		adv, en := nonNil(d.AdvertisedRoutes), nonNil(d.EnabledRoutes)
		out.AdvertisedRoutes, out.EnabledRoutes = &adv, &en
		out.ClientConnectivity = &clientConnectivity{
			Endpoints:      []string{},
			DERP:           "",
			Latency:        map[string]any{},
			ClientSupports: map[string]bool{"hairPinning": false, "ipv6": true, "pcp": false, "pmp": false, "udp": true, "upnp": false},
		}
	}
	return out
}

// fakeKeyHex derives a stable 64-hex-digit key for a device.
func fakeKeyHex(kind, id string) string {
	sum := sha256.Sum256([]byte(kind + "/" + id))
	return hex.EncodeToString(sum[:])
}

// allFields reads fields=default|all.
func allFields(w http.ResponseWriter, r *http.Request) (all, ok bool) {
	switch f := r.URL.Query().Get("fields"); f {
	case "", "default":
		return false, true
	case "all":
		return true, true
	default:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid fields %q: use \"default\" or \"all\"", f))
		return false, false
	}
}

// filterValue returns a device's top-level field as the strings a filter
// compares with; ok is false for fields that cannot be filtered on.
func filterValue(d deviceJSON, field string) (vals []string, ok bool) {
	b := strconv.FormatBool
	switch field {
	case "id":
		return []string{d.ID}, true
	case "nodeId":
		return []string{d.NodeID}, true
	case "name":
		return []string{d.Name}, true
	case "hostname":
		return []string{d.Hostname}, true
	case "user":
		return []string{d.User}, true
	case "os":
		return []string{d.OS}, true
	case "clientVersion":
		return []string{d.ClientVersion}, true
	case "tags":
		return d.Tags, true
	case "addresses":
		return d.Addresses, true
	case "authorized":
		return []string{b(d.Authorized)}, true
	case "isEphemeral":
		return []string{b(d.IsEphemeral)}, true
	case "isExternal":
		return []string{b(d.IsExternal)}, true
	case "keyExpiryDisabled":
		return []string{b(d.KeyExpiryDisabled)}, true
	case "connectedToControl":
		return []string{b(d.ConnectedToControl)}, true
	case "updateAvailable":
		return []string{b(d.UpdateAvailable)}, true
	case "blocksIncomingConnections":
		return []string{b(d.BlocksIncomingConnections)}, true
	}
	return nil, false
}

// handleListDevices is GET /tailnet/{tailnet}/devices with fields= and
// exact-match filters on top-level fields: every parameter must match,
// and for list fields (tags, addresses) every requested value must be
// present.
func (s *Server) handleListDevices(w http.ResponseWriter, r *http.Request, p principal) {
	if !p.allows("devices:core:read") {
		permissionDenied(w)
		return
	}
	all, ok := allFields(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	q.Del("fields")
	for field := range q {
		if _, ok := filterValue(deviceJSON{}, field); !ok {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid filter: %q is not a filterable device field", field))
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []deviceJSON{}
	for _, d := range s.devices {
		wd := d.wire(all)
		match := true
		for field, want := range q {
			have, _ := filterValue(wd, field)
			for _, v := range want {
				match = match && slices.Contains(have, v)
			}
		}
		if match {
			out = append(out, wd)
		}
	}
	writeJSON(w, http.StatusOK, map[string][]deviceJSON{"devices": out})
}

// errNoDevice is the real API's message for a device id it does not know
// (or that the caller may not manage), with status 404, as quoted in
// tailscale/terraform-provider-tailscale issues #526 and #585.
const errNoDevice = "no manageable device matching this ID found"

// deviceLocked finds the device of the {id} path segment, answering 404
// when there is none.
func (s *Server) deviceLocked(w http.ResponseWriter, r *http.Request) *Device {
	i := s.deviceIndexLocked(r.PathValue("id"))
	if i < 0 {
		writeError(w, http.StatusNotFound, errNoDevice)
		return nil
	}
	return s.devices[i]
}

// handleGetDevice is GET /device/{id}[?fields=all].
func (s *Server) handleGetDevice(w http.ResponseWriter, r *http.Request, p principal) {
	if !p.allows("devices:core:read") {
		permissionDenied(w)
		return
	}
	all, ok := allFields(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.deviceLocked(w, r); d != nil {
		writeJSON(w, http.StatusOK, d.wire(all))
	}
}

// handleDeleteDevice is DELETE /device/{id}.
func (s *Server) handleDeleteDevice(w http.ResponseWriter, r *http.Request, p principal) {
	if !p.allows("devices:core") {
		permissionDenied(w)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.deviceIndexLocked(r.PathValue("id"))
	if i < 0 {
		writeError(w, http.StatusNotFound, errNoDevice)
		return
	}
	s.devices = slices.Delete(s.devices, i, i+1)
	w.WriteHeader(http.StatusOK)
}

// handleGetRoutes is GET /device/{id}/routes.
func (s *Server) handleGetRoutes(w http.ResponseWriter, r *http.Request, p principal) {
	if !p.allows("devices:routes:read") {
		permissionDenied(w)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.deviceLocked(w, r); d != nil {
		writeJSON(w, http.StatusOK, routesJSON{AdvertisedRoutes: nonNil(d.AdvertisedRoutes), EnabledRoutes: nonNil(d.EnabledRoutes)})
	}
}

// handleSetRoutes is POST /device/{id}/routes: {"routes": [...]} replaces
// the enabled routes (they need not be advertised yet). The answer, and
// every later read, lists them sorted by address, not in the order sent.
func (s *Server) handleSetRoutes(w http.ResponseWriter, r *http.Request, p principal) {
	if !p.allows("devices:routes") {
		permissionDenied(w)
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var req struct {
		Routes []string `json:"routes"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid request body: "+err.Error())
		return
	}
	if err := checkRoutes(req.Routes); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.deviceLocked(w, r)
	if d == nil {
		return
	}
	s.setEnabledLocked(d, canonicalRoutes(req.Routes))
	writeJSON(w, http.StatusOK, routesJSON{AdvertisedRoutes: nonNil(d.AdvertisedRoutes), EnabledRoutes: nonNil(d.EnabledRoutes)})
}

// handleSetTags is POST /device/{id}/tags: {"tags": [...]} replaces the
// device's tags and answers 200 with an empty JSON object. As documented,
// tags that are malformed, not declared in tagOwners, or (for an OAuth
// access token) neither among the OAuth client's tags nor owned by them
// are refused with 400 "requested tags [...] are invalid or not
// permitted", listing them.
func (s *Server) handleSetTags(w http.ResponseWriter, r *http.Request, p principal) {
	if !p.allows("devices:core") {
		permissionDenied(w)
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var req struct {
		Tags []string `json:"tags"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid request body: "+err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.deviceLocked(w, r)
	if d == nil {
		return
	}
	if denied := s.deniedTagsLocked(p, req.Tags); len(denied) > 0 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("requested tags %v are invalid or not permitted", denied))
		return
	}
	d.Tags = slices.Clone(req.Tags)
	writeJSON(w, http.StatusOK, struct{}{})
}

// RenameDevice changes a device's hostname, as its client does when it
// starts with another hostname: the device keeps its ids, addresses and
// tags, and its MagicDNS name follows the new hostname (with a numeric
// suffix when another device uses it). It reports whether the device
// exists.
func (s *Server) RenameDevice(id, hostname string) (Device, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.deviceIndexLocked(id)
	if i < 0 {
		return Device{}, false
	}
	d := s.devices[i]
	if d.Hostname != hostname {
		d.Hostname = hostname
		d.Name = s.freeLabelLocked(dnsLabel(hostname), d) + "." + s.opts.MagicDNSSuffix
	}
	return d.clone(), true
}

// SetConnected marks a device online or offline, as when the process
// behind it starts or stops: an offline device stays on the tailnet,
// last seen now. It reports whether the device exists.
func (s *Server) SetConnected(id string, connected bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.deviceIndexLocked(id)
	if i < 0 {
		return false
	}
	d := s.devices[i]
	if d.ConnectedToControl && !connected {
		d.LastSeen = s.now().UTC().Truncate(time.Second)
	}
	d.ConnectedToControl = connected
	return true
}
