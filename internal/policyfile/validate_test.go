package policyfile

import (
	"strings"
	"testing"
)

func TestValidTag(t *testing.T) {
	for _, s := range []string{"tag:k8s", "tag:k8s-operator", "tag:A1"} {
		if err := ValidTag(s); err != nil {
			t.Errorf("ValidTag(%q) = %v", s, err)
		}
	}
	for s, msg := range map[string]string{
		"k8s":          "tags must start with 'tag:'",
		"tag:":         "tag names must not be empty",
		"tag:1k8s":     "tag names must start with a letter, after 'tag:'",
		"tag:сервер":   "tag names must start with a letter, after 'tag:'",
		"tag:k8s_op":   "tag names can only contain numbers, letters, or dashes",
		"tag:k8s:22":   "tag names can only contain numbers, letters, or dashes",
		"tag:a.b":      "tag names can only contain numbers, letters, or dashes",
		"tag:web-ünïc": "tag names can only contain numbers, letters, or dashes",
	} {
		if err := ValidTag(s); err == nil || err.Error() != msg {
			t.Errorf("ValidTag(%q) = %v, want %q", s, err, msg)
		}
	}
}

func TestValidIPPort(t *testing.T) {
	for _, s := range []string{"*", "22", "80-443", "tcp:443", "tcp:80-443", "udp:53", "icmp:*", "ICMP:*", "47:*", "6:22", "sctp:9", "ipv6-icmp:*"} {
		if err := ValidIPPort(s); err != nil {
			t.Errorf("ValidIPPort(%q) = %v", s, err)
		}
	}
	for s, msg := range map[string]string{
		"icmp":       `port range "icmp": invalid first integer`,
		"tcp:0":      `port range "0": first port must be >0, or use '*' for wildcard`,
		"443-80":     `port range "443-80": first port must be <= last port`,
		"tcp:80-x":   `port range "80-x": invalid last integer`,
		"1-2-3":      `port range "1-2-3": too many dashes(-)`,
		"70000":      `port range "70000": invalid first integer`,
		"foo:22":     `proto name "foo" not known; use protocol number 0-255`,
		"256:*":      `proto name "256" not known; use protocol number 0-255`,
		":22":        `ip ":22": empty protocol`,
		"tcp:80,443": `ip "tcp:80,443": only one port range allowed; use one entry per range`,
		"":           "ip entries must not be empty",
	} {
		if err := ValidIPPort(s); err == nil || err.Error() != msg {
			t.Errorf("ValidIPPort(%q) = %v, want %q", s, err, msg)
		}
	}
}

func TestValidCIDR(t *testing.T) {
	for _, s := range []string{"10.0.0.0/16", "0.0.0.0/0", "::/0", "fd7a:115c:a1e0::/48", "192.168.1.7/32"} {
		if err := validCIDR(s); err != nil {
			t.Errorf("validCIDR(%q) = %v", s, err)
		}
	}
	for s, part := range map[string]string{
		"10.0.0.1/16": `use "10.0.0.0/16"`,
		"10.0.0.0":    "is not a CIDR",
		"10.0.0.0/33": "is not a CIDR",
		"tag:x":       "is not a CIDR",
	} {
		if err := validCIDR(s); err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("validCIDR(%q) = %v, want it to say %q", s, err, part)
		}
	}
}

func TestValidVia(t *testing.T) {
	if err := ValidVia("tag:exit"); err != nil {
		t.Error(err)
	}
	if err := ValidVia("autogroup:tagged"); err == nil || err.Error() != "via can only be a tag" {
		t.Errorf("ValidVia(autogroup:tagged) = %v", err)
	}
	if err := ValidVia("tag:1"); err == nil {
		t.Error("ValidVia(tag:1) passed")
	}
}

