package review

import (
	"reflect"
	"testing"
)

// TestPrincipals: what each principal gains and loses, the widest first
// and then by name; the targets touched count once each, those without an
// address through what users gain or lose on their tags.
func TestPrincipals(t *testing.T) {
	r := &Report{
		Access: []TargetAccess{
			{Kind: "service", Name: "web", IP: "100.64.0.10", Ports: []PortAccess{
				{Port: 443, Gained: []string{"bob@example.com", "group:ops", "*", "autogroup:member", "tag:ci", "Group:Eng"}, Lost: []string{"alice@example.com"}},
				{Port: 8443, Gained: []string{"bob@example.com"}},
			}},
			{Kind: "route", Name: "10.0.0.0/24", IP: "10.0.0.1", Ports: []PortAccess{{Port: 22, Before: []string{"group:ops"}, After: []string{"group:ops"}}}},
			{Kind: "device", Name: "web", IP: "100.64.0.11", Ports: []PortAccess{{Port: 22, Lost: []string{"alice@example.com"}}}},
			{Kind: "service", Name: "api", Tags: []string{"tag:api"}, Status: "added", Ports: []PortAccess{}},
			{Kind: "service", Name: "cache", Tags: []string{"tag:cache"}, Status: "added", Ports: []PortAccess{}},
			{Kind: "service", Name: "queue", Status: "added", Ports: []PortAccess{}},
		},
		Users: []UserAccess{
			{User: "bob@example.com", Gained: []string{"tag:api:tcp:443"}},
			{User: "carol@example.com", Lost: []string{"tag:other:tcp:1"}},
		},
	}
	got, counts := principals(r)
	want := []PrincipalAccess{
		{Principal: "*", Gains: []string{"`web` port 443"}},
		{Principal: "autogroup:member", Gains: []string{"`web` port 443"}},
		{Principal: "Group:Eng", Gains: []string{"`web` port 443"}},
		{Principal: "group:ops", Gains: []string{"`web` port 443"}},
		{Principal: "tag:ci", Gains: []string{"`web` port 443"}},
		{Principal: "alice@example.com", Loses: []string{"`web` port 22", "`web` port 443"}},
		{Principal: "bob@example.com", Gains: []string{"`tag:api:tcp:443`", "`web` port 443", "`web` port 8443"}},
		{Principal: "carol@example.com", Loses: []string{"`tag:other:tcp:1`"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("principals:\n got %+v\nwant %+v", got, want)
	}
	if want := (Counts{Targets: 3, Gaining: 6, Losing: 2}); counts != want {
		t.Errorf("counts %+v, want %+v", counts, want)
	}
}
