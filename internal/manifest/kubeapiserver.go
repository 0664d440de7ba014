package manifest

// SupportsKubeAPIServerProxyGroup reports whether the ProxyGroup CRD of the
// chart version accepts spec.type kube-apiserver (with
// spec.kubeAPIServer.mode); known is false when the version is outside the
// table.
func SupportsKubeAPIServerProxyGroup(version string) (supported, known bool) {
	s, ok := LookupOperatorChart(version)
	return s.KubeAPIServerProxyGroup, ok
}

// KubeAPIServerProxyGroupSince returns the oldest series of the version
// table whose ProxyGroup CRD accepts spec.type kube-apiserver; every later
// series accepts it too.
func KubeAPIServerProxyGroupSince() string {
	for _, s := range operatorChartSeries {
		if s.KubeAPIServerProxyGroup {
			return s.Series
		}
	}
	return ""
}
