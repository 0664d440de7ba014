package tfx

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// checkOf returns the check function of a StringCheck validator.
func checkOf(t *testing.T, v validator.String) func(string) error {
	t.Helper()
	c, ok := v.(StringCheck)
	if !ok {
		t.Fatalf("%T is not a StringCheck", v)
	}
	return c.Check
}

func TestDeviceHostnameValidator(t *testing.T) {
	t.Parallel()
	check := checkOf(t, DeviceHostname())
	for _, ok := range []string{"tailscale-operator", "a", "op-1", strings.Repeat("a", 63)} {
		if err := check(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Bad_Name", "UPPER", "-lead", "trail-", "dot.ted", strings.Repeat("a", 64)} {
		if err := check(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestPositiveTimeoutValidator(t *testing.T) {
	t.Parallel()
	check := checkOf(t, PositiveTimeout())
	for _, ok := range []string{"1s", "30m", "1h", "not-a-duration"} {
		if err := check(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"0s", "-5m", "500ms"} {
		if err := check(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
