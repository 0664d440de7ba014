package manifestservice

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzServicePort checks the parser of an egress Service's ports: it never
// panics; it accepts exactly "tcp:N" and "udp:N" with N from 1 to 65535,
// written without sign or leading zeros; and an accepted port formats back
// to the same text (manifest.ServicePort.String).
func FuzzServicePort(f *testing.F) {
	for _, s := range []string{
		"tcp:5432", "udp:53", "tcp:1", "tcp:65535", "tcp:65536", "tcp:0", "tcp:05432", "tcp:+5432", "tcp:-1", "TCP:5432",
		"sctp:1", "tcp", "tcp:", ":5432", "tcp:5432:1", "tcp:1e3", "tcp: 22",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parseServicePort(s)
		proto, num, _ := strings.Cut(s, ":")
		n, numErr := strconv.Atoi(num)
		oracle := (proto == "tcp" || proto == "udp") && numErr == nil && n >= 1 && n <= 65535 &&
			num[0] >= '1' && num[0] <= '9'
		if (err == nil) != oracle {
			t.Fatalf("parseServicePort(%q) = %v, want accepted: %v", s, err, oracle)
		}
		if err != nil {
			if err.Error() == "" || checkServicePort(s) == nil {
				t.Fatalf("parseServicePort(%q) fails without a message, or checkServicePort accepts it", s)
			}
			return
		}
		if got := p.String(); got != s {
			t.Fatalf("%q formats back as %q", s, got)
		}
		if p.Protocol != strings.ToUpper(proto) || p.Port != int64(n) {
			t.Fatalf("%q gives %+v", s, p)
		}
	})
}