func TestValidSelector(t *testing.T) {
	ok := map[SelectorUse][]string{
		GrantSrc: {"*", "alice@example.com", "user:*@example.com", "group:eng", "tag:web", "autogroup:member",
			"autogroup:tagged", "autogroup:danger-all", "internal", "100.64.0.1", "10.0.0.0/8", "fd7a:115c:a1e0::1",
			"ipset:office", "100.64.0.1-100.64.0.9"},
		GrantDst: {"*", "tag:db", "autogroup:internet", "autogroup:self", "svc:db", "10.33.0.0/16", "example-4via6",
			"fd00:1::/64", "bob@example.com"},
		TestSrc: {"alice@example.com", "group:eng", "tag:web", "100.64.0.1", "host-a"},
		TestDst: {"tag:db:5432", "100.64.0.1:22", "host-a:80", "alice@example.com:22", "[fd7a::1]:443"},
	}
	for use, list := range ok {
		for _, s := range list {
			if err := ValidSelector(s, use); err != nil {
				t.Errorf("ValidSelector(%q, %d) = %v", s, use, err)
			}
		}
	}
	bad := map[SelectorUse]map[string]string{
		GrantSrc: {
			"":                  "must not be empty",
			"autogroup:self":    `"autogroup:self" not valid on the src side of a rule`,
			"autogroup:nobody":  "unknown autogroup",
			"tag:web:443":       "put ports in \"ip\"",
			"host:22":           "put ports in \"ip\"",
			"tag:1x":            "tag names must start with a letter",
			"svc:db":            "is not allowed here",
			"not a host":        `"not a host" contains spaces`,
			"-host":             "is not a valid selector",
			`["tag:a","tag:b"]`: "is JSON text, not one value",
			`{"tag":"a"}`:       "is JSON text, not one value",
			`"tag:a"`:           "contains quotes",
			"tag:a,tag:b":       "separated by commas",
			"user:alice":        `only "user:*@DOMAIN"`,
			// Found by FuzzValidSelector: a name after ipset: or svc:
			// was any bytes, and JSON turns invalid UTF-8 into U+FFFD.
			"ipset:\xff":    "is not valid UTF-8",
			"group:ops\xc3": "is not valid UTF-8",
		},
		GrantDst: {
			"0.0.0.0/0":            `dst "0.0.0.0/0": to allow all IP addresses, use "*" or "autogroup:internet"`,
			"::/0":                 `to allow all IP addresses`,
			"autogroup:danger-all": "cannot use autogroup:danger-all as a dst",
			// A range whose ends are not in order, or not of one family,
			// is no host name either.
			"100.64.0.9-100.64.0.1": "an IP range goes from a lower to a higher address of one family",
			"100.64.0.1-fd7a::1":    "an IP range goes from a lower to a higher address of one family",
		},
		TestSrc: {
			"*":          "tests cannot use wildcards",
			"10.0.0.0/8": "tests cannot use CIDR ranges",
			"tag:web:22": "a test src takes no port",
			"ipset:a":    "is not allowed here",
		},
		TestDst: {
			"tag:db":                "exactly one port",
			":22":                   `":22" is not a valid selector`,
			"hosta":                 "needs one port",
			"tag:db:*":              "exactly one port",
			"tag:db:80-90":          "exactly one port",
			"*:22":                  "tests cannot use wildcards",
			"autogroup:internet:80": "not allowed as a tests destination",
		},
	}
	for use, list := range bad {
		for s, part := range list {
			if err := ValidSelector(s, use); err == nil || !strings.Contains(err.Error(), part) {
				t.Errorf("ValidSelector(%q, %d) = %v, want it to say %q", s, use, err, part)
			}
		}
	}
}

func TestValidCanonicalCIDR(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"10.20.0.0/16", ""},
		{"fd7a:115c:a1e0:b1a::/64", ""},
		{"10.20.1.0/16", `use "10.20.0.0/16"`},
		{"FD7A:115C:A1E0:B1A::/64", `canonical form, "fd7a:115c:a1e0:b1a::/64"`},
		{"10.20.0.0", "is not a CIDR"},
	} {
		err := ValidCanonicalCIDR(tc.in)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: unexpected error %v", tc.in, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: error %v, want it to contain %q", tc.in, err, tc.want)
		}
	}
}
