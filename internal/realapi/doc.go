// Package realapi is qtail's acceptance suite against a real Qovery
// organization and a real tailnet (make testacc-real): the quickstart flow
// and the exposure of a container, checked on the tailnet, then destroyed.
// Its flow is built only with the realapi build tag, so that make test never
// reaches a real API; the check of its settings runs in make test.
package realapi
