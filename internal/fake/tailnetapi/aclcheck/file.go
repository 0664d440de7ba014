package aclcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tailscale/hujson"
)

// The types below mirror the policy file schema. encoding/json matches
// object keys to fields case-insensitively, as SaaS does ("ACLs",
// "TagOwners", "Action"), and the decoder rejects unknown fields with
// SaaS's `json: unknown field "x"`. Sections qtail does not inspect are
// kept as raw JSON.

// policyFile is the top level of a policy file.
type policyFile struct {
	ACLs                []aclRule           `json:"acls"`
	Grants              []grantRule         `json:"grants"`
	Groups              map[string][]string `json:"groups"`
	Hosts               map[string]string   `json:"hosts"`
	TagOwners           map[string][]string `json:"tagOwners"`
	AutoApprovers       *autoApprovers      `json:"autoApprovers"`
	IPSets              map[string][]string `json:"ipsets"`
	Postures            map[string][]string `json:"postures"`
	DefaultSrcPosture   []string            `json:"defaultSrcPosture"`
	NodeAttrs           []nodeAttr          `json:"nodeAttrs"`
	SSH                 []sshRule           `json:"ssh"`
	AttrConfig          json.RawMessage     `json:"attrConfig"`
	ExternalTailnets    json.RawMessage     `json:"externalTailnets"`
	Tests               []policyTest        `json:"tests"`
	SSHTests            []sshTest           `json:"sshTests"`
	DERPMap             json.RawMessage     `json:"derpMap"`
	DisableIPv4         bool                `json:"disableIPv4"`
	OneCGNATRoute       string              `json:"oneCGNATRoute"`
	RandomizeClientPort bool                `json:"randomizeClientPort"`
	NodeVisibility      json.RawMessage     `json:"nodeVisibility"`
}

// aclRule is a legacy ACL entry; users and ports are the old names of src
// and dst.
type aclRule struct {
	Action     string   `json:"action"`
	Src        []string `json:"src"`
	Users      []string `json:"users"`
	Proto      string   `json:"proto"`
	Dst        []string `json:"dst"`
	Ports      []string `json:"ports"`
	SrcPosture []string `json:"srcPosture"`
}

// grantRule is a grants entry.
type grantRule struct {
	Src        []string                     `json:"src"`
	Dst        []string                     `json:"dst"`
	IP         []string                     `json:"ip"`
	App        map[string][]json.RawMessage `json:"app"`
	Via        []string                     `json:"via"`
	SrcPosture []string                     `json:"srcPosture"`
}

// autoApprovers is the autoApprovers section.
type autoApprovers struct {
	Routes   map[string][]string `json:"routes"`
	ExitNode []string            `json:"exitNode"`
	Services map[string][]string `json:"services"`
}

// nodeAttr is a nodeAttrs entry.
type nodeAttr struct {
	Target []string                     `json:"target"`
	Attr   []string                     `json:"attr"`
	IPPool []string                     `json:"ipPool"`
	App    map[string][]json.RawMessage `json:"app"`
}

// sshRule is an ssh entry.
type sshRule struct {
	Action      string   `json:"action"`
	Src         []string `json:"src"`
	Dst         []string `json:"dst"`
	Users       []string `json:"users"`
	CheckPeriod *string  `json:"checkPeriod"`
	AcceptEnv   []string `json:"acceptEnv"`
	SrcPosture  []string `json:"srcPosture"`
}

// policyTest is a tests entry; user and allow are the old names of src and
// accept.
type policyTest struct {
	Src             string         `json:"src"`
	User            string         `json:"user"`
	Proto           string         `json:"proto"`
	Accept          []string       `json:"accept"`
	Allow           []string       `json:"allow"`
	Deny            []string       `json:"deny"`
	SrcPostureAttrs map[string]any `json:"srcPostureAttrs"`
}

// sshTest is an sshTests entry.
type sshTest struct {
	Src             string         `json:"src"`
	Dst             []string       `json:"dst"`
	Accept          []string       `json:"accept"`
	Check           []string       `json:"check"`
	Deny            []string       `json:"deny"`
	SrcPostureAttrs map[string]any `json:"srcPostureAttrs"`
}

// decodeFile parses HuJSON (comments and trailing commas allowed) and
// decodes it strictly. b is left as it is: the HuJSON parser works in
// place, so it is given a copy.
func decodeFile(b []byte) (*policyFile, error) {
	std, err := hujson.Standardize(bytes.Clone(b))
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(std))
	dec.DisallowUnknownFields()
	var f policyFile
	if err := dec.Decode(&f); err != nil {
		return nil, jsonError(err)
	}
	f.normalize()
	return &f, nil
}

// jsonError phrases decoding errors without Go type names where the
// standard library would print them.
func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return fmt.Errorf("json: cannot unmarshal %s into the policy object", te.Value)
		}
		return fmt.Errorf("json: cannot unmarshal %s into field %q of type %s", te.Value, te.Field, te.Type)
	}
	return err
}

// normalize folds the legacy field names into the current ones.
func (f *policyFile) normalize() {
	for i := range f.ACLs {
		a := &f.ACLs[i]
		a.Src = append(a.Src, a.Users...)
		a.Users = nil
		a.Dst = append(a.Dst, a.Ports...)
		a.Ports = nil
	}
	for i := range f.Tests {
		t := &f.Tests[i]
		if t.Src == "" {
			t.Src = t.User
		}
		t.User = ""
		t.Accept = append(t.Accept, t.Allow...)
		t.Allow = nil
	}
}
