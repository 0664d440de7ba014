// Package status holds the data sources that report what the tailnet shows:
// qtail_device, qtail_route_status (the conditions of a working route) and
// qtail_egress_status (whether an egress proxy may reach its target).
package status
