package acctest

import "testing"

func TestInstallOperatorBringsUpTheDevice(t *testing.T) {
	t.Parallel()
	env := New(t)
	op := env.InstallOperator(t, "us-east-1")
	var tags []string
	for _, d := range env.Tailnet.Devices() {
		if d.Hostname == op.Hostname {
			tags = d.Tags
		}
	}
	if len(tags) != 1 || tags[0] != "tag:k8s-operator" {
		t.Fatalf("operator device tags = %v, want [tag:k8s-operator]", tags)
	}
	if ops := env.Cluster.Operators(); len(ops) != 1 || ops[0].ClusterID != op.ClusterID {
		t.Fatalf("cluster operators = %+v", ops)
	}
}
